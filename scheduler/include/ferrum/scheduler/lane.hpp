// ferrum/scheduler/lane.hpp — one lane of a bucket: its memory, its binding,
// its command lists (docs/design.md, "Lane memory").
//
// A lane is made on the cold path by its lane pool from the bucket's lane
// recipe (compiled_bucket::lane): an arena per memory class holding the
// bucket's resource pools of that class as the compiler placed them, the
// layout bound to the upload arena, each node's resources resolved to
// ranges of them, one command list per node granted exactly those ranges,
// and the staging lists a staged arena needs. It is made when its lane pool is made, or —
// with lane_making::when_needed — when a holder first needs it; a trim gives
// a free lane's memory back, and it is made afresh when needed again. A lane
// without memory (not made, or trimmed) keeps its `index`, `owner` and
// `hold`; everything else is empty (made() is false). Waves and lane leases
// hold lanes; what a holder may touch is said per field.
#pragma once

#include "ferrum/binding/execution_binding.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/scheduler_options.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <boost/system/error_code.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace ferrum {

class lane_pool;

struct lane {
  std::uint32_t index = 0;
  // The lane pool the lane belongs to (and so its device: owner->device()).
  lane_pool* owner = nullptr;
  // The lane's memory: per memory class (indexed by index_of), one arena
  // of the bucket's window of that class (compiled_bucket::windows), null
  // for a class the bucket has no pool of. Resource pool d lies at lane
  // offset bucket().pool_offsets[d], in the arena of its class at that
  // offset less the window's begin (`range`). Each arena is made of its
  // class (gpu::device::create_arena), so device memory has no host bytes
  // and upload or readback memory may be staged. Guarded.
  std::array<std::unique_ptr<gpu::arena>, memory_class_count> memory;
  std::array<std::uint64_t, memory_class_count> window_begin{};
  // Each arena of `memory` whole, in window order: what the staging lists
  // are granted (and what a list needs to reach all of the lane).
  std::vector<gpu::arena_range> windows;
  // What bind binds the layout to: the binding pool's bytes of the upload
  // arena (its host bytes; staged, they reach the GPU by the stage-in list).
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
  // `slots[n]` is node n's binding slot as a range (empty for a node
  // without one).
  std::vector<node_resource> resources;
  std::vector<std::size_t> resource_begin;
  std::vector<gpu::arena_range> slots;
  // What each node's list is granted, node n's at [grant_begin[n],
  // grant_begin[n + 1]): its resources' ranges (to write), then an empty
  // range of each of the lane's arenas (to read anywhere in the lane, as a
  // later node reads an earlier one's output).
  std::vector<gpu::arena_range> granted;
  std::vector<std::size_t> grant_begin;
  // One list per node, in node order; `submit_lists` holds the same pointers
  // for queue::submit. The arenas are guarded: each node's list reaches them
  // only through its node's grants, granted once here on the cold path.
  std::vector<std::unique_ptr<gpu::command_list>> lists;
  std::vector<gpu::command_list*> submit_lists;
  // The staging copies (docs/design.md, "Memory classes"), recorded once
  // when the lane is made and submitted again by every wave: `stage_in`
  // copies a staged upload arena's host bytes to the GPU's, then a barrier;
  // `stage_out` opens with a barrier, then copies a staged readback arena's
  // GPU memory to its host bytes. Null where the lane has no such arena.
  // `all_lists` holds, in the order one submission runs them, stage_in,
  // every node's list and stage_out (those there are): what a lane lease
  // submits.
  std::unique_ptr<gpu::command_list> stage_in;
  std::unique_ptr<gpu::command_list> stage_out;
  std::vector<gpu::command_list*> all_lists;
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

  // Whether the lane has memory (made, not trimmed).
  [[nodiscard]] bool made() const noexcept { return !windows.empty(); }
  // The arena of class `c` (null: the bucket has none of it).
  [[nodiscard]] gpu::arena* arena_of(memory_class c) const noexcept { return memory[index_of(c)].get(); }
  // Lane bytes [offset, offset + size) as a range of the arena holding
  // them; an empty range (no arena) when no one arena holds them all.
  [[nodiscard]] gpu::arena_range range(std::uint64_t offset, std::uint64_t size) const noexcept {
    for (std::size_t c = 0; c < memory.size(); ++c) {
      if (memory[c] == nullptr || offset < window_begin[c]) continue;
      const std::uint64_t at = offset - window_begin[c];
      if (at <= memory[c]->size() && size <= memory[c]->size() - at)
        return memory[c]->range(static_cast<std::size_t>(at), static_cast<std::size_t>(size));
    }
    return {};
  }

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
