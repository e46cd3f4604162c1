// ferrum/scheduler/lane_state.hpp — the engine's own per-lane objects: made
// with a lane's memory, destroyed before that memory goes.
//
// Engines keep objects per frame in flight: descriptor sets over this
// frame's buffers, a third-party library's plan bound to one buffer (VkFFT
// binds its descriptor sets at initialization), per-frame vertex data. In
// ferrum a frame in flight is a lane, so such objects belong to the lane:
// scheduler_options::make_lane_state (or lane_pool::create's `state`) is a
// factory called once each time a lane's memory is made — at create, or
// when needed (lane_making::when_needed), again after a trim, and for a
// replacement program's lanes (scheduler::async_replace) — and the object it
// returns lives exactly as long as that memory:
//
//   struct fft_lane : ferrum::lane_state {
//     explicit fft_lane(const ferrum::lane_state_context& c) : buffer(c.resource("resource/signal")) {...}
//     ~fft_lane() override { ... }  // the GPU is done with the lane's memory here
//     ferrum::native_buffer buffer;
//   };
//   options.make_lane_state = [](const ferrum::lane_state_context& c) -> ferrum::lane_state_result {
//     return std::make_unique<fft_lane>(c);
//   };
//   ... in an encoder: auto& fft = *c.state_as<fft_lane>();
//
// The rules:
// * Made after the lane's arenas, lists and binding, on the thread that
//   makes the lane (the thread calling create, or the lane pool's executor
//   for a lane made when needed, while waves run on other lanes). A factory
//   that submits set-up work to the device's queue takes the queue's lock
//   (gpu::queue::lock) around it, as ferrum's own submissions do.
// * Destroyed first when the lane's memory is freed — trim, the replaced
//   program's end, the lane pool's or scheduler's end — and only once the
//   GPU is done with the lane: a lane whose last submission is not reached
//   when its pool goes is handed to the device whole (gpu::device::retire),
//   state first, and freed on the thread that finds it reached (or by the
//   device's destructor).
// * Shared by every node of the lane's holder: encoders of one wave run
//   concurrently and each sees the same state (encode_context::state), so
//   what nodes write in it is per node or synchronized by the engine.
//   Waves on other lanes never see it.
// * A factory's error fails what the lane was made for with that error
//   (create at lane_making::at_create; the waiting wave or async_acquire
//   when needed), and what was made of the lane is freed; a factory that
//   throws fails it with lane_state_failed, naming the bucket, the lane and
//   the exception's message. A null state is allowed: the lane has none.
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/scheduler/held_lane.hpp"
#include "ferrum/scheduler/scheduler_options.hpp"  // lane_state, lane_state_factory

#include <cstdint>
#include <memory>
#include <string_view>

namespace ferrum {

struct compiled_program;
struct compiled_bucket;

// What a lane state factory is given: the lane just made.
struct lane_state_context {
  gpu::device& device;
  const compiled_program& program;
  const compiled_bucket& bucket;
  std::uint32_t lane;
  // Its arenas, binding, node lists and resources (made() is true).
  const lane_contents& contents;

  // Resource `id` on this lane (nullptr when no node lists it), and as a
  // native buffer (all 0 when no node lists it, or it has no bytes in this
  // bucket).
  [[nodiscard]] const node_resource* find(std::string_view id) const noexcept { return contents.find(id); }
  [[nodiscard]] native_buffer resource(std::string_view id) const noexcept {
    const node_resource* r = find(id);
    return r != nullptr ? native_buffer::of(r->range) : native_buffer{};
  }
};

}  // namespace ferrum
