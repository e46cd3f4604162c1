// examples/frame_loop/screenshot_compare.cpp — a screenshot against the
// expected frame (screenshot_compare.hpp).
#include "screenshot_compare.hpp"

#include <stb_image.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

namespace frame_loop {
namespace {

struct rgba_image {
  std::unique_ptr<unsigned char, void (*)(void*)> pixels{nullptr, &stbi_image_free};
  int width = 0, height = 0;
};

rgba_image load(const std::filesystem::path& path) {
  rgba_image image;
  int channels = 0;
  image.pixels.reset(stbi_load(path.c_str(), &image.width, &image.height, &channels, 4));
  if (!image.pixels)
    throw std::runtime_error("cannot read '" + path.string() + "' as an image: " + stbi_failure_reason());
  return image;
}

std::string size_of(const rgba_image& image) {
  return std::to_string(image.width) + "x" + std::to_string(image.height);
}

}  // namespace

screenshot_difference compare_screenshot(const std::filesystem::path& screenshot,
                                         const std::filesystem::path& expected) {
  const rgba_image shot = load(screenshot);
  const rgba_image want = load(expected);
  if (shot.width != want.width || shot.height != want.height)
    throw std::runtime_error("the screenshot '" + screenshot.string() + "' is " + size_of(shot) + ", the expected '" +
                             expected.string() + "' " + size_of(want));
  screenshot_difference d{static_cast<std::uint32_t>(shot.width), static_cast<std::uint32_t>(shot.height), 0};
  const std::size_t bytes = std::size_t{d.width} * d.height * 4;
  for (std::size_t i = 0; i < bytes; ++i)
    if (i % 4 != 3) d.largest = std::max(d.largest, std::abs(int{shot.pixels.get()[i]} - int{want.pixels.get()[i]}));
  return d;
}

}  // namespace frame_loop
