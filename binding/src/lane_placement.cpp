#include "lane_placement.hpp"

#include "ferrum/binding/demand.hpp"

#include <algorithm>
#include <numeric>

namespace ferrum::detail {
namespace {

// Whether a pool lies in the image window: images a lane makes. Imported
// images are the engine's: in the imported window, with its buffers.
bool in_image_window(const pool_domain& d) { return d.images && d.memory != memory_class::imported; }

std::uint64_t alignment_of(const capacity_layout& layout) {
  std::uint64_t alignment = 4;
  for (const projection& p : layout.projections) alignment = std::max(alignment, p.alignment);
  return alignment;
}

// The lane's size and its image window with each arena `size_of(layout)`
// bytes, placed in `order`, a window per class and one for the images;
// `placement` (when not null) gets each arena's offset and each window.
// nullopt on u64 overflow.
struct placed {
  std::uint64_t lane_size = 0;
  memory_window images;
};
template <class SizeOf>
std::optional<placed> place(std::span<const pool_domain> domains,
                            const std::vector<std::optional<capacity_layout>>& layouts,
                            std::span<const std::size_t> order, SizeOf size_of, lane_placement* placement) {
  std::uint64_t end = 0;
  // Where the last window ferrum allocates as one buffer ends: the imported
  // window and the image window come last and take none of it (the engine's
  // buffers; images a lane places in memory of their own). Their offsets
  // keep their ranges apart for the barrier sweep.
  std::uint64_t allocated_end = 0;
  memory_window images;
  const auto same_window = [&](std::size_t a, std::size_t b) {
    return domains[a].memory == domains[b].memory && in_image_window(domains[a]) == in_image_window(domains[b]);
  };
  for (std::size_t i = 0; i < order.size();) {
    // The pools of one window come together in `order`: the window starts at
    // a multiple of the largest alignment among them.
    const memory_class cls = domains[order[i]].memory;
    const bool image_window = in_image_window(domains[order[i]]);
    std::size_t last = i;
    std::uint64_t window_alignment = 4;
    for (; last < order.size() && same_window(order[i], order[last]); ++last)
      window_alignment = std::max(window_alignment, alignment_of(*layouts[order[last]]));
    // The image window starts past the lane's buffer, which has a word at least.
    const std::optional<std::uint64_t> begin =
        checked_align_up(image_window ? std::max<std::uint64_t>(end, 4) : end, window_alignment);
    if (!begin) return std::nullopt;
    end = *begin;
    for (; i < last; ++i) {
      const std::size_t d = order[i];
      const capacity_layout& layout = *layouts[d];
      const std::optional<std::uint64_t> offset = checked_align_up(end, alignment_of(layout));
      const std::optional<std::uint64_t> next = offset ? checked_add(*offset, size_of(layout)) : std::nullopt;
      if (!next) return std::nullopt;
      if (placement != nullptr) placement->offsets[d] = *offset;
      end = *next;
    }
    const std::optional<std::uint64_t> window_end = checked_align_up(std::max<std::uint64_t>(end, *begin + 4), 4);
    if (!window_end) return std::nullopt;
    end = *window_end;
    if (image_window) {
      images = {*begin, end - *begin};
    } else {
      if (placement != nullptr) placement->windows[index_of(cls)] = {*begin, end - *begin};
      if (allocated(cls)) allocated_end = end;
    }
  }
  const std::optional<std::uint64_t> lane_size = checked_align_up(std::max<std::uint64_t>(allocated_end, 4), 4);
  if (!lane_size) return std::nullopt;
  return placed{*lane_size, images};
}

}  // namespace

result<lane_placement> place_pools(const bucket_id& bucket, std::span<const pool_domain> domains,
                                   const std::vector<std::optional<capacity_layout>>& layouts,
                                   std::span<const std::size_t> order) {
  lane_placement placement;
  placement.offsets.resize(layouts.size());
  const auto size = place(
      domains, layouts, order, [](const capacity_layout& l) { return l.physical_size_bytes; }, &placement);
  const auto unaliased = place(
      domains, layouts, order, [](const capacity_layout& l) { return l.unaliased_size_bytes; }, nullptr);
  if (!size || !unaliased)
    return make_error(errc::size_overflow, "the lane memory of bucket " + quote_text(bucket.str()), "/buckets");
  placement.size = size->lane_size;
  placement.unaliased_size = unaliased->lane_size;
  placement.images = size->images;
  placement.unaliased_image_bytes = unaliased->images.size;
  return placement;
}

std::vector<std::size_t> placement_order(const plan& p, const std::vector<pool_domain>& domains) {
  std::vector<std::size_t> order(domains.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  const auto binds = [&](std::size_t d) {
    return std::any_of(domains[d].members.begin(), domains[d].members.end(),
                       [&](std::size_t r) { return p.resources[r].kind == allocation_kind::binding; });
  };
  // Class upload, device, readback, imported (imported images too); the
  // binding pool first in upload; the pools of images lanes make last.
  const auto rank = [&](std::size_t d) {
    if (in_image_window(domains[d])) return 5;
    switch (domains[d].memory) {
      case memory_class::upload:
        return binds(d) ? 0 : 1;
      case memory_class::device:
        return 2;
      case memory_class::readback:
        return 3;
      case memory_class::imported:
        return 4;
    }
    return 6;
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rank(a) < rank(b); });
  return order;
}

}  // namespace ferrum::detail
