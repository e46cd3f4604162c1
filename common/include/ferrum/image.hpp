// ferrum/image.hpp — the image formats a plan may declare and the layouts an
// image passes through (docs/design.md, "Images"). Shared by binding/ (a
// plan's images, the layouts its compiler derives) and gpu/ (the images a
// device makes and checks), which do not know each other.
//
//   ferrum::image_format f = *ferrum::image_format_from_string("rgba16-float");
//   std::uint64_t bytes = ferrum::level_bytes(f, 1920, 1080);
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ferrum {

// The largest extent and layer count a plan may declare and a device is
// asked for: what desktop GPUs support (maxImageDimension2D is 16384 on
// every one, 4096 the least Vulkan allows, which a device checks;
// maxImageArrayLayers 256 or more everywhere).
inline constexpr std::uint32_t max_image_extent = 16384;
inline constexpr std::uint32_t max_image_layers = 256;

// A closed set (docs/plan-format.md, "Images"): the formats a plan may
// declare. New ones go at the end (a plan's canonical encoding writes the
// number). Which accesses a format can take on every device is plan-level
// (format_takes, ferrum/binding/image_access.hpp); the rest each device
// says (gpu::device::format_features).
enum class image_format : std::uint8_t {
  rgba8_unorm,
  bgra8_unorm,
  rgba16_float,
  r32_float,
  d32_float,
  rgba32_float,
  rgba8_srgb,
  bgra8_srgb,
  d16_unorm,
  d24_unorm_s8_uint,
  d32_float_s8_uint,
  b10g11r11_float,
  a2b10g10r10_unorm,
  r8_unorm,
  rg8_unorm,
  r16_unorm,
  rg16_unorm,
  r16_float,
  rg16_float,
  rg32_float,
  bc1_rgba_unorm,
  bc1_rgba_srgb,
  bc3_unorm,
  bc3_srgb,
  bc4_unorm,
  bc5_unorm,
  bc7_unorm,
  bc7_srgb
};

inline constexpr std::size_t image_format_count = static_cast<std::size_t>(image_format::bc7_srgb) + 1;

// What a format is: its name in plan files, the bytes of one block (a
// texel; a 4x4 block of texels for a block-compressed format), its block's
// side in texels, and its aspects (depth, stencil; color otherwise).
struct image_format_traits {
  std::string_view name;
  std::uint8_t block_bytes = 0;
  std::uint8_t block_extent = 1;
  bool depth = false;
  bool stencil = false;
};

inline constexpr std::array<image_format_traits, image_format_count> image_format_table{{
    {"rgba8-unorm", 4},
    {"bgra8-unorm", 4},
    {"rgba16-float", 8},
    {"r32-float", 4},
    {"d32-float", 4, 1, true},
    {"rgba32-float", 16},
    {"rgba8-srgb", 4},
    {"bgra8-srgb", 4},
    {"d16-unorm", 2, 1, true},
    // Packed as Vulkan's D24_UNORM_S8_UINT: 4 bytes a texel in memory (a
    // copy moves one aspect at a time, which ferrum refuses).
    {"d24-unorm-s8-uint", 4, 1, true, true},
    {"d32-float-s8-uint", 8, 1, true, true},
    {"b10g11r11-float", 4},
    {"a2b10g10r10-unorm", 4},
    {"r8-unorm", 1},
    {"rg8-unorm", 2},
    {"r16-unorm", 2},
    {"rg16-unorm", 4},
    {"r16-float", 2},
    {"rg16-float", 4},
    {"rg32-float", 8},
    {"bc1-rgba-unorm", 8, 4},
    {"bc1-rgba-srgb", 8, 4},
    {"bc3-unorm", 16, 4},
    {"bc3-srgb", 16, 4},
    {"bc4-unorm", 8, 4},
    {"bc5-unorm", 16, 4},
    {"bc7-unorm", 16, 4},
    {"bc7-srgb", 16, 4},
}};

[[nodiscard]] constexpr const image_format_traits& traits_of(image_format f) noexcept {
  const auto i = static_cast<std::size_t>(f);
  return image_format_table[i < image_format_count ? i : 0];
}

// Every format, in enum order.
inline constexpr std::array<image_format, image_format_count> image_formats = [] {
  std::array<image_format, image_format_count> all{};
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<image_format>(i);
  return all;
}();

// "rgba8-unorm", "d24-unorm-s8-uint", "bc7-srgb", ...; "unknown" for a value
// outside the enum.
[[nodiscard]] constexpr std::string_view to_string(image_format f) noexcept {
  return static_cast<std::size_t>(f) < image_format_count ? traits_of(f).name : "unknown";
}

[[nodiscard]] constexpr std::optional<image_format> image_format_from_string(std::string_view name) noexcept {
  for (image_format f : image_formats)
    if (to_string(f) == name) return f;
  return std::nullopt;
}

// Bytes of one block: a texel's, or a 4x4 block's of a block-compressed
// format (bc*).
[[nodiscard]] constexpr std::uint64_t block_bytes(image_format f) noexcept { return traits_of(f).block_bytes; }
// A block's side in texels: 1, or 4 for a block-compressed format.
[[nodiscard]] constexpr std::uint32_t block_extent(image_format f) noexcept { return traits_of(f).block_extent; }
[[nodiscard]] constexpr bool is_block_compressed(image_format f) noexcept { return block_extent(f) > 1; }

// The bytes of one layer of one level `width` x `height` texels, tightly
// packed, extents rounded up to whole blocks: what a copy of it moves.
[[nodiscard]] constexpr std::uint64_t level_bytes(image_format f, std::uint64_t width, std::uint64_t height) noexcept {
  const std::uint64_t b = block_extent(f);
  return (width + b - 1) / b * ((height + b - 1) / b) * block_bytes(f);
}

// Whether the format has a depth aspect (d16-unorm, d32-float and the
// depth-stencil ones), and a stencil one.
[[nodiscard]] constexpr bool is_depth(image_format f) noexcept { return traits_of(f).depth; }
[[nodiscard]] constexpr bool has_stencil(image_format f) noexcept { return traits_of(f).stencil; }

// Whether swapchains have the format: what `present` takes.
[[nodiscard]] constexpr bool is_swapchain_format(image_format f) noexcept {
  return f == image_format::rgba8_unorm || f == image_format::bgra8_unorm || f == image_format::rgba8_srgb ||
         f == image_format::bgra8_srgb;
}

// The layouts of Vulkan's that ferrum uses, one per kind of access
// (`undefined`: the contents are not kept — an image's first use in a wave,
// or one that takes memory another image left).
enum class image_layout : std::uint8_t {
  undefined,
  general,
  color_attachment,
  depth_attachment,
  depth_read_only,
  shader_read_only,
  transfer_src,
  transfer_dst,
  present_src
};

// What a raster node's rendering does with an attachment's contents as it
// begins (load them, clear them, or neither) and ends (store them or not):
// Vulkan's load and store ops.
enum class attachment_load : std::uint8_t { load, clear, dont_care };
enum class attachment_store : std::uint8_t { store, dont_care };

[[nodiscard]] constexpr std::string_view to_string(image_layout l) noexcept {
  switch (l) {
    case image_layout::undefined:
      return "undefined";
    case image_layout::general:
      return "general";
    case image_layout::color_attachment:
      return "color-attachment";
    case image_layout::depth_attachment:
      return "depth-attachment";
    case image_layout::depth_read_only:
      return "depth-read-only";
    case image_layout::shader_read_only:
      return "shader-read-only";
    case image_layout::transfer_src:
      return "transfer-src";
    case image_layout::transfer_dst:
      return "transfer-dst";
    case image_layout::present_src:
      return "present-src";
  }
  return "unknown";
}

}  // namespace ferrum
