// queue_order — the order across queues a plan must state (docs/design.md,
// "Order across queues"). Nodes on one queue run in plan order, with the
// barriers the compiler derives between them; nodes on two queues run in
// either order unless a path of `after` joins them. So where two nodes on
// different queues touch one resource and one of them writes it (an image:
// or needs it in another layout), the plan must say which runs first:
// otherwise the compiler's plan-order rules (image layouts, first writes,
// barriers) would describe an order the GPU need not keep.
#pragma once

#include "ferrum/binding/dependency_graph.hpp"
#include "ferrum/binding/plan.hpp"

#include <cstddef>
#include <span>

namespace ferrum::detail {

// unordered_hazard, at `/nodes/<n>/resources/<k>` (the later node's use),
// naming both nodes, their queues and the resource, for the first such pair
// in plan order. `uses`: the resource index of every node's resources, side
// by side in plan order (plan_index::all_uses; the program file's uses).
// O(u) when every node runs on one queue; otherwise one walk back along
// `after` per node with such a pair to check.
[[nodiscard]] result<void> check_queue_order(const plan& p, std::span<const std::size_t> uses,
                                             const dependency_graph& graph);

}  // namespace ferrum::detail
