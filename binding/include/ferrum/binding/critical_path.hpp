// ferrum/binding/critical_path.hpp — what a second queue could gain: a
// bucket's data dependencies, and from per-node GPU times the frame's
// critical path and the most that running nodes off it on an async queue
// could save (docs/design.md, glossary "critical path").
//
//   const data_dependencies deps = ferrum::derive_data_dependencies(bucket.lane, program.dependencies);
//   const critical_path cp = ferrum::find_critical_path(deps, node_ns);  // node_ns[n]: node n's GPU time
//   // cp.critical_path_ns of cp.serial_ns; a second queue saves at most cp.async_bound_ns
#pragma once

#include "ferrum/binding/dependency_graph.hpp"
#include "ferrum/binding/lane_recipe.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ferrum {

// Per node (plan order), the earlier nodes it must wait for: those its
// `after` names, and those whose uses of lane bytes conflict with its own —
// overlapping bytes, one of the two writing (an image's bytes are its place
// in the bucket's image window, so two uses of one image conflict where one
// writes it; a use whose node changes the image's layout there
// (lane_recipe::node_transitions) counts as a write; uses of disjoint mips
// or layers of one image conflict too, as the barriers take them). Of the
// conflicting pairs, the direct ones are listed: per byte, a use depends on
// the last write before it, and a write also on the reads since that
// write. Every other conflicting pair is ordered by a path of listed edges
// (a read after an overwritten write waits for the overwrite, which waited
// for the first write or for its readers), so the longest path is the one
// over every conflicting pair. Nodes on different queues or the same are alike here:
// this is what the data needs, not how a device orders it. A v1 plan's
// nodes each run after the one before (dependency_graph), a chain.
struct data_dependencies {
  // Node n's are on[begin[n] .. begin[n + 1]), ascending, each below n.
  std::vector<std::size_t> begin{0};
  std::vector<std::size_t> on;

  [[nodiscard]] std::size_t size() const noexcept { return begin.size() - 1; }
  [[nodiscard]] std::span<const std::size_t> of(std::size_t n) const noexcept {
    return std::span<const std::size_t>(on).subspan(begin[n], begin[n + 1] - begin[n]);
  }
  // Whether node `later` depends on node `earlier` directly.
  [[nodiscard]] bool has(std::size_t earlier, std::size_t later) const noexcept;
};

// The data dependencies of a bucket's nodes: `graph`'s `after` edges and the
// conflicts of `recipe`'s uses (one sweep in plan order over runs of bytes).
// O(n + u log u + e) in nodes, uses and the edges listed; allocates the
// result and a map of byte runs.
[[nodiscard]] data_dependencies derive_data_dependencies(const lane_recipe& recipe, const dependency_graph& graph);

// A frame's GPU time against its dependencies, in nanoseconds.
//
// `serial_ns`: the nodes' durations summed — what one queue takes running
// them back to back in plan order. `critical_path_ns`: the longest path of
// the dependencies weighted by the durations, `path` its nodes (plan
// indices, first to last; empty without nodes). `async_bound_ns`: the most
// a second queue could save, serial_ns - max(critical_path_ns,
// ceil(serial_ns / 2)).
//
// Why it is an upper bound: on two queues (the main one and an async one),
// any order the dependencies allow runs the path's nodes one after another,
// so the frame takes at least critical_path_ns; and the two queues share
// serial_ns of work, so one of them runs at least half of it: the frame
// takes at least ceil(serial_ns / 2) (whole nanoseconds). Against one queue
// running back to back (serial_ns), moving nodes off the main queue thus
// saves at most serial_ns - max(both). It assumes a node takes as long on
// either queue and beside other work; nodes sharing the GPU's units take
// longer, and a device that already overlaps nodes between barriers on one
// queue runs below serial_ns: both only lower the real gain. It is 0 where
// the path is the whole frame (a chain, a v1 plan).
struct critical_path {
  std::uint64_t serial_ns = 0;
  std::uint64_t critical_path_ns = 0;
  std::vector<std::size_t> path;
  std::uint64_t async_bound_ns = 0;
};

// The critical path of `deps` with node n taking durations_ns[n] (a node
// past the span's end takes 0). Among paths as long, it ends at the latest
// node, and steps back to the earliest. O(n + e).
[[nodiscard]] critical_path find_critical_path(const data_dependencies& deps,
                                               std::span<const std::uint64_t> durations_ns);

// serial_ns - max(critical_path_ns, ceil(serial_ns / 2)), 0 where the path
// is longer than serial_ns (it never is for a path of the same durations).
[[nodiscard]] constexpr std::uint64_t async_bound(std::uint64_t serial_ns, std::uint64_t critical_path_ns) noexcept {
  const std::uint64_t half = serial_ns / 2 + serial_ns % 2;
  const std::uint64_t floor = critical_path_ns > half ? critical_path_ns : half;
  return serial_ns > floor ? serial_ns - floor : 0;
}

}  // namespace ferrum
