// fft_convolution_floor.hpp — the floor of bench/fft_convolution.cpp: the
// least code that runs fft_convolution's work (VkFFT forward, the multiply
// kernel, VkFFT inverse) with plain Vulkan, VkFFT's own way: K sets of
// buffers, each with its command buffer recorded once, then a loop of
// submissions keeping K in flight on one timeline semaphore.
//
//   fft_floor floor(device, shape, sets, multiply_spirv);   // buffers, plans, recording
//   const std::uint64_t first = floor.run(first_input, n);  // n convolutions
//   double error = floor.max_error(reference);            // each set's last result
//
// It runs on the ferrum device's VkDevice and VkQueue (gpu::native_handles),
// taking the device's queue lock around each vkQueueSubmit, so both sides of
// the benchmark use the same device, queue and driver. Per set: one buffer
// of the memory ferrum gives an `upload` pool (the signals, then the
// kernel's spectrum), one of a `device` pool (the spectra) and one of a
// `readback` pool (the results), found the way ferrum's Vulkan arenas find
// theirs (gpu/src/vulkan/vulkan_arena.cpp); where ferrum would stage
// (no host-visible device-local memory), the floor takes host-visible
// memory instead and says so (staged()).
//
// The multiply is ferrum's own kernel (its SPIR-V) through a plain Vulkan
// compute pipeline laid out as ferrum's kernel ABI (gpu/shaders/
// kernel_abi.glsl: the spectra's buffer in set 0, the kernel spectrum's in
// set 1, four range words and the points as push constants), dispatched
// with the workgroups ferrum's command list would use: the same GPU work.
#pragma once

#include "fft_reference.hpp"

#include "ferrum/gpu/device.hpp"

#include <cstdint>
#include <memory>
#include <span>

namespace ferrum::bench {

class fft_floor {
 public:
  // Throws
  // std::runtime_error when `device` is not a Vulkan device or a Vulkan call
  // or VkFFT fails.
  fft_floor(gpu::device& device, const fft_convolution::batch_shape& shape, std::size_t sets,
            std::span<const std::uint32_t> multiply_spirv);
  fft_floor(const fft_floor&) = delete;
  fft_floor& operator=(const fft_floor&) = delete;
  // Waits for the floor's last submission.
  ~fft_floor();

  // Runs `count` convolutions, the i-th on input number `first + i`
  // (convolution_reference::write_signals), set i % sets: waits for the set's
  // previous submission, writes the signals and the kernel's spectrum,
  // submits its recorded command buffer; then waits for the last. Throws
  // std::runtime_error when a Vulkan call fails.
  void run(std::uint64_t first, std::uint64_t count, const fft_convolution::convolution_reference& reference);

  // The largest difference between each set's last result and FFTW's (0
  // before any run).
  [[nodiscard]] double max_error(const fft_convolution::convolution_reference& reference) const;

  // Whether ferrum would stage the upload or readback memory here, where the
  // floor maps host-visible memory instead.
  [[nodiscard]] bool staged() const noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace ferrum::bench
