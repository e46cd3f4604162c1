// ferrum/binding/capacity_layout.hpp — per bucket and pool: where each
// projection lives in the pool's arena, and how big the arena is.
//
// Conservative pools keep every member live at once: projections never
// overlap, and are packed in order of decreasing alignment (ties by resource
// id), which leaves no padding — capacities are multiples of their power-of-two
// alignments — so a binding arena is covered exactly.
//
// Interval pools let members whose live intervals do not overlap share bytes:
// a sweep over the nodes hands out and takes back ranges of the arena
// (best fit, coalescing). Where that packs worse than the conservative layout
// (alignment padding can), the conservative layout is used instead, so
// physical_size_bytes <= unaliased_size_bytes always.
#pragma once

#include "ferrum/binding/wave_layout.hpp"

#include <cstdint>
#include <vector>

namespace ferrum {

// One resource's bytes in the arena.
struct projection {
  resource_id resource;
  std::uint64_t offset = 0;
  std::uint64_t capacity = 0;
  std::uint64_t alignment = 1;
  friend bool operator==(const projection&, const projection&) = default;
};

struct capacity_layout {
  pool_id pool;
  liveness_mode liveness = liveness_mode::conservative;
  // One per member, in the order of pool_domain::members (resource id order).
  std::vector<projection> projections;
  // The arena's size, and what it would be with no aliasing at all.
  std::uint64_t physical_size_bytes = 0;
  std::uint64_t unaliased_size_bytes = 0;
  friend bool operator==(const capacity_layout&, const capacity_layout&) = default;
};

// Lays out one pool for bucket `bucket_index` of a validated plan and checks
// the arena against the bucket's budget `budget_index` (which names the pool).
// Errors: those of resolve_demand (path: the resource), size_overflow,
// workspace_budget_exceeded (path: the budget). `unused`, per plan resource
// (empty: none): those that take no bytes, only culled nodes using them
// (ferrum/binding/culling.hpp): their projections have capacity 0.
[[nodiscard]] result<capacity_layout> compile_capacity_layout(const plan& p, std::size_t bucket_index,
                                                              const pool_domain& domain,
                                                              const wave_domain_layout& layout,
                                                              std::size_t budget_index,
                                                              const std::vector<bool>& unused = {});

}  // namespace ferrum
