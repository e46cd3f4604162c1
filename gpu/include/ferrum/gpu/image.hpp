// ferrum/gpu/image.hpp — images a device makes, in blocks of image memory.
//
// A scheduler lane holds its plan's images (docs/design.md, "Images"): it
// asks the device how big each image is and how it must be aligned
// (device::image_requirements), places them — images that are never live
// together may share bytes (ferrum/binding/image_placement.hpp) — and makes
// one block of device-local memory holding all of them
// (device::create_image_memory), each image bound at its offset, with a
// view of the whole image where its usage takes one.
//
//   gpu::image_spec spec{image_format::rgba16_float, 1920, 1080, 1, 1, image_usage::storage | image_usage::sampled};
//   auto size = device.image_requirements(spec);
//   std::array placed{gpu::placed_image{spec, 0}};
//   auto memory = device.create_image_memory(placed, size->bytes);
//   list.transition((*memory)->at(0), image_layout::undefined, image_layout::general);
//
// An image's layout is the GPU's state, which command lists change
// (command_list::transition) and the commands that reach an image name
// (the layout it is in when they run): the caller keeps track. Each
// subresource (one mip level of one layer) has a layout of its own: a
// transition may change a range of them (image_subresources), a kernel
// reach one through a view of it (image_view, device::create_image_view).
// The null device keeps each subresource's layout on its worker and counts
// every command that meets an image in another layout than it names
// (null_device::image_layout_errors); on Vulkan the validation layers
// check the same.
//
// Thread safety: immutable once made; any thread.
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/image.hpp"
#include "ferrum/queue_kind.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ferrum::gpu {

class device;

// What an image may be used for (a bit each): its Vulkan usage flags.
namespace image_usage {
inline constexpr std::uint32_t sampled = 1u << 0;
inline constexpr std::uint32_t storage = 1u << 1;
inline constexpr std::uint32_t color_attachment = 1u << 2;
inline constexpr std::uint32_t depth_attachment = 1u << 3;
inline constexpr std::uint32_t transfer_src = 1u << 4;
inline constexpr std::uint32_t transfer_dst = 1u << 5;
inline constexpr std::uint32_t all = (1u << 6) - 1;
// The usages an image takes a view for (device::create_image_view); an
// image only copied has none.
inline constexpr std::uint32_t viewed = sampled | storage | color_attachment | depth_attachment;
}  // namespace image_usage

// The names of image_usage bits, comma-separated ("color-attachment,
// transfer-src"; "none" for 0): what errors say.
[[nodiscard]] std::string image_usage_names(std::uint32_t usage);

// A 2D image (an array of `layers` layers, `mips` levels each).
struct image_spec {
  image_format format = image_format::rgba8_unorm;
  std::uint32_t width = 1;
  std::uint32_t height = 1;
  std::uint32_t mips = 1;
  std::uint32_t layers = 1;
  std::uint32_t usage = 0;  // image_usage bits, at least one
  friend bool operator==(const image_spec&, const image_spec&) = default;
};

// The bytes of image memory an image takes, and the alignment its offset
// needs (a power of two): the device's.
struct image_requirements {
  std::uint64_t bytes = 0;
  std::uint64_t alignment = 1;
};

// An image and where it goes in a block of image memory, and the layout
// it is put in when made (undefined: none; a scheduler lane's persistent
// images start where a wave expects them).
struct placed_image {
  image_spec spec;
  std::uint64_t offset = 0;
  image_layout layout = image_layout::undefined;
};

// What a device can do with images of a format (optimal tiling): a bit
// each, the image_usage bits for the usages each feature allows, and
// blits (device::format_features).
namespace format_feature {
inline constexpr std::uint32_t sampled = image_usage::sampled;
inline constexpr std::uint32_t storage = image_usage::storage;
inline constexpr std::uint32_t color_attachment = image_usage::color_attachment;
inline constexpr std::uint32_t depth_attachment = image_usage::depth_attachment;
inline constexpr std::uint32_t transfer_src = image_usage::transfer_src;
inline constexpr std::uint32_t transfer_dst = image_usage::transfer_dst;
inline constexpr std::uint32_t blit_src = 1u << 6;
inline constexpr std::uint32_t blit_dst = 1u << 7;
inline constexpr std::uint32_t all = (1u << 8) - 1;
}  // namespace format_feature

// "sampled", "storage", "color-attachment", "depth-attachment",
// "transfer-src", "transfer-dst", "blit-src", "blit-dst", joined by ", ";
// "none" for none.
[[nodiscard]] std::string format_feature_names(std::uint32_t features);

// The bytes of a spec's level 0, every layer, tightly packed (whole
// blocks of a block-compressed format): what a copy into or out of the
// whole image moves.
[[nodiscard]] constexpr std::uint64_t copy_bytes(const image_spec& s) noexcept {
  return level_bytes(s.format, s.width, s.height) * s.layers;
}

// Whether a device may be asked for `spec`; the detail names what is
// wrong: an extent or layer count of 0 or past max_image_extent and
// max_image_layers (ferrum/image.hpp; a device may allow less), mips of 0 or more
// than the extent has levels, no usage or an unknown bit, a depth format
// with storage or color-attachment usage, a color format with
// depth-attachment usage, a block-compressed format with a usage other than
// sampled and transfers (no device has them). What else a format can do is
// the device's (device::format_features). Errors: invalid_image.
[[nodiscard]] result<void> check_image_spec(const image_spec& spec);

// Mip levels [base_mip, base_mip + mips) of layers [base_layer, base_layer
// + layers) of an image: what a transition changes, what a view shows.
struct image_subresources {
  std::uint32_t base_mip = 0;
  std::uint32_t mips = 1;
  std::uint32_t base_layer = 0;
  std::uint32_t layers = 1;
  // Every level and layer of an image of `s`.
  [[nodiscard]] static image_subresources whole(const image_spec& s) noexcept { return {0, s.mips, 0, s.layers}; }
  friend bool operator==(const image_subresources&, const image_subresources&) = default;
};

// Whether `r` is not empty and lies inside an image of `s`.
[[nodiscard]] constexpr bool fits(const image_subresources& r, const image_spec& s) noexcept {
  return r.mips != 0 && r.layers != 0 && r.base_mip < s.mips && r.mips <= s.mips - r.base_mip &&
         r.base_layer < s.layers && r.layers <= s.layers - r.base_layer;
}

// Whether `a` and `b` share a subresource (a level of a layer).
[[nodiscard]] constexpr bool overlaps(const image_subresources& a, const image_subresources& b) noexcept {
  const auto meet = [](std::uint32_t a_base, std::uint32_t a_count, std::uint32_t b_base, std::uint32_t b_count) {
    // One starts inside the other (unsigned: a start below the other's
    // base wraps past any count).
    return a_count != 0 && b_count != 0 && (a_base - b_base < b_count || b_base - a_base < a_count);
  };
  return meet(a.base_mip, a.mips, b.base_mip, b.mips) && meet(a.base_layer, a.layers, b.base_layer, b.layers);
}

// "mip 1 layer 0", "mips [1, 3) of layers [0, 4)": a range in errors.
[[nodiscard]] std::string subresources_text(const image_subresources& r);

// Whether an image of `usage` may be in layout `l` (Vulkan's rule: each
// layout but undefined, general and present-src needs its usage).
[[nodiscard]] constexpr bool usage_allows(std::uint32_t usage, image_layout l) noexcept {
  switch (l) {
    case image_layout::color_attachment:
      return (usage & image_usage::color_attachment) != 0;
    case image_layout::depth_attachment:
      return (usage & image_usage::depth_attachment) != 0;
    case image_layout::depth_read_only:
      return (usage & (image_usage::depth_attachment | image_usage::sampled)) != 0;
    case image_layout::shader_read_only:
      return (usage & image_usage::sampled) != 0;
    case image_layout::transfer_src:
      return (usage & image_usage::transfer_src) != 0;
    case image_layout::transfer_dst:
      return (usage & image_usage::transfer_dst) != 0;
    case image_layout::undefined:
    case image_layout::general:
    case image_layout::present_src:
      return true;
  }
  return false;
}

class image {
 public:
  image(const image&) = delete;
  image& operator=(const image&) = delete;
  virtual ~image() = default;

  [[nodiscard]] const image_spec& spec() const noexcept { return spec_; }
  // Its offset in its block of image memory.
  [[nodiscard]] std::uint64_t offset() const noexcept { return offset_; }
  // The device's handles, for engines that record their own commands over
  // it: a VkImage and a VkImageView of every level and layer on Vulkan
  // (gpu::vulkan_image, gpu::vulkan_image_view; no view for an image
  // without sampled, storage or attachment usage); 0 on the null device.
  [[nodiscard]] std::uint64_t native_handle() const noexcept { return native_handle_; }
  [[nodiscard]] std::uint64_t native_view() const noexcept { return native_view_; }
  [[nodiscard]] const gpu::device& device() const noexcept { return *device_; }
  // The kinds of its device's queues that may use it (queue_bit each): every
  // kind, but for an engine's image shared with fewer queue families than
  // the device's queues are of (gpu::vulkan_sharing).
  [[nodiscard]] std::uint32_t queues() const noexcept { return queues_; }

 protected:
  // Set by the device for an engine's image not shared with every queue.
  void set_queues(std::uint32_t kinds) noexcept { queues_ = kinds; }
  friend class null_device;  // share_with
  image(const gpu::device& owner, const image_spec& spec, std::uint64_t offset, std::uint64_t handle,
        std::uint64_t view) noexcept
      : device_(&owner), spec_(spec), offset_(offset), native_handle_(handle), native_view_(view) {}

 private:
  const gpu::device* device_;
  image_spec spec_;
  std::uint64_t offset_;
  std::uint64_t native_handle_;
  std::uint64_t native_view_;
  std::uint32_t queues_ = every_queue_kind;
};

// A view of a range of an image (device::create_image_view): on Vulkan a
// VkImageView of that range (2D for one layer, 2D-array for more) with the
// format's aspects; on the null device the range only. A kernel reaches
// one level of one layer of an image through one (image_operand::view).
// Its owner destroys it only once the GPU is done with every command that
// used it; the image outlives it. Thread safety: immutable; any thread.
class image_view {
 public:
  image_view(const image_view&) = delete;
  image_view& operator=(const image_view&) = delete;
  virtual ~image_view() = default;

  [[nodiscard]] const gpu::image& image() const noexcept { return *image_; }
  [[nodiscard]] const image_subresources& range() const noexcept { return range_; }
  // A VkImageView on Vulkan (gpu::vulkan_image_view); 0 on the null device.
  [[nodiscard]] std::uint64_t native_handle() const noexcept { return native_handle_; }

 protected:
  image_view(const gpu::image& img, const image_subresources& range, std::uint64_t handle) noexcept
      : image_(&img), range_(range), native_handle_(handle) {}

 private:
  const gpu::image* image_;
  image_subresources range_;
  std::uint64_t native_handle_;
};

// One allocation of device-local memory and the images bound in it. Its
// images' bytes may overlap (images that share memory): what one leaves is
// undefined through another, whose first use must transition from
// image_layout::undefined. The owner destroys it only once the GPU is done
// with every image in it.
class image_memory {
 public:
  image_memory(const image_memory&) = delete;
  image_memory& operator=(const image_memory&) = delete;
  virtual ~image_memory() = default;

  [[nodiscard]] std::size_t size() const noexcept { return images_.size(); }
  [[nodiscard]] const image& at(std::size_t i) const noexcept { return *images_[i]; }
  // The block's bytes.
  [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }

 protected:
  explicit image_memory(std::uint64_t bytes) noexcept : bytes_(bytes) {}
  // The device's images, in the order they were asked for; set once by the
  // device's constructor of the block.
  void set_images(std::span<const image* const> images) { images_.assign(images.begin(), images.end()); }

 private:
  std::uint64_t bytes_;
  std::vector<const image*> images_;
};

}  // namespace ferrum::gpu
