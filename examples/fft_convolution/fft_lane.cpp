// examples/fft_convolution/fft_lane.cpp — a lane's VkFFT plans (fft_lane.hpp).
#include "fft_lane.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace fft_convolution {
namespace {

buffer_range lane_range(const ferrum::lane_state_context& c, std::string_view id, std::size_t bytes) {
  const ferrum::native_buffer b = c.resource(id);
  if (b.buffer == 0 || b.size < bytes)
    throw std::runtime_error(std::string(id) + " holds " + std::to_string(b.size) + " bytes on lane " +
                             std::to_string(c.lane) + "; the example needs " + std::to_string(bytes));
  return {ferrum::gpu::vulkan_buffer(b.buffer), b.offset};
}

vulkan_target target_of(const ferrum::gpu::device& device) {
  const std::optional<ferrum::gpu::vulkan_native_handles> vk = ferrum::gpu::native_handles(device);
  if (!vk) throw std::runtime_error("VkFFT's plans need a Vulkan device, not " + std::string(device.kind()));
  return {vk->physical_device, vk->device, vk->queue, vk->queue_family};
}

}  // namespace

fft_lane::fft_lane(const ferrum::lane_state_context& c, const batch_shape& shape) {
  const vulkan_target target = target_of(c.device);
  const buffer_range signal = lane_range(c, "resource/signal", shape.bytes());
  const buffer_range spectrum = lane_range(c, "resource/spectrum", shape.bytes());
  const buffer_range output = lane_range(c, "resource/output", shape.bytes());
  // VkFFT may submit set-up work (its look-up tables) to ferrum's queue,
  // which Vulkan requires to be externally synchronized with ferrum's own
  // submissions: the queue's lock. It is held while VkFFT compiles its
  // shaders too (VkFFT gives no hook around its submissions alone); the
  // example's lanes are made when the scheduler is, before any wave runs.
  const auto held = c.device.queue().lock();
  forward = std::make_unique<const vkfft_plan>(target, fft_shape{shape.points, shape.batch, fft_direction::forward},
                                               signal, spectrum);
  inverse = std::make_unique<const vkfft_plan>(target, fft_shape{shape.points, shape.batch, fft_direction::inverse},
                                               spectrum, output);
}

ferrum::lane_state_factory fft_lane::factory(batch_shape shape) {
  return [shape](const ferrum::lane_state_context& c) -> ferrum::lane_state_result {
    return std::unique_ptr<ferrum::lane_state>(std::make_unique<fft_lane>(c, shape));
  };
}

}  // namespace fft_convolution
