// examples/fft_convolution/multiply_kernel.hpp — the ferrum kernel between
// the two FFTs: spectra times the kernel's spectrum (shaders/multiply.comp,
// compiled by glslc at build time; Vulkan only, like the example).
//
//   auto multiply = device.create_kernel(fft_convolution::multiply_kernel()).value();
//   list.dispatch(*multiply, spectrum, filter, std::array<std::uint32_t, 1>{points}).value();
#pragma once

#include "ferrum/gpu/kernel.hpp"

namespace fft_convolution {

// Primary: the spectra (complex f32, in place); secondary: the kernel's
// spectrum (one signal's worth). Push words: the points per signal.
[[nodiscard]] ferrum::gpu::kernel_source multiply_kernel() noexcept;

}  // namespace fft_convolution
