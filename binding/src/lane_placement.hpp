// lane_placement — where each pool's arena lies in a bucket's lane, and the
// lane's size (docs/design.md, "Lane memory"). Shared by compile and by
// load_compiled_program, which recomputes it to check a program file.
//
//   const auto order = ferrum::detail::placement_order(plan, domains);
//   auto placement = ferrum::detail::place_pools(bucket, layouts, order);
#pragma once

#include "ferrum/binding/capacity_layout.hpp"
#include "ferrum/binding/compiled_program.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace ferrum::detail {

// A bucket's lane memory: one address space, its pools' arenas side by
// side in a window per memory class — upload first, with the binding pool at
// 0 (so that binding slot offsets are offsets in the lane), then device,
// then readback; each window at a multiple of the largest alignment in it,
// each arena at a multiple of its largest alignment and of 4 (kernels
// address whole words), each window ending on a whole word; the lane rounded
// up to whole words, at least one. The image pools come last, in a window
// of their own that the lane's buffer does not hold (compiled_bucket::
// image_window).
struct lane_placement {
  std::vector<std::uint64_t> offsets;  // per domain, program order
  std::uint64_t size = 0;
  std::uint64_t unaliased_size = 0;
  std::array<memory_window, memory_class_count> windows{};
  memory_window images;
  std::uint64_t unaliased_image_bytes = 0;
};

// Places the arenas of `layouts` (one per domain of `domains`, program
// order) in `order` (placement_order). Error: size_overflow, naming the
// bucket.
[[nodiscard]] result<lane_placement> place_pools(const bucket_id& bucket, std::span<const pool_domain> domains,
                                                 const std::vector<std::optional<capacity_layout>>& layouts,
                                                 std::span<const std::size_t> order);

// The order pools are placed in a lane: by class (upload, device,
// readback, imported), the binding pool (the one holding binding resources)
// first, then in program order; the image pools last.
[[nodiscard]] std::vector<std::size_t> placement_order(const plan& p, const std::vector<pool_domain>& domains);

}  // namespace ferrum::detail
