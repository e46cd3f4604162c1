#include "ferrum/gpu/builtin_kernels.hpp"

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

// The CPU forms use memcpy: arena bytes carry no uint32_t objects.
std::uint32_t load(std::span<std::byte> bytes, std::size_t word) noexcept {
  std::uint32_t value = 0;
  std::memcpy(&value, bytes.data() + word * 4, 4);
  return value;
}

void store(std::span<std::byte> bytes, std::size_t word, std::uint32_t value) noexcept {
  std::memcpy(bytes.data() + word * 4, &value, 4);
}

void write_pattern_cpu(const kernel_args& args) noexcept {
  const std::size_t words = args.primary.size() / 4;
  for (std::size_t i = 0; i < words; ++i)
    store(args.primary, i, pattern_word(args.push[0], static_cast<std::uint32_t>(i)));
}

void check_pattern_cpu(const kernel_args& args) noexcept {
  const std::size_t words = args.primary.size() / 4;
  std::uint32_t mismatches = 0;
  for (std::size_t i = 0; i < words; ++i)
    mismatches += load(args.primary, i) != pattern_word(args.push[0], static_cast<std::uint32_t>(i)) ? 1u : 0u;
  if (mismatches != 0 && args.secondary.size() >= 4) store(args.secondary, 0, load(args.secondary, 0) + mismatches);
}

void affine_cpu(const kernel_args& args) noexcept {
  const std::size_t words = args.primary.size() / 4;
  for (std::size_t i = 0; i < words; ++i) store(args.primary, i, load(args.primary, i) * args.push[0] + args.push[1]);
}

void image_affine_cpu(const kernel_args& args) noexcept {
  // The images' texels: four f32 channels each, row-major, of one size.
  const float a = std::bit_cast<float>(args.push[0]);
  const float b = std::bit_cast<float>(args.push[1]);
  const std::size_t words = std::size_t{args.primary_extent.width} * args.primary_extent.height * 4;
  for (std::size_t i = 0; i < words; ++i)
    store(args.primary, i, std::bit_cast<std::uint32_t>(std::bit_cast<float>(load(args.secondary, i)) * a + b));
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

}  // namespace ferrum::gpu::builtin
