// examples/fft_convolution/fft_lane.hpp — a lane's VkFFT plans: the
// engine's per-lane state (ferrum/scheduler/lane_state.hpp).
//
//   options.make_lane_state = fft_convolution::fft_lane::factory(shape);
//   ... in node/forward's encoder:
//   c.state_as<fft_convolution::fft_lane>()->forward->record(command_buffer);
//
// VkFFT binds its descriptor sets to the buffers it is made with, and each
// lane has arenas of its own, so each lane gets its own plans: made when the
// lane's memory is made (over the lane's resource/signal, resource/spectrum
// and resource/output), destroyed before it is freed, when ferrum knows the
// GPU is done with the lane.
#pragma once

#include "fft_reference.hpp"
#include "vkfft_plan.hpp"

#include "ferrum/scheduler/lane_state.hpp"

#include <memory>

namespace fft_convolution {

struct fft_lane final : ferrum::lane_state {
  // Makes both plans on `c`'s lane, holding the device's queue lock (VkFFT
  // may submit set-up work to it). Throws when the lane lacks a resource,
  // one is too small, the device is not a Vulkan device, or VkFFT fails:
  // the lane is then not made (lane_state_failed, with the message).
  fft_lane(const ferrum::lane_state_context& c, const batch_shape& shape);

  // A factory for scheduler_options::make_lane_state.
  [[nodiscard]] static ferrum::lane_state_factory factory(batch_shape shape);

  std::unique_ptr<const vkfft_plan> forward;  // resource/signal -> resource/spectrum
  std::unique_ptr<const vkfft_plan> inverse;  // resource/spectrum -> resource/output
};

}  // namespace fft_convolution
