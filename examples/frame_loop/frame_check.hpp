// examples/frame_loop/frame_check.hpp — the checks of the last frame a run
// drew, each against the host, each per pixel (no blur between the error
// and the check):
//
//   raster: node/draw's color and depth, as node/draw.readback copied them
//   out before any post-processing, against the host's drawing of the
//   frame (the pattern kernel's C++ form, frame_mesh.hpp's rasterizer).
//   Every pixel that no silhouette or occlusion edge of the torus crosses
//   must match within color_tolerance and depth_tolerance plus
//   slope_share of the host's change to its neighbours. At the pixels an
//   edge crosses the device's rasterizer may decide a sample the other way
//   (its vertices snapped to its sub-pixel grid, its tie rule): at most
//   edge_differing_bound of them may differ (edge_bound_allowed).
//
//   post: the 8-bit frame (after blur and tone map) against the host's
//   blur and tone map (the kernels' C++ forms) of the device's own drawn
//   color: within post_tolerance at every pixel, none left out.
//
//   frame_loop::raster_difference d = frame_loop::compare_raster(drawn, reference, width, height);
//   if (!d.passed()) throw std::runtime_error(d.failure());
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace frame_loop {

// The difference allowed at a pixel: a floor, plus a share of how much
// the host's value changes from the pixel to its neighbours (those no edge
// crosses, on the same surface). A GPU samples its triangles where its
// snapped vertices put them, up to 2^-9 of a pixel from where the host's
// float vertices do, so its value may be off by that much of a pixel's
// change, more on a thin triangle (its weights move by the snap over its
// height): slope_share (1/16) is 32 times the snap; the largest share of it
// measured over 21 runs (null device, lavapipe, 128 to 400 pixels wide) was
// 0.4 of 1/32.
// Only on the torus: the pattern is computed per pixel, no sample moves.
// Color, relative to max(1, the host's value): float rounding and a GPU's
// sin, exp and normalize, a few ulps of 2^-23, below 2^-12: on the pattern
// a pixel 1/255 off fails. On the torus a pixel's neighbours differ by
// about 0.01 to 0.05, so it allows 0.001 to 0.004 there, less than one
// 8-bit step after the tone map (sqrt(c / (1 + c)): 0.008 to 0.02 in the
// torus's range of c, 0.4 to 1): a pixel off by that fails.
inline constexpr float color_tolerance = 1.0f / 4096.0f;
// Depth: interpolated in float on the device, in double from float weights
// on the host, 2^-16 of the [0, 1] range (7e-6 measured at a pixel whose
// neighbours all lie on an edge); a step of depth across the torus is
// about 1/200 at 128 pixels.
inline constexpr float depth_tolerance = 1.0f / 65536.0f;
inline constexpr float slope_share = 1.0f / 16.0f;
// The share of the edge pixels that may differ beyond the tolerances. A
// sample decides differently only where the edge passes within the
// device's snapping error of it (2^-9 of a pixel at 8 sub-pixel bits, as
// lavapipe's and the null device's rasterizer; 2^-5 at the 4 bits Vulkan
// allows) or on a tie. The edge pixels' centres lie anywhere within about
// a pixel of the edge, so about 0.4% of them are that close at 8 bits, 6%
// at 4 (measured: 0 to 3 of 1000 to 2000 edge pixels, at most 0.2%, on
// lavapipe and the null device, 128 to 640 pixels wide). 1/8 holds a GPU
// of 4 bits twice over, and still fails a torus shifted by a tenth of a
// pixel (40% of the edge pixels differ), drawn without its depth test
// (44%) or over a depth cleared to 0.999 (21%).
inline constexpr double edge_differing_bound = 1.0 / 8.0;
// The largest difference allowed in an 8-bit channel of the post-processed
// frame: the device's blur and tone map of the same input, a GPU's exp
// rounding its last bits differently.
inline constexpr int post_tolerance = 2;

// What the host drew for one frame, before post-processing: rgba32-float
// color and float depth per pixel, and the edge pixels (1).
struct raster_reference {
  std::vector<float> color;
  std::vector<float> depth;
  std::vector<std::uint8_t> edges;
};

struct raster_difference {
  std::size_t pixels = 0;
  std::size_t edge_pixels = 0;
  std::size_t edge_differing = 0;  // edge pixels beyond a tolerance
  // Away from the edges: the color difference (relative) and the depth
  // difference that exceed what their pixel allows most (as a share of
  // it: above 1 fails), the pixels they are at, and what they allow.
  struct worst {
    float share = 0;
    float difference = 0;
    float allowed = 0;
    std::size_t at = 0;
  };
  worst color{};
  worst depth{};
  std::uint32_t width = 0;

  [[nodiscard]] bool color_passed() const noexcept { return color.share <= 1.0f; }
  [[nodiscard]] bool depth_passed() const noexcept { return depth.share <= 1.0f; }
  [[nodiscard]] std::size_t edge_bound_allowed() const noexcept;
  [[nodiscard]] bool edges_passed() const noexcept { return edge_differing <= edge_bound_allowed(); }
  [[nodiscard]] bool passed() const noexcept { return color_passed() && depth_passed() && edges_passed(); }
  // Why it did not pass (empty when it did).
  [[nodiscard]] std::string failure() const;
};

// `color` (rgba32-float texels) and `depth` (floats) of `width` x `height`,
// as the device drew them, against `reference`. Throws
// std::invalid_argument when a size does not match.
[[nodiscard]] raster_difference compare_raster(std::span<const std::byte> color, std::span<const std::byte> depth,
                                               const raster_reference& reference, std::uint32_t width,
                                               std::uint32_t height);

struct post_difference {
  int largest = 0;  // in an 8-bit channel
  std::size_t at = 0;
  std::uint32_t width = 0;

  [[nodiscard]] bool passed() const noexcept { return largest <= post_tolerance; }
  [[nodiscard]] std::string failure() const;
};

// The device's 8-bit frame against the host's, every pixel. Throws
// std::invalid_argument when the sizes differ.
[[nodiscard]] post_difference compare_post(std::span<const std::byte> device, std::span<const std::byte> host,
                                           std::uint32_t width);

}  // namespace frame_loop
