// ferrum/image.hpp — the image formats a plan may declare and the layouts an
// image passes through (docs/design.md, "Images"). Shared by binding/ (a
// plan's images, the layouts its compiler derives) and gpu/ (the images a
// device makes and checks), which do not know each other.
//
//   ferrum::image_format f = *ferrum::image_format_from_string("rgba16-float");
//   std::uint64_t bytes = ferrum::texel_bytes(f) * 1920 * 1080;
#pragma once

#include <array>
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

// A closed set: the formats every Vulkan device supports for what ferrum
// lets a plan do with them (docs/plan-format.md, "Images").
enum class image_format : std::uint8_t { rgba8_unorm, bgra8_unorm, rgba16_float, r32_float, d32_float, rgba32_float };

inline constexpr std::array<image_format, 6> image_formats{image_format::rgba8_unorm,  image_format::bgra8_unorm,
                                                           image_format::rgba16_float, image_format::r32_float,
                                                           image_format::d32_float,    image_format::rgba32_float};

// "rgba8-unorm", "bgra8-unorm", "rgba16-float", "r32-float", "d32-float",
// "rgba32-float".
[[nodiscard]] constexpr std::string_view to_string(image_format f) noexcept {
  switch (f) {
    case image_format::rgba8_unorm:
      return "rgba8-unorm";
    case image_format::bgra8_unorm:
      return "bgra8-unorm";
    case image_format::rgba16_float:
      return "rgba16-float";
    case image_format::r32_float:
      return "r32-float";
    case image_format::d32_float:
      return "d32-float";
    case image_format::rgba32_float:
      return "rgba32-float";
  }
  return "unknown";
}

[[nodiscard]] constexpr std::optional<image_format> image_format_from_string(std::string_view name) noexcept {
  for (image_format f : image_formats)
    if (to_string(f) == name) return f;
  return std::nullopt;
}

// Bytes per texel.
[[nodiscard]] constexpr std::uint64_t texel_bytes(image_format f) noexcept {
  switch (f) {
    case image_format::rgba32_float:
      return 16;
    case image_format::rgba16_float:
      return 8;
    case image_format::rgba8_unorm:
    case image_format::bgra8_unorm:
    case image_format::r32_float:
    case image_format::d32_float:
      return 4;
  }
  return 0;
}

[[nodiscard]] constexpr bool is_depth(image_format f) noexcept { return f == image_format::d32_float; }

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
