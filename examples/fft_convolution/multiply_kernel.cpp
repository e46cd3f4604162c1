// examples/fft_convolution/multiply_kernel.cpp — multiply.comp's SPIR-V.
#include "multiply_kernel.hpp"

#include <cstdint>

namespace fft_convolution {
namespace {

constexpr std::uint32_t multiply_spirv[] = {
#include "multiply.spv.inc"
};

}  // namespace

ferrum::gpu::kernel_source multiply_kernel() noexcept {
  // No C++ form: the example runs on Vulkan only (its FFTs are native nodes).
  return {.name = "fft_convolution.multiply", .spirv = multiply_spirv, .cpu = nullptr, .push_words = 1};
}

}  // namespace fft_convolution
