// examples/fft_convolution/vkfft_plan.hpp — one VkFFT application (a batch of
// 1-D complex FFTs, out of place, one direction) bound to fixed buffer
// ranges, whose commands an engine records into its own command buffer.
//
//   fft_convolution::vkfft_plan forward(vulkan, {.points = 4096, .batch = 16,
//                                                .direction = fft_convolution::fft_direction::forward},
//                                       {signal, signal_offset}, {spectrum, spectrum_offset});
//   forward.record(command_buffer);   // any number of times, into any command buffers
//
// VkFFT (Debian's libvkfft-dev) makes its pipelines and descriptor sets when
// the plan is made, with the buffers bound in them: a plan reads and writes
// only the ranges it was made with, so an engine makes one per set of
// buffers (in ferrum, per lane: fft_lane.hpp). This header keeps vkFFT.h
// out: it is ~33,000 lines of static functions, compiled once, in
// vkfft_plan.cpp.
#pragma once

#include <vulkan/vulkan_core.h>

#include <cstdint>
#include <memory>

namespace fft_convolution {

enum class fft_direction : std::uint8_t { forward, inverse };

// What a plan transforms: `batch` signals of `points` complex f32 values
// (interleaved real, imaginary), each signal's points contiguous, signals one
// after another. Forward is VkFFT's (and FFTW's) e^{-2 pi i j k / n};
// inverse is e^{+...}, not normalized (scale by 1 / points yourself).
struct fft_shape {
  std::uint64_t points = 0;
  std::uint64_t batch = 0;
  fft_direction direction = fft_direction::forward;

  [[nodiscard]] std::uint64_t bytes() const noexcept { return points * batch * 8; }
};

// The Vulkan objects a plan is made on. VkFFT creates its pipelines on
// `device`; it may submit set-up work (its look-up tables) to `queue` from
// its own command pool and fence, which the plan makes on `queue_family` and
// owns.
struct vulkan_target {
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  std::uint32_t queue_family = 0;
};

// A range of a buffer, at least fft_shape::bytes() long from `offset`.
struct buffer_range {
  VkBuffer buffer = VK_NULL_HANDLE;
  std::uint64_t offset = 0;
};

class vkfft_plan {
 public:
  // Makes the plan over `input` (read) and `output` (written), which must not
  // overlap. The caller holds the queue's external-synchronization lock
  // (ferrum: device.queue().lock()) for the call: VkFFT may submit to it.
  // Throws std::runtime_error naming VkFFT's error code (or the Vulkan call)
  // when it fails.
  vkfft_plan(const vulkan_target& target, const fft_shape& shape, buffer_range input, buffer_range output);
  vkfft_plan(const vkfft_plan&) = delete;
  vkfft_plan& operator=(const vkfft_plan&) = delete;
  // The GPU must be done with every command buffer the plan recorded into.
  ~vkfft_plan();

  // Records the transform into `command_buffer` (recording, outside a render
  // pass): VkFFT's dispatches, which read `input` and write `output`, and its
  // own barriers between them. It submits nothing. Throws std::runtime_error
  // naming VkFFT's error code when it fails. Thread safety: one thread at a
  // time per plan.
  void record(VkCommandBuffer command_buffer) const;

  [[nodiscard]] const fft_shape& shape() const noexcept { return shape_; }

 private:
  struct application;
  fft_shape shape_;
  std::unique_ptr<application> app_;
};

}  // namespace fft_convolution
