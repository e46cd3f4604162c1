// examples/frame_loop/frame_check.cpp — the last frame's per-pixel checks
// (frame_check.hpp).
#include "frame_check.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace frame_loop {
namespace {

float float_at(std::span<const std::byte> bytes, std::size_t index) noexcept {
  float value = 0;
  std::memcpy(&value, bytes.data() + index * sizeof value, sizeof value);
  return value;
}

std::string pixel_name(std::size_t at, std::uint32_t width) {
  return "(" + std::to_string(at % width) + ", " + std::to_string(at / width) + ")";
}

void require_size(std::size_t got, std::size_t wanted, const char* what) {
  if (got != wanted)
    throw std::invalid_argument(std::string("frame_loop: ") + what + " holds " + std::to_string(got) +
                                " bytes, not the " + std::to_string(wanted) + " of the frame");
}

}  // namespace

std::size_t raster_difference::edge_bound_allowed() const noexcept {
  return static_cast<std::size_t>(std::floor(edge_differing_bound * static_cast<double>(edge_pixels)));
}

std::string raster_difference::failure() const {
  std::ostringstream why;
  if (!color_passed())
    why << "node/draw's color differs from the host's by " << color.difference << " (relative) at pixel "
        << pixel_name(color.at, width) << ", away from the torus's edges (allowed there: " << color.allowed << ")";
  if (!depth_passed())
    why << (why.tellp() > 0 ? "; " : "") << "node/draw's depth differs from the host's by " << depth.difference
        << " at pixel " << pixel_name(depth.at, width)
        << ", away from the torus's edges (allowed there: " << depth.allowed << ")";
  if (!edges_passed())
    why << (why.tellp() > 0 ? "; " : "") << edge_differing << " of the " << edge_pixels
        << " pixels an edge of the torus crosses differ from the host's (allowed: " << edge_bound_allowed() << ", "
        << edge_differing_bound * 100 << "%)";
  return why.str();
}

raster_difference compare_raster(std::span<const std::byte> color, std::span<const std::byte> depth,
                                 const raster_reference& reference, std::uint32_t width, std::uint32_t height) {
  const std::size_t pixels = std::size_t{width} * height;
  require_size(color.size(), pixels * 4 * sizeof(float), "node/draw's color read back");
  require_size(depth.size(), pixels * sizeof(float), "node/draw's depth read back");
  require_size(reference.color.size() * sizeof(float), pixels * 4 * sizeof(float), "the host's color");
  require_size(reference.depth.size() * sizeof(float), pixels * sizeof(float), "the host's depth");
  require_size(reference.edges.size(), pixels, "the host's edges");
  raster_difference d;
  d.pixels = pixels;
  d.width = width;
  // How much the host's value changes from pixel p to its neighbours on
  // the torus's same surface: channel `channel` of color (4 floats a
  // pixel), or depth. Only where the torus covers p: the pattern around it
  // is computed per pixel, with no sample to move (and its checker's steps
  // would allow much). For a pixel no edge crosses, its covered neighbours
  // no edge crosses either; for an edge pixel, or one whose neighbours
  // edges all cross, its covered neighbours.
  const auto covered = [&](std::size_t q) { return reference.depth[q] < 1.0f; };
  const auto slope = [&](const std::vector<float>& values, std::size_t stride, std::size_t channel, std::size_t p) {
    const std::size_t x = p % width;
    const std::size_t y = p / width;
    std::array<std::size_t, 4> near{};
    std::size_t count = 0;
    if (x > 0) near[count++] = p - 1;
    if (x + 1 < width) near[count++] = p + 1;
    if (y > 0) near[count++] = p - width;
    if (y + 1 < height) near[count++] = p + width;
    const auto change = [&](auto same) {
      float most = -1;
      for (std::size_t k = 0; k < count; ++k)
        if (same(near[k]))
          most = std::max(most, std::abs(values[near[k] * stride + channel] - values[p * stride + channel]));
      return most;
    };
    if (!covered(p)) return 0.0f;
    const float inside =
        reference.edges[p] != 0 ? -1.0f : change([&](std::size_t q) { return covered(q) && reference.edges[q] == 0; });
    return inside >= 0 ? inside : std::max(0.0f, change(covered));
  };
  // Records `difference` (NaN: the largest there is) against `allowed`;
  // whether it is within.
  const auto weigh = [](raster_difference::worst& w, float difference, float allowed, std::size_t p) {
    const float share = std::isnan(difference) ? INFINITY : difference / allowed;
    if (share > w.share) w = {share, difference, allowed, p};
    return share <= 1.0f;
  };
  raster_difference::worst edge_scratch{};
  for (std::size_t p = 0; p < pixels; ++p) {
    const bool edge = reference.edges[p] != 0;
    bool within = true;
    for (std::size_t channel = 0; channel < 4; ++channel) {
      const float want = reference.color[p * 4 + channel];
      const float scale = std::max(1.0f, std::abs(want));
      const float allowed = color_tolerance + slope_share * slope(reference.color, 4, channel, p) / scale;
      within &=
          weigh(edge ? edge_scratch : d.color, std::abs(float_at(color, p * 4 + channel) - want) / scale, allowed, p);
    }
    const float allowed = depth_tolerance + slope_share * slope(reference.depth, 1, 0, p);
    within &= weigh(edge ? edge_scratch : d.depth, std::abs(float_at(depth, p) - reference.depth[p]), allowed, p);
    if (!edge) continue;
    ++d.edge_pixels;
    if (!within) ++d.edge_differing;
  }
  return d;
}

std::string post_difference::failure() const {
  if (passed()) return {};
  return "the post-processed frame differs from the host's blur and tone map of node/draw's color by " +
         std::to_string(largest) + "/255 in a channel at pixel " + pixel_name(at, width) +
         " (allowed: " + std::to_string(post_tolerance) + ")";
}

post_difference compare_post(std::span<const std::byte> device, std::span<const std::byte> host, std::uint32_t width) {
  require_size(device.size(), host.size(), "the device's 8-bit frame");
  if (width == 0 || host.size() % (std::size_t{width} * 4) != 0)
    throw std::invalid_argument("frame_loop: an 8-bit frame of width " + std::to_string(width) + " holds " +
                                std::to_string(host.size()) + " bytes, not whole rows");
  post_difference d;
  d.width = width;
  for (std::size_t i = 0; i < host.size(); ++i) {
    const int off = std::abs(std::to_integer<int>(device[i]) - std::to_integer<int>(host[i]));
    if (off > d.largest) {
      d.largest = off;
      d.at = i / 4;
    }
  }
  return d;
}

}  // namespace frame_loop
