// ferrum/gpu/builtin_kernels.hpp — kernels that ship with ferrum, in both
// forms (SPIR-V built from gpu/shaders/*.comp, and C++), used by `ferrum run`'s
// checking encoders, the tests and the benchmarks.
//
//   auto writer = device.create_kernel(ferrum::gpu::builtin::write_pattern());
#pragma once

#include "ferrum/gpu/kernel.hpp"

#include <cstdint>

namespace ferrum::gpu::builtin {

// The 32-bit word `word_index` of the pattern of `seed`: an integer hash
// (lowbias32) that the shaders compute bit for bit alike.
[[nodiscard]] constexpr std::uint32_t pattern_word(std::uint32_t seed, std::uint32_t word_index) noexcept {
  std::uint32_t x = seed ^ (word_index * 0x9e3779b1u);
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// write_pattern: primary word i = pattern_word(push[0], i), i counted from the
// range's start.
[[nodiscard]] kernel_source write_pattern() noexcept;

// check_pattern: counts the primary words i that differ from
// pattern_word(push[0], i) and adds the count to the secondary range's first
// word.
[[nodiscard]] kernel_source check_pattern() noexcept;

// affine: primary word i = word * push[0] + push[1] (wrapping). Not
// commutative across submissions, so results show the order they ran in.
[[nodiscard]] kernel_source affine() noexcept;

// image_affine: an image kernel (kernel.hpp): primary texel = secondary
// texel * a + b in every channel, a and b the f32 bits of push[0] and
// push[1], texel (x, y) from texel (x, y). Primary: a storage image,
// secondary: a sampled image, both rgba32-float, the secondary at least
// as wide and tall (a level of a mip chain from the level above it).
[[nodiscard]] kernel_source image_affine() noexcept;

// image_blend: an image kernel that reads its primary too: primary texel =
// primary texel * a + secondary texel * b in every channel (a, b as
// image_affine's), both rgba32-float. Texel (x, y) takes the secondary's
// nearest, (x * secondary width / primary width, y * secondary height /
// primary height) in integers: texel for texel at the same size, each
// texel of a smaller secondary scaled up (a bloom chain's way up, a
// composite of images of several sizes). The primary's access is
// storage-read-write (general), and it holds what it blends into.
[[nodiscard]] kernel_source image_blend() noexcept;

}  // namespace ferrum::gpu::builtin
