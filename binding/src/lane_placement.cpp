#include "lane_placement.hpp"

#include "ferrum/binding/demand.hpp"

#include <algorithm>
#include <numeric>

namespace ferrum::detail {
namespace {

// The lane's size with each arena `size_of(layout)` bytes, placed in
// `order`; `offsets` (when not null) gets each arena's offset. nullopt on u64
// overflow.
template <class SizeOf>
std::optional<std::uint64_t> place(const std::vector<std::optional<capacity_layout>>& layouts,
                                   std::span<const std::size_t> order, SizeOf size_of,
                                   std::vector<std::uint64_t>* offsets) {
  std::uint64_t end = 0;
  for (const std::size_t d : order) {
    const capacity_layout& layout = *layouts[d];
    std::uint64_t alignment = 4;
    for (const projection& p : layout.projections) alignment = std::max(alignment, p.alignment);
    const std::optional<std::uint64_t> offset = checked_align_up(end, alignment);
    const std::optional<std::uint64_t> next = offset ? checked_add(*offset, size_of(layout)) : std::nullopt;
    if (!next) return std::nullopt;
    if (offsets != nullptr) (*offsets)[d] = *offset;
    end = *next;
  }
  return checked_align_up(std::max<std::uint64_t>(end, 4), 4);
}

}  // namespace

result<lane_placement> place_pools(const bucket_id& bucket, const std::vector<std::optional<capacity_layout>>& layouts,
                                   std::span<const std::size_t> order) {
  lane_placement placement;
  placement.offsets.resize(layouts.size());
  const auto size = place(
      layouts, order, [](const capacity_layout& l) { return l.physical_size_bytes; }, &placement.offsets);
  const auto unaliased = place(
      layouts, order, [](const capacity_layout& l) { return l.unaliased_size_bytes; }, nullptr);
  if (!size || !unaliased)
    return make_error(errc::size_overflow, "the lane memory of bucket " + quote_text(bucket.str()), "/buckets");
  placement.size = *size;
  placement.unaliased_size = *unaliased;
  return placement;
}

std::vector<std::size_t> placement_order(const plan& p, const std::vector<pool_domain>& domains) {
  std::vector<std::size_t> order(domains.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  const auto binds = [&](std::size_t d) {
    return std::any_of(domains[d].members.begin(), domains[d].members.end(),
                       [&](std::size_t r) { return p.resources[r].kind == allocation_kind::binding; });
  };
  std::stable_partition(order.begin(), order.end(), binds);
  return order;
}

}  // namespace ferrum::detail
