// node_barriers.hpp (private) — which of a wave's node lists open with a
// barrier, and its scope: the ones the compiler derived for its bucket
// (docs/design.md, "Barriers"), or every one over every stage. The encoding step opens the lists so; the trace
// marks the GPU spans so.
#pragma once

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/scheduler/scheduler_options.hpp"

#include <cstddef>
#include <vector>

namespace ferrum::detail {

struct node_barriers {
  // Per node, whether its list opens with one (null: none derived), and its
  // scope.
  const std::vector<bool>* before = nullptr;
  const std::vector<barrier_scope>* scopes = nullptr;
  // The split barriers' events, where the wave uses them (null: none).
  const split_barriers* split = nullptr;
  bool every_node = false;
  bool all_stages = false;

  // The barriers of a wave in `bucket` (null: it never had one): the
  // bucket's, for one queue where the device runs the whole wave on one.
  // `reordered`: the wave submits its nodes in the bucket's level order
  // (reordered(), below), which has barriers of its own.
  // `split`: scheduler_options::split_barriers, which a wave on one queue
  // with derived barriers uses.
  [[nodiscard]] static node_barriers of(const compiled_bucket* bucket, bool one_queue, bool reordered,
                                        barrier_placement placement, bool split = false) noexcept {
    node_barriers b;
    b.every_node = placement == barrier_placement::every_node;
    b.all_stages = placement != barrier_placement::derived;
    if (bucket == nullptr) return b;
    const lane_recipe& lane = bucket->lane;
    if (reordered) {
      b.before = &lane.ordered_barrier_before;
      b.scopes = &lane.ordered_barrier_scopes;
    } else {
      b.before = one_queue ? &lane.one_queue_barrier_before : &lane.barrier_before;
      b.scopes = one_queue ? &lane.one_queue_barrier_scopes : &lane.barrier_scopes;
    }
    if (split && one_queue && placement == barrier_placement::derived) {
      b.split = reordered ? &lane.ordered_split : &lane.one_queue_split;
      b.before = &b.split->barrier_before;
      b.scopes = &b.split->barrier_scopes;
    }
    return b;
  }

  // Whether a wave of `bucket` submits its nodes in the bucket's level
  // order: on one queue, where the order differs from the plan's, unless
  // the scheduler keeps plan order.
  [[nodiscard]] static bool reordered(const compiled_bucket* bucket, bool one_queue, node_order order) noexcept {
    return bucket != nullptr && one_queue && order == node_order::levels && !bucket->lane.order.empty();
  }

  // The scope of the barrier node `n`'s list opens with (where opens(n)):
  // the derived one, or one over every stage.
  [[nodiscard]] barrier_scope scope(std::size_t n) const noexcept {
    if (all_stages || scopes == nullptr || n >= scopes->size() || (before != nullptr && n >= before->size()))
      return barrier_scope::full();
    return (*scopes)[n];
  }

  // Whether node `n`'s list opens with a barrier; a node the compiler
  // derived none for (a program made by hand) opens with one.
  [[nodiscard]] bool opens(std::size_t n) const noexcept {
    return every_node || before == nullptr || n >= before->size() || (*before)[n];
  }
};

}  // namespace ferrum::detail
