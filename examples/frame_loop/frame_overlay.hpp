// examples/frame_loop/frame_overlay.hpp — --overlay: a Dear ImGui window over
// the presented frames (Debian's libimgui-dev 1.86 and its Vulkan backend),
// drawn by node/overlay of each frame's wave in the node's native scope,
// over the swapchain image as its color attachment (plan_for_size), with the
// numbers the summary prints, live: frames/s, frame time, each pass's GPU
// time from the waves' timestamps, lanes in flight and memory.
//
//   frame_loop::frame_overlay overlay(device, presenter.format());
//   settings.make_lane_state = overlay.lane_factory();  // ImGui's state per lane
//   // in node/overlay's encoder:
//   overlay.draw(c, *c.image("image/present"), frame, numbers);
//
// What belongs to a frame in flight belongs to its lane
// (ferrum/scheduler/lane_state.hpp): each lane has its own ImGui context and
// Vulkan backend — its vertex and index buffers, which ImGui rewrites every
// frame, its font image and descriptor set, its pipeline — so frames in
// flight never share them, and a lane rewrites them only once its previous
// wave's fence is reached. The font image is uploaded when the lane is made
// (a submission of its own, under the queue's lock).
//
// ImGui's current context is one process-wide pointer, so one lane's
// overlay is drawn at a time (a mutex held from NewFrame to the recorded
// draws): the other nodes of the waves run concurrently as before. 1.86's
// backend makes its pipeline for a VkRenderPass (dynamic rendering came in
// 1.89), so node/overlay records a render pass over the image, with the
// load and store ops and the layout the plan gave it (node_image). ImGui's
// draws change every frame, so --overlay runs without replay.
#pragma once

#include "screenshot_compare.hpp"

#include "ferrum/gpu/device.hpp"
#include "ferrum/image.hpp"
#include "ferrum/scheduler/scheduler_options.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace frame_loop {

// What the overlay shows: the summary's numbers over the frames completed
// before the frame was submitted.
struct overlay_numbers {
  double frames_per_second = 0;
  double frame_ms = 0;  // p50, submit to completion
  double gpu_ms = 0;    // p50, first pass begin to last pass end
  struct pass {
    std::string name;
    double gpu_ms = 0;  // p50
  };
  std::vector<pass> passes;
  std::uint32_t in_flight = 0;
  std::uint32_t lanes = 0;
  double lane_mib = 0;  // the memory of the lanes made
};

class frame_overlay {
 public:
  // For swapchain images of `format` on `device`, a Vulkan device. Throws
  // std::runtime_error when it is not one, or Vulkan refuses.
  frame_overlay(ferrum::gpu::device& device, ferrum::image_format format);
  frame_overlay(const frame_overlay&) = delete;
  frame_overlay& operator=(const frame_overlay&) = delete;
  // After every lane's state (the scheduler's lanes) is gone.
  ~frame_overlay();

  // scheduler_options::make_lane_state: each lane's ImGui context and
  // backend. The factory fails the lane with lane_state_failed when ImGui's
  // backend or the font upload fails. Valid while this object lives.
  [[nodiscard]] ferrum::lane_state_factory lane_factory();

  // Records frame `frame`'s overlay, showing `numbers`, over `target` (the
  // node's color attachment, the swapchain image: its whole extent) in node
  // `c`'s native scope, on `c`'s lane state. Throws std::runtime_error when
  // the lane has no overlay state or Vulkan refuses.
  void draw(const ferrum::encode_context& c, const ferrum::node_image& target, std::uint32_t width,
            std::uint32_t height, std::uint64_t frame, const overlay_numbers& numbers) const;

  // The window's region in the latest frame drawn (by frame number); all 0
  // before any.
  [[nodiscard]] pixel_region latest_region() const;

 private:
  friend class overlay_lane;

  VkDevice vk_device_ = VK_NULL_HANDLE;
  // One render pass per load and store op (ferrum::attachment_load,
  // attachment_store): all compatible, so ImGui's pipeline, made for the
  // first, draws in each.
  std::array<VkRenderPass, 6> render_passes_{};
  // Under the ImGui lock (frame_overlay.cpp).
  mutable std::uint64_t latest_frame_ = 0;
  mutable pixel_region latest_region_{};

  [[nodiscard]] VkRenderPass render_pass(ferrum::attachment_load load, ferrum::attachment_store store) const noexcept;
  void destroy_render_passes() noexcept;
};

}  // namespace frame_loop
