// examples/frame_loop/frame_kernels.hpp — the compute kernels of the
// frame_loop example (pattern, blur, tonemap; blur runs twice a frame, once
// per axis), each in both forms (SPIR-V built from shaders/*.comp for
// the Vulkan device, C++ for the null device), and the parameters that
// node/pattern's binding slot carries to the GPU.
//
//   auto pattern = device.create_kernel(frame_loop::pattern_kernel()).value();
//   frame_loop::store(frame_loop::params_of_frame(frame), slot_bytes);
//   list.dispatch(*pattern, gpu::image_operand{&hdr}, slot, {}).value();
//
// Each kernel writes a whole storage image, its primary, one invocation per
// texel (ferrum/gpu/kernel.hpp): HDR images are rgba32-float, the tone
// map's image rgba8-unorm (its channels in RGBA order, as PNG stores them,
// or BGRA when the tone map is asked for it). What a kernel reads is a
// sampled image of the primary's size, or the pattern's parameter slot.
#pragma once

#include "ferrum/gpu/kernel.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace frame_loop {

inline constexpr std::size_t hdr_pixel_bytes = 16;
inline constexpr std::size_t rgba8_pixel_bytes = 4;

// What node/pattern's slot holds for one frame: four f32 words, in this order.
struct pattern_params {
  float time = 0;    // seconds of animation
  float glow_x = 0;  // the glow's centre, in [0, 1] image coordinates
  float glow_y = 0;
  float glow_power = 0;  // its peak radiance: above 1, so the tone map matters
};
inline constexpr std::size_t pattern_params_bytes = 16;

// The parameters of frame `frame` (0, 1, ...) at 60 frames per second of
// animation: a function of the frame number alone, so a frame can be
// rendered again on the host to check it.
[[nodiscard]] pattern_params params_of_frame(std::uint64_t frame) noexcept;

// Writes `params` as the shader reads them into the first
// pattern_params_bytes bytes of `slot`, which must hold that many.
void store(const pattern_params& params, std::span<std::byte> slot) noexcept;

// pattern: the frame's HDR image. Primary: the image; secondary: a
// pattern_params slot (a range). No push words.
[[nodiscard]] ferrum::gpu::kernel_source pattern_kernel() noexcept;

// Which half of the separable box blur a blur dispatch runs.
enum class blur_axis : std::uint32_t { rows = 0, columns = 1 };

// blur: one half of a separable box blur, clamped at the edges: the mean of
// the 2 * radius + 1 pixels around each pixel along `axis`. Rows then columns
// make the square box blur, at 2 (2 r + 1) reads per pixel instead of
// (2 r + 1)^2. Primary: the blurred HDR image; secondary: the source HDR
// image, sampled. Push words: radius, axis.
[[nodiscard]] ferrum::gpu::kernel_source blur_kernel() noexcept;

// The byte order of the tone map's 8-bit pixels: RGBA (as PNG stores it,
// and the host checks it), or BGRA for a swapchain whose images are
// (--present).
enum class channel_order : std::uint32_t { rgba = 0, bgra = 1 };

// tonemap: exposure, Reinhard's c / (1 + c), gamma 2, to 8 bits. Primary:
// the 8-bit image; secondary: the HDR image, sampled. Push words: the
// exposure's f32 bits, the channel_order.
[[nodiscard]] ferrum::gpu::kernel_source tonemap_kernel() noexcept;

}  // namespace frame_loop
