// image_rules — the rules of a plan's images (docs/plan-format.md, "Images"),
// each with its error: code, detail and JSON pointer. validate_plan checks
// them on a plan it indexes; resolve_demand sizes an image in a bucket.
#pragma once

#include "ferrum/binding/plan.hpp"
#include "plan_index.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace ferrum::detail {

// The largest extent and layer count a plan may declare:
// ferrum::max_image_extent and max_image_layers (ferrum/image.hpp).
using ferrum::max_image_extent;
using ferrum::max_image_layers;

// Resource `index`'s image declaration: only in a v2 plan (unknown_field,
// at its `image`), a workspace resource (invalid_image, at its kind), not
// persistent when imported (invalid_image, at its lifetime),
// without a buffer's fields set in code (invalid_image), a fixed extent of
// 1..max_image_extent, 1..max_image_layers layers and at least one mip level,
// no more than a fixed extent has (invalid_image, at the field); an
// extent_divisor of 1 on a fixed extent, else 1 or is_extent_divisor
// (invalid_image, at its `image/extent`); a bucket extent fits every bucket
// (resolve_image_extent, at its `image`).
[[nodiscard]] result<void> check_image(const plan& p, const resource_descriptor& r, std::size_t index);

// Every node's accesses fit what it uses: an image access for an image and
// a buffer access for a buffer, a range of mip levels and layers only for
// an image (invalid_access), one the image's format and the node's queue
// can take, a range inside the image, one mip level for an attachment,
// `present` only of a whole imported image and never followed by another
// use (invalid_image_access); an invocation image's subresource is written
// whole by its first use (image_read_before_write) unless the image is
// imported (the engine's contents). At `/nodes/<n>/access/<resource id>`.
// `uses`: the resource index of every node's resources, side by side in
// plan order (plan_index::all_uses; the program file's resolved uses).
[[nodiscard]] result<void> check_image_uses(const plan& p, std::span<const std::size_t> uses);

// The image's extent in a bucket of `dims`: its own, or the bucket's first
// two dimensions, each divided by its extent_divisor and rounded up
// (invalid_image past max_image_extent, or with more mip levels than that
// extent has; the detail names the resource and the bucket).
struct image_extent {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
};
[[nodiscard]] result<image_extent> resolve_image_extent(const resource_descriptor& r, const bucket_capacity& dims);

// Whether `k` divides a bucket-relative extent: a power of two in
// 2..max_extent_divisor (1, the bucket's own, is `"bucket"`).
[[nodiscard]] constexpr bool is_extent_divisor(std::uint64_t k) noexcept {
  return k >= 2 && k <= max_extent_divisor && (k & (k - 1)) == 0;
}

// The number of mip levels an extent has (a full chain down to 1x1).
[[nodiscard]] constexpr std::uint32_t full_mip_chain(std::uint32_t width, std::uint32_t height) noexcept {
  std::uint32_t levels = 1;
  for (std::uint32_t side = width > height ? width : height; side > 1; side >>= 1) ++levels;
  return levels;
}

// The bytes of an image of `extent`: every layer's mip chain, each level
// rounded up to whole blocks (ferrum::level_bytes).
[[nodiscard]] std::uint64_t image_bytes(const image_desc& image, image_extent extent) noexcept;

}  // namespace ferrum::detail
