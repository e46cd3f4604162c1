// submission_plan (private) — how a wave's nodes reach the device's queues.
//
// Nodes run on the queue of their kind (compute_dependency_graph's queue).
// Consecutive nodes (plan order) on one device queue form a *segment*,
// submitted as one; a queue runs its segments in order. A segment waits,
// through the other queues' timelines, for the latest segment of each other
// queue holding one of its nodes' dependencies — plan order is topological,
// so that segment was submitted before it. A wave that used a queue other
// than the compute queue ends with a *join*: an empty submission on the
// compute queue waiting for every other queue's last segment, whose value is
// the wave's submitted value. The lane is released only once it is reached,
// so lane pools, quarantine and fence timeouts keep watching one timeline.
// On a device with one queue (lavapipe) the whole wave is one segment, as
// for a v1 plan.
//
// A culled node (compiled_program::culling) is submitted nowhere: it splits
// no segment, its list is left out of the one its place falls in, and a
// node after it waits for what it would have waited for.
//
// An earlier wave that used the same imported buffer (wave_imports.hpp) is
// waited for as the engine's waits are: on the first segment, or the gate.
//
// The engine's semaphores (wave_request::wait, ::signal): the wave's last
// submission — the join, or the last segment when there is none — signals
// them. The waits go on the first segment when every segment runs on one
// queue; otherwise on a *gate*, a compute submission before the first
// segment, whose value the first segment of each queue waits for (a
// semaphore wait holds back only its own submission's commands).
//
// A lane with staged memory (lane_contents::stage_in, ::stage_out) adds its staging
// lists: stage-in is the gate (with the engine's waits), stage-out the join
// (signalling the engine's semaphores), so that the copies run on the
// compute queue before any segment and after every one.
//
// Made once per scheduler on the cold path; a wave keeps its segment values
// and waits in memory reserved when the wave is made.
#pragma once

#include "ferrum/binding/dependency_graph.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/scheduler_options.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace ferrum::detail {

// Whether `device` runs the transfer kind on a queue of its own, apart from
// both compute kinds': the queues a bucket's per-kind barriers
// (lane_recipe::barrier_before) are right for, which count compute and
// async compute as one queue, transfer as another.
[[nodiscard]] inline bool transfer_alone(const gpu::device& device) noexcept {
  const gpu::queue* transfer = &device.queue(queue_kind::transfer);
  return transfer != &device.queue(queue_kind::compute) && transfer != &device.queue(queue_kind::async_compute);
}

// The kind of queue node `n` runs on under `placement` on `device`; its
// command lists are made for it (lane_pool) and submitted to it
// (submission_plan). An async-compute node runs on the compute queue where
// the device's transfer queue is not a queue of its own (a GPU with one
// queue, or a transfer queue shared with compute while async compute has
// its own): the compiled barriers are right for one queue, or for transfer
// apart from the compute kinds, and nothing between.
[[nodiscard]] inline queue_kind placed_queue(const dependency_graph& graph, std::size_t n, queue_placement placement,
                                             const gpu::device& device) noexcept {
  if (placement != queue_placement::plan) return queue_kind::compute;
  const queue_kind kind = graph.queue(n);
  return kind == queue_kind::async_compute && !transfer_alone(device) ? queue_kind::compute : kind;
}

// A lane's staging lists (lane_contents::stage_in, ::stage_out; null: none).
struct staging_lists {
  gpu::command_list* in = nullptr;
  gpu::command_list* out = nullptr;
};

class submission_plan {
 public:
  static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

  struct segment {
    gpu::queue* queue;
    std::size_t begin;  // plan indices [begin, end)
    std::size_t end;
    // Per distinct queue of the device (queue::index()): the segment of that
    // queue this one waits for, or none.
    std::vector<std::size_t> waits_on;
    // Per distinct queue: its last segment up to this one, or none (what a
    // join after this segment waits for).
    std::vector<std::size_t> latest;
  };

  // `culled`: per node, whether it is culled (empty: none is).
  submission_plan(const dependency_graph& graph, gpu::device& device, queue_placement placement,
                  const std::vector<bool>& culled = {});

  // Whether every segment runs on one device queue (lavapipe, an adopted
  // device, queue_placement::compute_only): the wave's lists may then use
  // the one-queue barriers (lane_recipe::one_queue_barrier_before).
  [[nodiscard]] bool one_queue() const noexcept { return one_queue_; }

  // Per node: the kind its device queue is named by (queue::kind()).
  [[nodiscard]] std::span<const queue_kind> node_queues() const noexcept { return node_queues_; }

  // What a wave keeps per submission: each segment's value, and the waits of
  // the one being submitted (at most one per queue).
  struct values {
    std::vector<std::uint64_t> submitted;
    std::vector<gpu::queue_wait> waits;
    // A segment's lists less its culled nodes' (reserved: one per node).
    std::vector<gpu::command_list*> lists;
  };
  [[nodiscard]] values make_values() const;

  // Submits `lists` (node order, one per node) segment by segment, then the
  // join, recording each value in `v`. Returns the wave's submitted value on
  // the compute queue. On an error, `submitted_any` says whether some
  // segment had been submitted before it (the join is then still attempted,
  // and `covered` holds its value, else 0), so the caller keeps the lane
  // until that value.
  //
  // `sync`'s waits and signals are submitted with the segments; `waited`
  // and `signalled` say whether they were (on an error, what is left for
  // the caller to pass on).
  struct outcome {
    result<std::uint64_t> value;
    bool submitted_any = false;
    std::uint64_t covered = 0;
    bool waited = false;
    bool signalled = false;
  };
  //
  // `staging`: the lane's staging lists (null: none). With a stage-in list,
  // a failure after the gate was submitted counts as submitted_any, and
  // `covered` is at least the gate's value.
  //
  // `after`: a value of the compute queue (submitted; 0: none) that no
  // command of the wave may start before — an earlier wave using the same
  // imported buffer. The first segment waits for it where it is the only
  // first one on a queue, else a gate does.
  //
  // `live_in_order`: `lists` holds instead the live nodes' lists alone, in
  // the order to submit them (lane_recipe::order, held_lane::ordered_lists),
  // which only a wave on one queue — one segment — may do.
  [[nodiscard]] outcome submit(std::span<gpu::command_list* const> lists, values& v,
                               const gpu::external_sync& sync = {}, staging_lists staging = {}, std::uint64_t after = 0,
                               bool live_in_order = false) const noexcept;

 private:
  // The join after segment `last`: a compute submission of `out` (when not
  // null) waiting for each other queue's latest segment up to it,
  // signalling `signals`.
  [[nodiscard]] result<std::uint64_t> join(values& v, const segment& last, std::span<const gpu::semaphore_op> signals,
                                           gpu::command_list* out) const noexcept;

  gpu::device* device_;
  std::vector<segment> segments_;
  std::vector<queue_kind> node_queues_;
  // Per node: culled (empty: none is); per segment: whether it holds one.
  std::vector<bool> culled_;
  std::vector<bool> holds_culled_;
  bool joins_ = false;
  // Per segment: whether it is the first on its queue (waits for a gate).
  std::vector<bool> first_on_queue_;
  bool one_queue_ = true;
};

}  // namespace ferrum::detail
