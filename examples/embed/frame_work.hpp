// examples/embed/frame_work.hpp — what a frame's wave does on the GPU, and
// how the engine checks it afterwards.
//
// Every node of a frame writes a pattern unique to (frame, node) into its
// slot, then copies the slot into the engine's readback arena, into the
// region of the frame's slot in the engine's frames-in-flight ring. The lane
// goes back to its pool when the wave completes, so what the engine wants to
// read must leave the lane inside the wave. Once the wave completed (its
// fence was reached), the engine compares the region with the patterns.
//
//   auto work = frame_work::create(device, program.buckets.front(), frames_in_flight).value();
//   frame_encoder& encode = work->arm(ring_index, frame);
//   scheduler.async_submit({"frame", {1, 1, 1}}, encode, handler);
//   ... once completed: work->wrong_words(ring_index) == 0
#pragma once

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/error.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
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
  // Makes the pattern kernel and a readback arena of `frames_in_flight`
  // regions, each the size of `bucket`'s binding arena. Errors: the device's.
  [[nodiscard]] static ferrum::result<std::unique_ptr<frame_work>> create(ferrum::gpu::device& device,
                                                                          const ferrum::compiled_bucket& bucket,
                                                                          std::size_t frames_in_flight);

  // The encoder of ring slot `ring_index`, now for frame `frame`. Not while
  // the slot's previous wave may still run.
  [[nodiscard]] frame_encoder& arm(std::size_t ring_index, std::uint64_t frame) noexcept;

  // The frame ring slot `ring_index` was last armed for.
  [[nodiscard]] std::uint64_t frame_of(std::size_t ring_index) const noexcept { return encoders_[ring_index].frame_; }

  // The words of ring slot `ring_index`'s region that differ from what its
  // frame's wave writes. Only once that wave has completed.
  [[nodiscard]] std::size_t wrong_words(std::size_t ring_index) const noexcept;

 private:
  friend class frame_encoder;
  frame_work() = default;

  const ferrum::program_binding_layout* layout_ = nullptr;
  std::unique_ptr<ferrum::gpu::kernel> writer_;
  std::unique_ptr<ferrum::gpu::arena> readback_;
  std::size_t region_bytes_ = 0;
  std::vector<frame_encoder> encoders_;  // one per ring slot, never moved while waves run
};
