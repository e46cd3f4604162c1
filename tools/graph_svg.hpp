// tools/graph_svg.hpp — draws a plan picture (plan_picture.hpp) as SVG with
// Graphviz (cgraph builds the graph, the dot layout places it, the core SVG
// renderer writes it): what `ferrum compile PLAN --graph FILE.svg` writes.
//
//   const ferrum::tools::graph_svg drawn = ferrum::tools::draw_graph_svg(picture);
//   if (!drawn.failure.empty()) report(drawn.failure);
//   else file << drawn.svg;
//
// One cluster per bucket. In it, every node of the plan (a box: its id and
// queue) with the dependency edges between them; a node whose list opens
// with a barrier is drawn red with a "barrier before" line. Every resource
// is a box of its own (id, pool and memory class, bytes, the nodes it lives
// from and to; persistent ones yellow, imported ones blue) with a dotted
// edge from each node that lists it, labelled with the access; resources
// that share bytes are joined by a dashed purple "aliases" line. The SVG
// elements carry classes for scripts and tests: `plan-node` (and `barrier`)
// on nodes, `resource` (and `persistent`, `imported`) on resources, and
// `dependency`, `use`, `alias` on edges, `bucket` on clusters; each node's
// `<title>` is its Graphviz name, `b<bucket>.n<node>` or
// `b<bucket>.r<resource>` (indices into the picture), and an edge's is
// `<from>-><to>`.
//
// Not thread-safe: Graphviz's error handler is one global, which this sets
// for the call. The `ferrum` command calls it once, on its main thread.
#pragma once

#include "plan_picture.hpp"

#include <string>

namespace ferrum::tools {

// A drawing, or why there is none.
struct graph_svg {
  // The SVG document; empty on failure.
  std::string svg;
  // What failed (Graphviz's own message where it gave one); empty on success.
  std::string failure;
};

// Lays `picture` out and renders it as SVG. Fails where Graphviz cannot lay
// out or render (no dot layout or SVG renderer plugin found: GVBINDIR).
[[nodiscard]] graph_svg draw_graph_svg(const plan_picture& picture);

}  // namespace ferrum::tools
