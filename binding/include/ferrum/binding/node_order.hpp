// ferrum/binding/node_order.hpp — the order a wave submits its nodes in:
// by dependency level, as Godot's rendering-device graph does, so that the
// nodes between two barriers are as many as the plan allows and one
// barrier serves each level (docs/design.md, "Barriers").
//
// A node's level is one more than the highest level of the nodes it must
// follow: those it runs `after`, and the earlier nodes (plan order) whose
// uses conflict with its own — the same lane bytes, one of them writing; the
// same image, one of them writing it or changing its layout. And the uses
// of an image a lane may place in memory another image of its pool used
// (by their intervals in plan order) come after every use of the images
// whose interval ended before. Nodes are then
// submitted level by level, in plan order within a level: every pair of
// conflicting uses keeps its order, so the lane's memory, its aliasing and
// the image transitions derived in plan order stay right, and the new
// order costs no memory and saves none.
//
//   std::vector<std::size_t> order = ferrum::level_order(bucket.lane, program.dependencies);
//   // empty: plan order already is level order (or the plan uses the transfer queue)
#pragma once

#include "ferrum/binding/dependency_graph.hpp"
#include "ferrum/binding/lane_recipe.hpp"

#include <cstddef>
#include <vector>

namespace ferrum {

// The nodes (plan indices) in level order, or empty where that is plan
// order, and for a plan with transfer nodes (its segments across queues
// keep plan order; docs/design.md, "Barriers"). `levels`, when given, gets
// each node's level; `level_begin`, where each level begins in the order
// (and its size last). O(u log u) in the recipe's uses.
[[nodiscard]] std::vector<std::size_t> level_order(const lane_recipe& recipe, const dependency_graph& graph,
                                                   std::vector<std::size_t>* levels = nullptr,
                                                   std::vector<std::size_t>* level_begin = nullptr);

}  // namespace ferrum
