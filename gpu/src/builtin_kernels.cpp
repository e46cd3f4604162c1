#include "ferrum/gpu/builtin_kernels.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

namespace ferrum::gpu::builtin {
namespace {

// SPIR-V words emitted by glslc at build time (gpu/CMakeLists.txt).
constexpr std::uint32_t write_pattern_spirv[] = {
#include "write_pattern.spv.inc"
};
constexpr std::uint32_t check_pattern_spirv[] = {
#include "check_pattern.spv.inc"
};
constexpr std::uint32_t affine_spirv[] = {
#include "affine.spv.inc"
};
constexpr std::uint32_t image_affine_spirv[] = {
#include "image_affine.spv.inc"
};
constexpr std::uint32_t image_blend_spirv[] = {
#include "image_blend.spv.inc"
};

// The CPU forms move an operand's words through a local block, one memcpy
// each way (arena bytes carry no uint32_t objects). A sanitizer checks a copy
// as one range: a memcpy per word made the null device's waves under tsan
// spend most of their time in range checks of 4 bytes (docs/building.md).
constexpr std::size_t block_words = 1024;
using word_block = std::array<std::uint32_t, block_words>;

// Calls fn(first, count) for consecutive blocks of at most block_words of the
// first `words` words.
template <class Fn>
void for_each_block(std::size_t words, Fn fn) {
  for (std::size_t first = 0; first < words; first += block_words) fn(first, std::min(block_words, words - first));
}

void load(std::span<const std::byte> bytes, std::size_t first, std::span<std::uint32_t> words) noexcept {
  std::memcpy(words.data(), bytes.data() + first * 4, words.size_bytes());
}

void store(std::span<std::byte> bytes, std::size_t first, std::span<const std::uint32_t> words) noexcept {
  std::memcpy(bytes.data() + first * 4, words.data(), words.size_bytes());
}

void write_pattern_cpu(const kernel_args& args) noexcept {
  word_block block;
  for_each_block(args.primary.size() / 4, [&](std::size_t first, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i)
      block[i] = pattern_word(args.push[0], static_cast<std::uint32_t>(first + i));
    store(args.primary, first, std::span(block).first(count));
  });
}

void check_pattern_cpu(const kernel_args& args) noexcept {
  word_block block;
  std::uint32_t mismatches = 0;
  for_each_block(args.primary.size() / 4, [&](std::size_t first, std::size_t count) {
    load(args.primary, first, std::span(block).first(count));
    for (std::size_t i = 0; i < count; ++i)
      mismatches += block[i] != pattern_word(args.push[0], static_cast<std::uint32_t>(first + i)) ? 1u : 0u;
  });
  if (mismatches != 0 && args.secondary.size() >= 4) {
    std::uint32_t count = 0;
    load(args.secondary, 0, std::span(&count, 1));
    count += mismatches;
    store(args.secondary, 0, std::span(&count, 1));
  }
}

void affine_cpu(const kernel_args& args) noexcept {
  word_block block;
  for_each_block(args.primary.size() / 4, [&](std::size_t first, std::size_t count) {
    const std::span words = std::span(block).first(count);
    load(args.primary, first, words);
    for (std::uint32_t& word : words) word = word * args.push[0] + args.push[1];
    store(args.primary, first, words);
  });
}

void image_affine_cpu(const kernel_args& args) noexcept {
  // Four f32 channels a texel, row-major: primary texel (x, y) from the
  // secondary's (x, y), as the shader's texelFetch; one past the
  // secondary's edge reads 0.
  const float a = std::bit_cast<float>(args.push[0]);
  const float b = std::bit_cast<float>(args.push[1]);
  const std::size_t row = std::size_t{args.primary_extent.width} * 4;
  const std::size_t source_row = std::size_t{args.secondary_extent.width} * 4;
  word_block block;
  for (std::size_t y = 0; y < args.primary_extent.height; ++y) {
    const std::size_t inside = y < args.secondary_extent.height ? std::min(row, source_row) : 0;
    for_each_block(row, [&](std::size_t first, std::size_t count) {
      const std::span words = std::span(block).first(count);
      const std::size_t read = first < inside ? std::min(count, inside - first) : 0;
      load(args.secondary, y * source_row + first, words.first(read));
      std::fill(words.begin() + static_cast<std::ptrdiff_t>(read), words.end(), 0u);
      for (std::uint32_t& word : words) word = std::bit_cast<std::uint32_t>(std::bit_cast<float>(word) * a + b);
      store(args.primary, y * row + first, words);
    });
  }
}

void image_blend_cpu(const kernel_args& args) noexcept {
  // Four f32 channels a texel, row-major, as image_affine's; texel (x, y)
  // from the secondary's (x * its width / the primary's, likewise y), as
  // the shader's integer division.
  const float a = std::bit_cast<float>(args.push[0]);
  const float b = std::bit_cast<float>(args.push[1]);
  const image_extent to = args.primary_extent;
  const image_extent from = args.secondary_extent;
  for (std::size_t y = 0; y < to.height; ++y) {
    const std::size_t sy = y * from.height / to.height;
    for (std::size_t x = 0; x < to.width; ++x) {
      const std::size_t sx = x * from.width / to.width;
      std::array<float, 4> texel{}, source{};
      std::memcpy(texel.data(), args.primary.data() + (y * to.width + x) * 16, 16);
      std::memcpy(source.data(), args.secondary.data() + (sy * from.width + sx) * 16, 16);
      for (std::size_t c = 0; c < 4; ++c) texel[c] = texel[c] * a + source[c] * b;
      std::memcpy(args.primary.data() + (y * to.width + x) * 16, texel.data(), 16);
    }
  }
}

}  // namespace

kernel_source write_pattern() noexcept {
  return {.name = "write_pattern", .spirv = write_pattern_spirv, .cpu = &write_pattern_cpu, .push_words = 1};
}

kernel_source check_pattern() noexcept {
  return {.name = "check_pattern", .spirv = check_pattern_spirv, .cpu = &check_pattern_cpu, .push_words = 1};
}

kernel_source affine() noexcept {
  return {.name = "affine", .spirv = affine_spirv, .cpu = &affine_cpu, .push_words = 2};
}

kernel_source image_affine() noexcept {
  return {.name = "image_affine",
          .spirv = image_affine_spirv,
          .cpu = &image_affine_cpu,
          .push_words = 2,
          .local_size_x = 8,
          .local_size_y = 8,
          .primary = kernel_operand_kind::storage_image,
          .secondary = kernel_operand_kind::sampled_image};
}

kernel_source image_blend() noexcept {
  return {.name = "image_blend",
          .spirv = image_blend_spirv,
          .cpu = &image_blend_cpu,
          .push_words = 2,
          .local_size_x = 8,
          .local_size_y = 8,
          .primary = kernel_operand_kind::storage_image,
          .secondary = kernel_operand_kind::sampled_image};
}

}  // namespace ferrum::gpu::builtin
