// ferrum/binding/lane_recipe.hpp — what a lane of a compiled bucket is made
// from, so that a scheduler (or a lane pool) needs the compiled program and a
// device, and never the plan again.
//
// Made by compile (and by load_compiled_program, which has the plan), once per
// bucket: each node's resources resolved to their bytes in a lane (the
// plan's order per node, nodes side by side), and the binding domain's backing
// slices, which every lane's execution_binding::bind is checked against. Queue placement is the program's dependency
// graph (compiled_program::dependencies, a node's queue).
#pragma once

#include "ferrum/binding/execution_binding.hpp"
#include "ferrum/binding/plan.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace ferrum {

// One resource a node lists, placed in a lane of its bucket.
struct lane_use {
  std::size_t domain = 0;  // its pool's domain (program order)
  std::size_t member = 0;  // its place among the domain's members: its projection
  allocation_kind kind = allocation_kind::workspace;
  allocation_lifetime lifetime = allocation_lifetime::invocation;
  std::uint64_t offset = 0;  // in the lane: its pool's offset plus its projection's
  std::uint64_t size = 0;
  resource_access access = resource_access::read_write;  // how the node uses it
};

// One resource of an imported pool (memory class `imported`): a buffer of
// the engine's that each wave names (wave_request::imports), never
// allocated by a lane.
struct lane_import {
  resource_id resource;
  std::size_t domain = 0;  // as lane_use's
  std::size_t member = 0;
  std::uint64_t size = 0;  // the bytes the buffer must have in this bucket
  bool written = false;    // whether a node writes it (any access but read)
};

struct lane_recipe {
  static constexpr std::size_t no_domain = std::numeric_limits<std::size_t>::max();

  // Node n's resources are uses[use_begin[n] .. use_begin[n + 1]).
  std::vector<lane_use> uses;
  std::vector<std::size_t> use_begin;
  // The domain whose arena the program binding layout covers (no_domain
  // without binding resources), and where each of its resources lives: the
  // backing slices bind checks, recorded from the plan.
  std::size_t binding_domain = no_domain;
  std::vector<backing_slice> backing;
  // Per node: whether its list opens with a barrier (derive_barriers,
  // ferrum/binding/barriers.hpp), and how many do in one wave; right on
  // every device. The same for a device that runs every node on one queue
  // (barrier_queues::one), which the scheduler uses there.
  std::vector<bool> barrier_before;
  std::vector<bool> one_queue_barrier_before;
  // The imported resources, in program order (domain, then member).
  std::vector<lane_import> imports;

  [[nodiscard]] std::size_t barriers_per_wave() const noexcept {
    return static_cast<std::size_t>(std::count(barrier_before.begin(), barrier_before.end(), true));
  }

  [[nodiscard]] std::span<const lane_use> node_uses(std::size_t n) const noexcept {
    return std::span<const lane_use>(uses).subspan(use_begin[n], use_begin[n + 1] - use_begin[n]);
  }
};

}  // namespace ferrum
