// dropped_barrier.hpp — a compiled program with one derived barrier taken
// out, for the tests that show a check sees it missing: the barrier its
// lane recipe opens node `n`'s list with (both sets: for a device with
// several queues and for one), with the layout changes it makes.
//
//   for (std::size_t n : ferrum::test::barrier_nodes(*program))
//     run(ferrum::test::without_barrier(*program, n));   // must be reported
#pragma once

#include "test_namespace.hpp"

#include "ferrum/binding/compiled_program.hpp"

#include <cstddef>
#include <memory>
#include <vector>

namespace ferrum::test {

// The barriers a wave on one queue (lavapipe's) opens lists by: its
// bucket's level order's, or plan order's where that is the same.
inline const std::vector<bool>& one_queue_set(const ferrum::lane_recipe& lane) {
  return lane.order.empty() ? lane.one_queue_barrier_before : lane.ordered_barrier_before;
}

// The nodes whose list the one-queue recipe of every bucket opens with a
// barrier or layout changes, past the first one submitted (whose barrier
// only changes layouts from what the previous wave left).
inline std::vector<std::size_t> barrier_nodes(const ferrum::compiled_program& program) {
  std::vector<std::size_t> nodes;
  for (std::size_t n = 0; n < program.node_count; ++n) {
    bool opens = false;
    for (const ferrum::compiled_bucket& b : program.buckets)
      opens = opens || (n != (b.lane.order.empty() ? 0 : b.lane.order.front()) &&
                        (one_queue_set(b.lane)[n] || !b.lane.node_transitions(n).empty()));
    if (opens) nodes.push_back(n);
  }
  return nodes;
}

// `program` with node `n`'s barrier and layout changes dropped in every bucket.
inline std::shared_ptr<const ferrum::compiled_program> without_barrier(const ferrum::compiled_program& program,
                                                                       std::size_t n) {
  auto changed = std::make_shared<ferrum::compiled_program>(program);
  for (ferrum::compiled_bucket& b : changed->buckets) {
    ferrum::lane_recipe& lane = b.lane;
    lane.barrier_before[n] = false;
    lane.one_queue_barrier_before[n] = false;
    if (!lane.ordered_barrier_before.empty()) lane.ordered_barrier_before[n] = false;
    if (n + 1 >= lane.transition_begin.size()) continue;
    const std::size_t first = lane.transition_begin[n];
    const std::size_t count = lane.transition_begin[n + 1] - first;
    lane.transitions.erase(lane.transitions.begin() + static_cast<std::ptrdiff_t>(first),
                           lane.transitions.begin() + static_cast<std::ptrdiff_t>(first + count));
    for (std::size_t k = n + 1; k < lane.transition_begin.size(); ++k) lane.transition_begin[k] -= count;
  }
  return changed;
}

}  // namespace ferrum::test
