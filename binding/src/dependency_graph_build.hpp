// dependency_graph_build — the dependency graph's compile for callers that
// resolve node ids their own way (compile through its plan index, the program
// file loader through its checked node order), and what the graph does to
// live intervals.
#pragma once

#include "ferrum/binding/dependency_graph.hpp"
#include "ferrum/binding/wave_layout.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace ferrum::detail {

// The plan index of the node with this id, or nullopt.
using node_lookup = std::function<std::optional<std::size_t>(std::string_view)>;

[[nodiscard]] result<dependency_graph> compile_dependency_graph(const plan& p, const node_lookup& lookup);

// Extends each interval's end (intervals in plan indices, as live_intervals
// computes them) to the node before the first node k from which every later
// node runs after all of the resource's users in every order a device may
// run them: bytes are free for another resource only then. A node runs after
// an earlier node of its own queue kind (one queue keeps plan order, and the
// barrier sweep stands between any hazard on the shared bytes), and after a
// node of another kind only along a path of `after` (done_before). Unchanged
// for a sequential graph and for a plan on one queue kind. `uses`: the
// resource index of every node's resources, side by side in plan order
// (plan_index::all_uses; the program file's resolved uses).
void extend_for_dependencies(std::vector<live_interval>& intervals, const dependency_graph& graph, const plan& p,
                             std::span<const std::size_t> uses);

}  // namespace ferrum::detail
