// ferrum/scheduler/lane.hpp — one lane of a bucket: its memory, its binding,
// its command lists (docs/design.md, "Lane memory").
//
// A lane is made on the cold path by its lane pool from the bucket's lane
// recipe (compiled_bucket::lane): one arena holding every resource pool of
// the bucket as the compiler placed them, the layout bound to it, each
// node's resources resolved to ranges of it, and one command list per node
// granted exactly those ranges. It is made when its lane pool is made, or —
// with lane_making::when_needed — when a holder first needs it; a trim gives
// a free lane's memory back, and it is made afresh when needed again. A lane
// without memory (not made, or trimmed) keeps its `index`, `owner` and
// `hold`; everything else is empty (`arena` null). Waves and lane leases
// hold lanes; what a holder may touch is said per field.
#pragma once

#include "ferrum/binding/execution_binding.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <boost/system/error_code.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace ferrum {

class lane_pool;

// Where a scheduler runs each node: on the queue the plan names (a v2 plan's
// `queue`; the device maps it onto one of its queues), or every node on the
// compute queue in plan order, as for a v1 plan (for encoders that record
// compute work in every node).
enum class queue_placement : std::uint8_t { plan, compute_only };

// Where a scheduler's waves put barriers between their nodes: only where
// the compiler found a hazard (compiled_bucket::lane.barrier_before,
// ferrum/binding/barriers.hpp) — and before any command that reaches outside
// its node's resources — or before every node's first command, as ferrum did
// before it derived them (the benchmarks' baseline, and for encoders whose
// nodes share memory the plan does not declare).
enum class barrier_placement : std::uint8_t { derived, every_node };

// When a lane pool makes its lanes' memory: every lane when the pool is made
// (the cold path pays it all, and create fails on what the device refuses), or
// a lane when a holder waits and no free lane is left (made on the lane
// pool's executor while the holder waits; a failure fails that holder).
enum class lane_making : std::uint8_t { at_create, when_needed };

struct lane {
  std::uint32_t index = 0;
  // The lane pool the lane belongs to (and so its device: owner->device()).
  lane_pool* owner = nullptr;
  // Every resource pool of the bucket, resource pool d at
  // bucket().pool_offsets[d]; bucket().lane_bytes() bytes.
  std::unique_ptr<gpu::arena> arena;
  // What bind binds the layout to: the binding pool's bytes of the arena.
  lane_binding_target binding_target;
  std::vector<backing_slice> evidence;
  // The bucket's layout bound to this lane's arena and evidence, with every
  // check of execution_binding::bind, once, when the lane is made: the
  // arena never moves, so every wave on the lane uses this binding, and each
  // node's handle on its slot (`nodes[node]`, none for a node without one).
  std::optional<execution_binding> binding;
  std::vector<std::optional<node_binding>> nodes;
  // Per node, the resources it lists (the plan's order), all nodes' side by
  // side: node n's are [resource_begin[n], resource_begin[n + 1]).
  // `granted` holds their ranges, in the same places: what each node's list
  // is granted; `slots[n]` is node n's binding slot as a range (empty for a
  // node without one).
  std::vector<node_resource> resources;
  std::vector<gpu::arena_range> granted;
  std::vector<std::size_t> resource_begin;
  std::vector<gpu::arena_range> slots;
  // One list per node, in node order; `submit_lists` holds the same pointers
  // for queue::submit. The arena is guarded: each node's list reaches it only
  // through its node's ranges of `granted`, granted once here on the cold
  // path.
  std::vector<std::unique_ptr<gpu::command_list>> lists;
  std::vector<gpu::command_list*> submit_lists;
  // With GPU timestamps (scheduler_options::gpu_timestamps): slots 2n and
  // 2n + 1 are node n's begin and end on the GPU, written by its list.
  std::unique_ptr<gpu::timestamp_pool> timestamps;
  // The submitted value of the last submission into this lane (0: none), as
  // waves and leases record it; release() also reads the lists' own.
  std::uint64_t submitted_value = 0;
  // The id of the last wave whose submission went to the GPU on this lane
  // (0: none, or the lane's memory was made afresh since): the next wave's
  // encode_context::lane_previous_wave.
  std::uint64_t previous_wave = 0;
  // The lane's hand-out: it changes whenever the lane changes hands (handed
  // out, given back, quarantined, back in service). A holder keeps the
  // value it was handed the lane under, and a give-back names it, so that a
  // holder whose hand-out is over (it gave the lane back already) cannot
  // give back, quarantine or submit through the lane of a later holder.
  // Written under the lane pool's lock; a holder reads its own.
  std::atomic<std::uint64_t> hold{0};
  // The lists hold a complete recording that was submitted, which a
  // replaying scheduler submits again (scheduler_options::replay).
  bool recorded = false;

  // Node n's resources.
  [[nodiscard]] std::span<const node_resource> node_resources(std::size_t n) const noexcept {
    return std::span<const node_resource>(resources).subspan(resource_begin[n],
                                                             resource_begin[n + 1] - resource_begin[n]);
  }
};

// A queued request for a lane of a lane pool (intrusive: it lives in its
// waiter, e.g. a wave). `handed` is called once, outside the lane pool's
// lock, with the lane or an error (all_lanes_quarantined, the code the lane
// pool was closed with).
struct lane_waiter {
  using handed_fn = void (*)(lane_waiter* w, boost::system::error_code ec, lane* l) noexcept;
  explicit lane_waiter(handed_fn on_handed) noexcept : handed(on_handed) {}
  handed_fn handed;
  lane_waiter* next = nullptr;
};

// A lane pool's lanes by state, and its waiters.
struct lane_counts {
  // The lanes the pool may have (the program's lanes), and those that exist
  // (made, not trimmed); `bytes`: their memory.
  std::uint32_t capacity = 0;
  std::uint32_t lanes = 0;
  std::uint32_t making = 0;  // being made for a waiter
  std::uint64_t bytes = 0;
  std::uint32_t free = 0;
  std::uint32_t in_flight = 0;
  std::uint32_t quarantined = 0;
  std::size_t waiting = 0;
};

}  // namespace ferrum
