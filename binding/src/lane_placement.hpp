// lane_placement — where each pool's arena lies in a bucket's lane, and the
// lane's size (docs/design.md, "Lane memory"). Shared by compile and by
// load_compiled_program, which recomputes it to check a program file.
//
//   const auto order = ferrum::detail::placement_order(plan, domains);
//   auto placement = ferrum::detail::place_pools(bucket, layouts, order);
#pragma once

#include "ferrum/binding/capacity_layout.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace ferrum::detail {

// A bucket's lane memory: its pools' arenas side by side in one buffer, the
// binding pool first (so that binding slot offsets are offsets in the lane),
// then the others in program order; each at a multiple of its largest
// alignment and of 4 (kernels address whole words); the lane rounded up to
// whole words, at least one.
struct lane_placement {
  std::vector<std::uint64_t> offsets;  // per domain, program order
  std::uint64_t size = 0;
  std::uint64_t unaliased_size = 0;
};

// Places the arenas of `layouts` (one per domain, program order) in `order`.
// Error: size_overflow, naming the bucket.
[[nodiscard]] result<lane_placement> place_pools(const bucket_id& bucket,
                                                 const std::vector<std::optional<capacity_layout>>& layouts,
                                                 std::span<const std::size_t> order);

// The order pools are placed in a lane: the binding pool (the one holding
// binding resources) first, then the others in program order.
[[nodiscard]] std::vector<std::size_t> placement_order(const plan& p, const std::vector<pool_domain>& domains);

}  // namespace ferrum::detail
