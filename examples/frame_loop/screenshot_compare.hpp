// examples/frame_loop/screenshot_compare.hpp — how far a screenshot of the
// --present window is from the frame the example expected there: the
// largest difference of a red, green or blue channel over all pixels (alpha
// is left out: an X screenshot has none). Both are PNG files, read through
// stb_image (libstb-dev, as png_writer's stb_image_write).
//
//   const frame_loop::screenshot_difference d =
//       frame_loop::compare_screenshot("screenshot.png", "frame_loop_out/expected.png");
#pragma once

#include <cstdint>
#include <filesystem>

namespace frame_loop {

struct screenshot_difference {
  std::uint32_t width = 0, height = 0;  // both images'
  int largest = 0;                      // per 8-bit channel, 0..255
};

// Throws std::runtime_error when a file cannot be read as an image, or
// their sizes differ (naming both).
[[nodiscard]] screenshot_difference compare_screenshot(const std::filesystem::path& screenshot,
                                                       const std::filesystem::path& expected);

}  // namespace frame_loop
