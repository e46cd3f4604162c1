// examples/embed/frame_work.hpp — what a frame's wave does on the GPU, and
// how the engine checks it afterwards.
//
// Data crosses between the engine and the wave both ways, through two
// arenas of ferrum's (made here, not the lanes', which go back to their pool
// when a wave completes), each with a region per slot of the engine's
// frames-in-flight ring:
// * the inbox, which the engine's own GPU work writes before the wave
//   (engine_frames.hpp: vkCmdUpdateBuffer into arena::native_handle(), the
//   VkBuffer) with engine_words(frame);
// * the outbox, which the wave writes and the engine's GPU work copies out
//   after it. Its region is twice the binding arena: first the echo, then
//   the pattern.
// Every node of a frame copies its slot's part of the inbox region into its
// lane slot (the engine's data reaches the lane), copies the slot into the
// echo half of the outbox region, then writes a pattern unique to (frame,
// node) into the slot and copies the slot into the pattern half.
//
//   auto work = frame_work::create(device, program.buckets.front(), frames_in_flight).value();
//   frame_encoder& encode = work->arm(ring_index, frame);
//   ... the engine writes work->engine_words(frame) into the inbox region, the wave runs:
//   work->wrong_echo(work->outbox(ring_index), ring_index) == 0   // the engine's data reached the lane
//   work->wrong_words(engine_copy, ring_index) == 0                // and all of it came back to the engine
#pragma once

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/error.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

class frame_work;

// The encoder of the frame in one ring slot; called by the scheduler for
// every node, nodes concurrently. Throws when the device refuses a command.
class frame_encoder {
 public:
  void operator()(const ferrum::encode_context& c) const;

 private:
  friend class frame_work;
  const frame_work* work_ = nullptr;
  std::size_t ring_index_ = 0;
  std::uint64_t frame_ = 0;
};

class frame_work {
 public:
  // Makes the pattern kernel, the inbox and the outbox of `frames_in_flight`
  // regions each (the inbox's the size of `bucket`'s binding arena, the
  // outbox's twice that). Errors: the device's.
  [[nodiscard]] static ferrum::result<std::unique_ptr<frame_work>> create(ferrum::gpu::device& device,
                                                                          const ferrum::compiled_bucket& bucket,
                                                                          std::size_t frames_in_flight);

  // The encoder of ring slot `ring_index`, now for frame `frame`. Not while
  // the slot's previous wave, or the engine's work around it, may still run.
  [[nodiscard]] frame_encoder& arm(std::size_t ring_index, std::uint64_t frame) noexcept;

  // The frame ring slot `ring_index` was last armed for.
  [[nodiscard]] std::uint64_t frame_of(std::size_t ring_index) const noexcept { return encoders_[ring_index].frame_; }

  // The arenas' VkBuffers (as arena::native_handle), and their region sizes.
  [[nodiscard]] std::uint64_t inbox_handle() const noexcept { return inbox_->native_handle(); }
  [[nodiscard]] std::uint64_t outbox_handle() const noexcept { return outbox_->native_handle(); }
  [[nodiscard]] std::size_t inbox_region_bytes() const noexcept { return region_bytes_; }
  [[nodiscard]] std::size_t outbox_region_bytes() const noexcept { return 2 * region_bytes_; }

  // What the engine writes into an inbox region for `frame`: a word per 4
  // bytes of the region, unique to the frame.
  [[nodiscard]] std::vector<std::uint32_t> engine_words(std::uint64_t frame) const;

  // The outbox region of `ring_index`, as ferrum's wave left it.
  [[nodiscard]] std::span<const std::byte> outbox(std::size_t ring_index) const noexcept;

  // The words of the slots in `region` (an outbox region, or the engine's
  // copy of one) that differ from what the frame of `ring_index` puts
  // there: the echo of the engine's words, then the wave's patterns. Only
  // once that wave (and the engine's copy) completed.
  [[nodiscard]] std::size_t wrong_words(std::span<const std::byte> region, std::size_t ring_index) const noexcept;
  // The same for the echo half only: the engine's words as the wave's
  // lane slots saw them.
  [[nodiscard]] std::size_t wrong_echo(std::span<const std::byte> region, std::size_t ring_index) const noexcept;

 private:
  friend class frame_encoder;
  frame_work() = default;

  const ferrum::program_binding_layout* layout_ = nullptr;
  std::unique_ptr<ferrum::gpu::kernel> writer_;
  std::unique_ptr<ferrum::gpu::arena> inbox_;
  std::unique_ptr<ferrum::gpu::arena> outbox_;
  std::size_t region_bytes_ = 0;         // the binding arena's: an inbox region, half an outbox one
  std::vector<frame_encoder> encoders_;  // one per ring slot, never moved while waves run
};
