// examples/frame_loop/frame_kernels.cpp — the kernels' SPIR-V (built by
// glslc, CMakeLists.txt) and their C++ forms, which follow the shaders
// operation for operation so that both devices draw the same frame (up to the
// last bits of sin and exp).
#include "frame_kernels.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numbers>

namespace frame_loop {
namespace {

constexpr std::uint32_t pattern_spirv[] = {
#include "pattern.spv.inc"
};
constexpr std::uint32_t blur_spirv[] = {
#include "blur.spv.inc"
};
constexpr std::uint32_t tonemap_spirv[] = {
#include "tonemap.spv.inc"
};

// Arena bytes hold no float or uint32_t objects: words go through memcpy.
std::uint32_t load(std::span<const std::byte> bytes, std::size_t word) noexcept {
  std::uint32_t value = 0;
  std::memcpy(&value, bytes.data() + word * 4, 4);
  return value;
}
float load_float(std::span<const std::byte> bytes, std::size_t word) noexcept {
  return std::bit_cast<float>(load(bytes, word));
}
void store_word(std::span<std::byte> bytes, std::size_t word, std::uint32_t value) noexcept {
  std::memcpy(bytes.data() + word * 4, &value, 4);
}
void store_float(std::span<std::byte> bytes, std::size_t word, float value) noexcept {
  store_word(bytes, word, std::bit_cast<std::uint32_t>(value));
}

void pattern_cpu(const ferrum::gpu::kernel_args& args) noexcept {
  const std::uint32_t width = args.push[0];
  const std::uint32_t height = args.push[1];
  const float t = load_float(args.secondary, 0);
  const float glow_x = load_float(args.secondary, 1);
  const float glow_y = load_float(args.secondary, 2);
  const float glow_power = load_float(args.secondary, 3);
  const std::size_t pixels = args.primary.size() / hdr_pixel_bytes;
  for (std::size_t p = 0; p < pixels; ++p) {
    const auto x = static_cast<std::uint32_t>(p % width);
    const auto y = static_cast<std::uint32_t>(p / width);
    const float u = (static_cast<float>(x) + 0.5f) / static_cast<float>(width);
    const float v = (static_cast<float>(y) + 0.5f) / static_cast<float>(height);
    const float checker = (((x / 32u) ^ (y / 32u)) & 1u) == 0u ? 1.0f : 0.6f;
    const float r = (0.5f + 0.5f * std::sin(9.0f * u + t)) * 0.5f * checker;
    const float g = (0.5f + 0.5f * std::sin(7.0f * v - 1.3f * t)) * 0.5f * checker;
    const float b = (0.5f + 0.5f * std::sin(6.0f * (u + v) + 0.7f * t)) * 0.5f * checker;
    const float du = u - glow_x;
    const float dv = v - glow_y;
    const float glow = glow_power * std::exp(-(du * du + dv * dv) * 300.0f);
    store_float(args.primary, 4 * p + 0, r + glow);
    store_float(args.primary, 4 * p + 1, g + glow * 0.75f);
    store_float(args.primary, 4 * p + 2, b + glow * 0.45f);
    store_float(args.primary, 4 * p + 3, 1.0f);
  }
}

void blur_cpu(const ferrum::gpu::kernel_args& args) noexcept {
  const auto width = static_cast<int>(args.push[0]);
  const auto height = static_cast<int>(args.push[1]);
  const auto radius = static_cast<int>(args.push[2]);
  const bool along_columns = args.push[3] != static_cast<std::uint32_t>(blur_axis::rows);
  const auto taps = static_cast<float>(2 * radius + 1);
  const std::size_t count = args.primary.size() / 4;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t channel = i % 4;
    const auto x = static_cast<int>((i / 4) % static_cast<std::size_t>(width));
    const auto y = static_cast<int>((i / 4) / static_cast<std::size_t>(width));
    float sum = 0.0f;
    for (int d = -radius; d <= radius; ++d) {
      const int row = along_columns ? std::clamp(y + d, 0, height - 1) : y;
      const int column = along_columns ? x : std::clamp(x + d, 0, width - 1);
      sum += load_float(args.secondary, static_cast<std::size_t>(row * width + column) * 4 + channel);
    }
    store_float(args.primary, i, sum / taps);
  }
}

std::uint32_t to_byte(float hdr, float exposure) noexcept {
  const float c = hdr * exposure;
  return static_cast<std::uint32_t>(std::sqrt(c / (1.0f + c)) * 255.0f + 0.5f);
}

void tonemap_cpu(const ferrum::gpu::kernel_args& args) noexcept {
  const float exposure = std::bit_cast<float>(args.push[0]);
  const bool bgra = args.push[1] != static_cast<std::uint32_t>(channel_order::rgba);
  const std::size_t count = args.primary.size() / rgba8_pixel_bytes;
  for (std::size_t p = 0; p < count; ++p) {
    const std::uint32_t r = to_byte(load_float(args.secondary, 4 * p + 0), exposure);
    const std::uint32_t g = to_byte(load_float(args.secondary, 4 * p + 1), exposure);
    const std::uint32_t b = to_byte(load_float(args.secondary, 4 * p + 2), exposure);
    store_word(args.primary, p, (bgra ? b | (r << 16) : r | (b << 16)) | (g << 8) | (255u << 24));
  }
}

}  // namespace

pattern_params params_of_frame(std::uint64_t frame) noexcept {
  const float t = static_cast<float>(frame) / 60.0f;
  // The glow circles the centre every four seconds and pulses.
  const float angle = t * std::numbers::pi_v<float> / 2;
  return {.time = t,
          .glow_x = 0.5f + 0.3f * std::cos(angle),
          .glow_y = 0.5f + 0.3f * std::sin(angle),
          .glow_power = 6.0f + 2.0f * std::sin(3.0f * t)};
}

void store(const pattern_params& params, std::span<std::byte> slot) noexcept {
  store_float(slot, 0, params.time);
  store_float(slot, 1, params.glow_x);
  store_float(slot, 2, params.glow_y);
  store_float(slot, 3, params.glow_power);
}

ferrum::gpu::kernel_source pattern_kernel() noexcept {
  return {.name = "frame_loop.pattern", .spirv = pattern_spirv, .cpu = &pattern_cpu, .push_words = 2};
}

ferrum::gpu::kernel_source blur_kernel() noexcept {
  return {.name = "frame_loop.blur", .spirv = blur_spirv, .cpu = &blur_cpu, .push_words = 4};
}

ferrum::gpu::kernel_source tonemap_kernel() noexcept {
  return {.name = "frame_loop.tonemap", .spirv = tonemap_spirv, .cpu = &tonemap_cpu, .push_words = 2};
}

}  // namespace frame_loop
