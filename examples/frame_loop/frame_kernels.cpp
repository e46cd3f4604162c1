// examples/frame_loop/frame_kernels.cpp — the kernels' SPIR-V (built by
// glslc, CMakeLists.txt) and their C++ forms, which follow the shaders
// operation for operation so that both devices draw the same frame (up to the
// last bits of sin and exp). The null device hands a C++ form its images'
// texels, row-major and tightly packed.
#include "frame_kernels.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numbers>
#include <string_view>

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
  const std::uint32_t width = args.primary_extent.width;
  const std::uint32_t height = args.primary_extent.height;
  const float t = load_float(args.secondary, 0);
  const float glow_x = load_float(args.secondary, 1);
  const float glow_y = load_float(args.secondary, 2);
  const float glow_power = load_float(args.secondary, 3);
  for (std::uint32_t y = 0; y < height; ++y) {
    for (std::uint32_t x = 0; x < width; ++x) {
      const float u = (static_cast<float>(x) + 0.5f) / static_cast<float>(width);
      const float v = (static_cast<float>(y) + 0.5f) / static_cast<float>(height);
      const float checker = (((x / 32u) ^ (y / 32u)) & 1u) == 0u ? 1.0f : 0.6f;
      const float r = (0.5f + 0.5f * std::sin(9.0f * u + t)) * 0.5f * checker;
      const float g = (0.5f + 0.5f * std::sin(7.0f * v - 1.3f * t)) * 0.5f * checker;
      const float b = (0.5f + 0.5f * std::sin(6.0f * (u + v) + 0.7f * t)) * 0.5f * checker;
      const float du = u - glow_x;
      const float dv = v - glow_y;
      const float glow = glow_power * std::exp(-(du * du + dv * dv) * 300.0f);
      const std::size_t p = std::size_t{y} * width + x;
      store_float(args.primary, 4 * p + 0, r + glow);
      store_float(args.primary, 4 * p + 1, g + glow * 0.75f);
      store_float(args.primary, 4 * p + 2, b + glow * 0.45f);
      store_float(args.primary, 4 * p + 3, 1.0f);
    }
  }
}

void blur_cpu(const ferrum::gpu::kernel_args& args) noexcept {
  const auto width = static_cast<int>(args.primary_extent.width);
  const auto height = static_cast<int>(args.primary_extent.height);
  const auto radius = static_cast<int>(args.push[0]);
  const bool along_columns = args.push[1] != static_cast<std::uint32_t>(blur_axis::rows);
  const auto taps = static_cast<float>(2 * radius + 1);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (std::size_t channel = 0; channel < 4; ++channel) {
        float sum = 0.0f;
        for (int d = -radius; d <= radius; ++d) {
          const int row = along_columns ? std::clamp(y + d, 0, height - 1) : y;
          const int column = along_columns ? x : std::clamp(x + d, 0, width - 1);
          sum += load_float(args.secondary, static_cast<std::size_t>(row * width + column) * 4 + channel);
        }
        store_float(args.primary, static_cast<std::size_t>(y * width + x) * 4 + channel, sum / taps);
      }
    }
  }
}

std::uint32_t to_byte(float hdr, float exposure) noexcept {
  const float c = hdr * exposure;
  return static_cast<std::uint32_t>(std::sqrt(c / (1.0f + c)) * 255.0f + 0.5f);
}

void tonemap_cpu(const ferrum::gpu::kernel_args& args) noexcept {
  const float exposure = std::bit_cast<float>(args.push[0]);
  const bool bgra = args.push[1] != static_cast<std::uint32_t>(channel_order::rgba);
  const std::size_t count = std::size_t{args.primary_extent.width} * args.primary_extent.height;
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

namespace {

// Each an image kernel (gpu/shaders/image_kernel_abi.glsl): a storage image
// primary, one invocation per texel in 8 x 8 workgroups.
ferrum::gpu::kernel_source image_kernel(std::string_view name, std::span<const std::uint32_t> spirv,
                                        ferrum::gpu::cpu_kernel cpu, std::uint32_t push_words,
                                        ferrum::gpu::kernel_operand_kind secondary) noexcept {
  return {.name = name,
          .spirv = spirv,
          .cpu = cpu,
          .push_words = push_words,
          .local_size_x = 8,
          .local_size_y = 8,
          .primary = ferrum::gpu::kernel_operand_kind::storage_image,
          .secondary = secondary};
}

}  // namespace

ferrum::gpu::kernel_source pattern_kernel() noexcept {
  return image_kernel("frame_loop.pattern", pattern_spirv, &pattern_cpu, 0, ferrum::gpu::kernel_operand_kind::buffer);
}

ferrum::gpu::kernel_source blur_kernel() noexcept {
  return image_kernel("frame_loop.blur", blur_spirv, &blur_cpu, 2, ferrum::gpu::kernel_operand_kind::sampled_image);
}

ferrum::gpu::kernel_source tonemap_kernel() noexcept {
  return image_kernel("frame_loop.tonemap", tonemap_spirv, &tonemap_cpu, 2,
                      ferrum::gpu::kernel_operand_kind::sampled_image);
}

}  // namespace frame_loop
