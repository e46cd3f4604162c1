// interval_packing.hpp (private) — packing members of an interval pool so
// that only members whose live intervals overlap keep apart. Shared by the
// pools' capacity layouts and by a lane's image memory (place_lane_images).
#pragma once

#include "ferrum/binding/capacity_layout.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace ferrum::detail {

// Sets each projection's offset (its capacity and alignment given;
// `intervals` parallel to it): a sweep over the nodes, freeing a member's
// range after its last node, best fit; the arena grows at its top when no
// free range fits. The arena's size; nullopt if it would overflow u64.
[[nodiscard]] std::optional<std::uint64_t> pack_interval(std::vector<projection>& projections,
                                                         std::span<const live_interval> intervals);

}  // namespace ferrum::detail
