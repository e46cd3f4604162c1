// examples/frame_loop/screenshot_compare.hpp — how far a frame is from the
// frame the example expected there: a device's last frame from the host's
// (main.cpp), or a screenshot of the --present window from the expected.png
// the run wrote. Red, green and blue are compared (alpha is left out: an X
// screenshot has none); pixels that an edge of the drawn torus reaches
// (host_frame::edges) are held to nothing, only counted where they differ:
// two rasterizers may decide such a pixel either way. A region drawn over
// the frame (--overlay's window) is apart: there the frames are to differ,
// and how many of its pixels do is counted. PNG files are read through
// stb_image (libstb-dev, as png_writer's stb_image_write).
//
//   const frame_loop::frame_difference d = frame_loop::compare_screenshot(
//       "screenshot.png", "frame_loop_out/expected.png", "frame_loop_out/expected-edges.png", 2);
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>

namespace frame_loop {

// A rectangle of a frame, in pixels.
struct pixel_region {
  std::uint32_t x = 0, y = 0, width = 0, height = 0;

  [[nodiscard]] bool contains(std::uint32_t px, std::uint32_t py) const noexcept {
    return px >= x && px - x < width && py >= y && py - y < height;
  }
};

struct frame_difference {
  std::uint32_t width = 0, height = 0;
  int largest = 0;                   // per 8-bit channel, 0..255, away from edges and the region
  std::size_t edge_pixels = 0;       // near an edge (outside the region), not held to `allowed`
  std::size_t edge_differing = 0;    // of those, how many differ by more than `allowed`
  std::size_t region_pixels = 0;     // in the region, within the frame
  std::size_t region_differing = 0;  // of those, how many differ by more than `allowed`
};

// `a` and `b`: `width` x `height` pixels of 4 bytes; `edges`: one byte a
// pixel, nonzero near an edge; `region`: the pixels held apart, if any.
[[nodiscard]] frame_difference compare_frames(std::span<const std::byte> a, std::span<const std::byte> b,
                                              std::span<const std::uint8_t> edges, std::uint32_t width,
                                              std::uint32_t height, int allowed,
                                              std::optional<pixel_region> region = std::nullopt);

// A screenshot against the expected frame and its edges (a PNG whose
// nonzero red marks them), `region` apart. Throws std::runtime_error when a
// file cannot be read as an image, or their sizes differ (naming them).
[[nodiscard]] frame_difference compare_screenshot(const std::filesystem::path& screenshot,
                                                  const std::filesystem::path& expected,
                                                  const std::filesystem::path& edges, int allowed,
                                                  std::optional<pixel_region> region = std::nullopt);

// A region as a file holds it: "x y width height" (overlay-region.txt).
// Throws std::runtime_error naming the file when it cannot be read or is
// not four whole numbers.
[[nodiscard]] pixel_region read_region(const std::filesystem::path& file);
void write_region(const std::filesystem::path& file, const pixel_region& region);

}  // namespace frame_loop
