// image_placement.cpp — place_lane_images (ferrum/binding/image_placement.hpp).
#include "ferrum/binding/image_placement.hpp"

#include "ferrum/binding/demand.hpp"

#include "interval_packing.hpp"

#include <algorithm>
#include <string>

namespace ferrum {
namespace {

// Places `group` side by side from 0; its size, nullopt on overflow.
std::optional<std::uint64_t> pack_side_by_side(std::vector<projection>& group) {
  std::uint64_t end = 0;
  for (projection& p : group) {
    const auto offset = checked_align_up(end, p.alignment);
    const auto next = offset ? checked_add(*offset, p.capacity) : std::nullopt;
    if (!next) return std::nullopt;
    p.offset = *offset;
    end = *next;
  }
  return end;
}

// Where a group laid out from 0 goes past `end`: the first offset that
// every member's alignment divides.
std::optional<std::uint64_t> base_after(std::uint64_t end, const std::vector<projection>& group) {
  std::uint64_t alignment = 1;
  for (const projection& p : group) alignment = std::max(alignment, p.alignment);
  return checked_align_up(end, alignment);
}

}  // namespace

result<image_placement> place_lane_images(const lane_recipe& lane, std::span<const image_size> sizes) {
  const std::vector<lane_image>& images = lane.images;
  if (sizes.size() != images.size())
    return make_error(errc::invalid_image, std::to_string(sizes.size()) + " image sizes for the lane's " +
                                               std::to_string(images.size()) + " images");
  for (std::size_t i = 0; i < images.size(); ++i)
    if (!images[i].imported && (sizes[i].bytes == 0 || !is_valid_alignment(sizes[i].alignment)))
      return make_error(errc::invalid_image, "image " + resource_id::quote(images[i].resource.view()) + ": " +
                                                 std::to_string(sizes[i].bytes) + " bytes at alignment " +
                                                 std::to_string(sizes[i].alignment) +
                                                 " (at least one byte, and a power of two)");

  image_placement out;
  out.offsets.resize(images.size());
  const auto overflow = [] { return make_error(errc::size_overflow, "the lane's image memory"); };
  // A pool's images come together (program order: domain, then member).
  for (std::size_t first = 0; first < images.size();) {
    std::size_t last = first;
    if (images[first].imported) {  // the engine's: no bytes here
      for (; last < images.size() && images[last].domain == images[first].domain; ++last) out.offsets[last] = 0;
      first = last;
      continue;
    }
    std::vector<projection> group;
    std::vector<live_interval> live;
    for (; last < images.size() && images[last].domain == images[first].domain; ++last) {
      group.push_back({images[last].resource, 0, sizes[last].bytes, sizes[last].alignment});
      live.push_back(images[last].live);
    }
    const auto side_by_side = pack_side_by_side(group);
    const auto unaliased_base = base_after(out.unaliased_bytes, group);
    const auto unaliased_end =
        side_by_side && unaliased_base ? checked_add(*unaliased_base, *side_by_side) : std::nullopt;
    if (!unaliased_end) return overflow();
    out.unaliased_bytes = *unaliased_end;
    std::uint64_t size = *side_by_side;
    if (images[first].aliasable) {
      std::vector<projection> aliased = group;
      if (const auto packed = detail::pack_interval(aliased, live); packed && *packed <= size) {
        group = std::move(aliased);
        size = *packed;
      }
    }
    const auto base = base_after(out.bytes, group);
    const auto end = base ? checked_add(*base, size) : std::nullopt;
    if (!end) return overflow();
    for (std::size_t k = 0; k < group.size(); ++k) out.offsets[first + k] = *base + group[k].offset;
    out.bytes = *end;
    first = last;
  }
  return out;
}

}  // namespace ferrum
