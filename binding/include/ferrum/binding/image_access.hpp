// ferrum/binding/image_access.hpp — what each resource_access means: whether
// it reads or writes, whether it is an image's, the layout it needs, and the
// image formats and queues that can take it (docs/plan-format.md, "Images").
//
//   if (ferrum::is_image_access(a)) layout = ferrum::layout_of(a);
#pragma once

#include "ferrum/binding/plan.hpp"
#include "ferrum/image.hpp"

namespace ferrum {

// sampled .. present: an image's accesses; read, write, read_write and
// vertex .. uniform: a buffer's.
[[nodiscard]] constexpr bool is_image_access(resource_access a) noexcept {
  return a >= resource_access::sampled && a <= resource_access::present;
}

// Whether the access is a draw's alone (vertex and index buffers): a node
// that takes one draws, as a raster node does, on the compute queue's
// graphics pipeline.
[[nodiscard]] constexpr bool is_draw_access(resource_access a) noexcept {
  return a == resource_access::vertex || a == resource_access::index;
}

// Whether the access is a raster node's: an image it draws into or tests
// depth against (color-attachment, depth-attachment, depth-read).
[[nodiscard]] constexpr bool is_attachment_access(resource_access a) noexcept {
  return a == resource_access::color_attachment || a == resource_access::depth_attachment ||
         a == resource_access::depth_read;
}

// Whether the access reads, or writes, what the resource holds.
[[nodiscard]] constexpr bool access_reads(resource_access a) noexcept {
  switch (a) {
    case resource_access::write:
    case resource_access::storage_write:
    case resource_access::color_attachment:
    case resource_access::depth_attachment:
    case resource_access::transfer_dst:
      return false;
    default:
      return true;
  }
}
[[nodiscard]] constexpr bool access_writes(resource_access a) noexcept {
  switch (a) {
    case resource_access::read:
    case resource_access::sampled:
    case resource_access::storage_read:
    case resource_access::depth_read:
    case resource_access::transfer_src:
    case resource_access::present:
    case resource_access::vertex:
    case resource_access::index:
    case resource_access::indirect:
    case resource_access::uniform:
      return false;
    default:
      return true;
  }
}

// The layout an image access needs (undefined for a buffer's).
[[nodiscard]] constexpr image_layout layout_of(resource_access a) noexcept {
  switch (a) {
    case resource_access::sampled:
      return image_layout::shader_read_only;
    case resource_access::storage_read:
    case resource_access::storage_write:
    case resource_access::storage_read_write:
      return image_layout::general;
    case resource_access::color_attachment:
      return image_layout::color_attachment;
    case resource_access::depth_attachment:
      return image_layout::depth_attachment;
    case resource_access::depth_read:
      return image_layout::depth_read_only;
    case resource_access::transfer_src:
      return image_layout::transfer_src;
    case resource_access::transfer_dst:
      return image_layout::transfer_dst;
    case resource_access::present:
      return image_layout::present_src;
    default:
      return image_layout::undefined;
  }
}

// Whether an image of format `f` can take access `a` on some device: what
// no device does is refused with the plan. A depth format (one with a depth
// aspect) is never stored to nor a color attachment, a color format never a
// depth attachment, a block-compressed one only sampled and copied, and
// present takes the formats swapchains have (rgba8/bgra8, unorm and srgb).
// The rest (storage on rgba8-srgb or r8-unorm, d24-unorm-s8-uint at all, a
// color attachment of a2b10g10r10-unorm) depends on the device, which a
// scheduler asks when it is made (gpu::device::format_features).
[[nodiscard]] constexpr bool format_takes(image_format f, resource_access a) noexcept {
  switch (a) {
    case resource_access::storage_read:
    case resource_access::storage_write:
    case resource_access::storage_read_write:
    case resource_access::color_attachment:
      return !is_depth(f) && !is_block_compressed(f);
    case resource_access::depth_attachment:
    case resource_access::depth_read:
      return is_depth(f);
    case resource_access::present:
      return is_swapchain_format(f);
    case resource_access::sampled:
    case resource_access::transfer_src:
    case resource_access::transfer_dst:
      return true;
    default:
      return false;
  }
}

// `r` with its counts resolved against an image of `mips` levels and
// `layers` layers: a count of 0 runs to the last level or layer (0 when the
// base is past it: a range that fits nothing).
[[nodiscard]] constexpr subresource_range resolve(subresource_range r, std::uint32_t mips,
                                                  std::uint32_t layers) noexcept {
  if (r.mips == 0) r.mips = r.base_mip < mips ? mips - r.base_mip : 0;
  if (r.layers == 0) r.layers = r.base_layer < layers ? layers - r.base_layer : 0;
  return r;
}

// Whether a resolved range is non-empty and inside an image of `mips`
// levels and `layers` layers.
[[nodiscard]] constexpr bool fits(const subresource_range& r, std::uint32_t mips, std::uint32_t layers) noexcept {
  return r.mips > 0 && r.layers > 0 && r.base_mip < mips && r.mips <= mips - r.base_mip && r.base_layer < layers &&
         r.layers <= layers - r.base_layer;
}

// Whether two resolved ranges share a subresource.
[[nodiscard]] constexpr bool overlaps(const subresource_range& a, const subresource_range& b) noexcept {
  return a.base_mip < b.base_mip + b.mips && b.base_mip < a.base_mip + a.mips &&
         a.base_layer < b.base_layer + b.layers && b.base_layer < a.base_layer + a.layers;
}

// Whether a node on a transfer queue can take the access: a buffer's read,
// write or read-write, or an image's transfers (a transfer queue runs no
// shaders, no draws and no rendering).
[[nodiscard]] constexpr bool transfer_queue_takes(resource_access a) noexcept {
  return a == resource_access::read || a == resource_access::write || a == resource_access::read_write ||
         a == resource_access::transfer_src || a == resource_access::transfer_dst;
}

}  // namespace ferrum
