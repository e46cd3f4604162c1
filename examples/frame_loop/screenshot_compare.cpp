// examples/frame_loop/screenshot_compare.cpp — a frame against the expected
// one (screenshot_compare.hpp).
#include "screenshot_compare.hpp"

#include <stb_image.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace frame_loop {
namespace {

struct rgba_image {
  std::unique_ptr<unsigned char, void (*)(void*)> pixels{nullptr, &stbi_image_free};
  int width = 0, height = 0;

  [[nodiscard]] std::span<const std::byte> bytes() const noexcept {
    return {reinterpret_cast<const std::byte*>(pixels.get()), static_cast<std::size_t>(width) * height * 4};
  }
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

frame_difference compare_frames(std::span<const std::byte> a, std::span<const std::byte> b,
                                std::span<const std::uint8_t> edges, std::uint32_t width, std::uint32_t height,
                                int allowed, std::optional<pixel_region> region) {
  frame_difference d{width, height, 0, 0, 0, 0, 0};
  const std::size_t pixels = std::size_t{width} * height;
  for (std::size_t p = 0; p < pixels; ++p) {
    int largest = 0;
    for (std::size_t channel = 0; channel < 3; ++channel)
      largest =
          std::max(largest, std::abs(static_cast<int>(a[p * 4 + channel]) - static_cast<int>(b[p * 4 + channel])));
    if (region && region->contains(static_cast<std::uint32_t>(p % width), static_cast<std::uint32_t>(p / width))) {
      ++d.region_pixels;
      if (largest > allowed) ++d.region_differing;
    } else if (edges[p] == 0) {
      d.largest = std::max(d.largest, largest);
    } else {
      ++d.edge_pixels;
      if (largest > allowed) ++d.edge_differing;
    }
  }
  return d;
}

frame_difference compare_screenshot(const std::filesystem::path& screenshot, const std::filesystem::path& expected,
                                    const std::filesystem::path& edges, int allowed,
                                    std::optional<pixel_region> region) {
  const rgba_image shot = load(screenshot);
  const rgba_image want = load(expected);
  const rgba_image near_edge = load(edges);
  for (const auto& [path, image] : {std::pair{&expected, &want}, {&edges, &near_edge}})
    if (shot.width != image->width || shot.height != image->height)
      throw std::runtime_error("the screenshot '" + screenshot.string() + "' is " + size_of(shot) + ", '" +
                               path->string() + "' " + size_of(*image));
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(shot.width) * shot.height);
  for (std::size_t p = 0; p < mask.size(); ++p) mask[p] = near_edge.pixels.get()[p * 4] != 0 ? 1 : 0;
  return compare_frames(shot.bytes(), want.bytes(), mask, static_cast<std::uint32_t>(shot.width),
                        static_cast<std::uint32_t>(shot.height), allowed, region);
}

pixel_region read_region(const std::filesystem::path& file) {
  std::ifstream in(file);
  pixel_region r;
  if (!(in >> r.x >> r.y >> r.width >> r.height))
    throw std::runtime_error("cannot read '" + file.string() + "' as a region: four whole numbers, x y width height");
  return r;
}

void write_region(const std::filesystem::path& file, const pixel_region& region) {
  std::ofstream out(file);
  out << region.x << ' ' << region.y << ' ' << region.width << ' ' << region.height << '\n';
  out.close();
  if (!out) throw std::runtime_error("cannot write '" + file.string() + "'");
}

}  // namespace frame_loop
