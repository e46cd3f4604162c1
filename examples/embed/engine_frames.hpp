// examples/embed/engine_frames.hpp — the engine's own GPU work around each
// frame's wave, on its own queue, with plain Vulkan: before the wave it
// writes the frame's data into ferrum's inbox arena (vkCmdUpdateBuffer) and
// signals its `produced` timeline at the frame's number; after the wave it
// copies ferrum's outbox arena into a buffer of its own (vkCmdCopyBuffer),
// waiting on the `wave_done` timeline the wave signals.
//
//   auto engine = engine_frames::create(vk, inbox, outbox, region_bytes, frames_in_flight).value();
//   engine->produce(ring_index, frame, data).value();   // then submit the wave, waiting on produced() = frame
//   ... the wave completed, having signalled wave_done(ring_index) = frame:
//   engine->read_back(ring_index, frame).value();        // true once the copy is done
//   engine->readback(ring_index)                         // the bytes the engine copied
//
// The semaphores are the engine's (vkCreateSemaphore); ferrum waits on and
// signals them through ferrum::gpu::import_vulkan_semaphore. Destroy this
// after ferrum's device, before engine_vulkan.
#pragma once

#include "engine_vulkan.hpp"

#include "ferrum/error.hpp"

#include <vulkan/vulkan_core.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

class engine_frames {
 public:
  // `inbox` and `outbox` are ferrum arenas' VkBuffers (arena::native_handle),
  // with `frames_in_flight` regions each: `in_bytes` per region of the inbox,
  // `out_bytes` of the outbox. Errors: the failing call's code.
  [[nodiscard]] static ferrum::result<std::unique_ptr<engine_frames>> create(engine_vulkan& vk, VkBuffer inbox,
                                                                             VkBuffer outbox, std::size_t in_bytes,
                                                                             std::size_t out_bytes,
                                                                             std::size_t frames_in_flight);
  engine_frames(const engine_frames&) = delete;
  engine_frames& operator=(const engine_frames&) = delete;
  // Waits for the queue to go idle, then destroys what it made.
  ~engine_frames();

  // The engine's timelines: `produced` reaches frame F once F's data is in
  // the inbox; the wave of ring slot r signals `wave_done(r)` at its frame.
  // One wave_done per ring slot: waves may complete (and signal) out of
  // frame order, a timeline's values may not go backwards, and a slot's
  // frames run one after another.
  [[nodiscard]] VkSemaphore produced() const noexcept { return produced_; }
  [[nodiscard]] VkSemaphore wave_done(std::size_t ring_index) const noexcept { return wave_done_[ring_index]; }

  // Records and submits the engine's write of `data` (in_bytes) into the
  // inbox region of `ring_index`, signalling produced() = `frame` (frames in
  // increasing order). It waits on the slot's previous wave (which read the
  // region), when that one signalled.
  [[nodiscard]] ferrum::result<void> produce(std::size_t ring_index, std::uint64_t frame,
                                             std::span<const std::uint32_t> data);

  // Submits the engine's copy of the outbox region of `ring_index` into its
  // own readback buffer, waiting on wave_done(ring_index) = `frame`, and
  // waits (on the host) until it is done: false when that took over 10 s.
  // Only once the wave has submitted its signal (has completed): on one
  // queue a wait submitted before its signal holds the signal back forever.
  [[nodiscard]] ferrum::result<bool> read_back(std::size_t ring_index, std::uint64_t frame);

  // What read_back copied for `ring_index` (out_bytes).
  [[nodiscard]] std::span<const std::byte> readback(std::size_t ring_index) const noexcept;

 private:
  explicit engine_frames(engine_vulkan& vk) noexcept : vk_(vk) {}

  [[nodiscard]] ferrum::result<void> submit(VkCommandBuffer buffer, std::span<const VkSemaphore> waits,
                                            std::span<const std::uint64_t> wait_values, VkSemaphore signal,
                                            std::uint64_t signal_value);

  engine_vulkan& vk_;
  VkBuffer inbox_ = VK_NULL_HANDLE;
  VkBuffer outbox_ = VK_NULL_HANDLE;
  std::size_t in_bytes_ = 0;
  std::size_t out_bytes_ = 0;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  std::vector<VkCommandBuffer> produce_;    // per ring slot
  std::vector<VkCommandBuffer> read_back_;  // per ring slot
  VkSemaphore produced_ = VK_NULL_HANDLE;
  std::vector<VkSemaphore> wave_done_;
  std::vector<std::uint64_t> wave_signalled_;  // per ring slot: the last frame whose wave_done is known signalled
  VkSemaphore copied_ = VK_NULL_HANDLE;        // the engine's read_back progress
  std::uint64_t copies_ = 0;
  VkBuffer readback_ = VK_NULL_HANDLE;
  VkDeviceMemory readback_memory_ = VK_NULL_HANDLE;
  const std::byte* readback_bytes_ = nullptr;
};
