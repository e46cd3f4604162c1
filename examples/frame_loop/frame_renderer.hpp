// examples/frame_loop/frame_renderer.hpp — the frame_loop example's GPU side:
// its kernels, the images of each lane, and the encoder that records a
// frame's three passes into the frame's wave.
//
//   frame_loop::frame_renderer renderer(device, plan, *program, {256, 256});
//   frame_loop::frame_encoder encode{&renderer, frame};
//   scheduler.async_submit({"frame"}, encode, token);
//   // once the wave completed, and until its lane's next wave:
//   std::span<const std::byte> pixels = renderer.output(report.lane);
//
// Frames in flight are waves on different lanes. Each lane has its own images,
// made once: a frame writes only memory that no other frame in flight
// touches, and the scheduler gives a lane to the next frame only after the
// fence of the one before it.
//
// Only node/pattern owns a binding slot: the frame's parameters reach the GPU
// in it, the wave's own bytes. A kernel reads two ranges, and blur and
// tonemap already read one image and write another, so their constants
// (size, radius, exposure) are push words.
#pragma once

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace frame_loop {

struct image_size {
  std::uint32_t width = 256;
  std::uint32_t height = 256;
};

class frame_renderer {
 public:
  // Makes the kernels on `device` and the images of every lane of
  // `program`, compiled from `p`. Throws std::runtime_error when `p` is not
  // the example's kind of plan (one bucket; nodes node/pattern, owning a slot
  // of at least pattern_params_bytes, node/blur and node/tonemap, in this
  // order), ferrum::error_exception with the device's error when it refuses
  // a kernel or an image.
  frame_renderer(ferrum::gpu::device& device, const ferrum::plan& p, const ferrum::compiled_program& program,
                 image_size size);

  // Records node `c.node_index`'s pass of frame `frame` on lane `c.lane`
  // unless the lane replays it (encode_context::replay), and, for
  // node/pattern, writes the frame's parameters into its slot.
  // Called by the scheduler, concurrently for different nodes. Throws
  // ferrum::error_exception when the device refuses the command.
  void encode(const ferrum::encode_context& c, std::uint64_t frame) const;

  // The RGBA8 pixels that lane `lane`'s last frame drew: read them once its
  // wave completed, before the lane's next wave.
  [[nodiscard]] std::span<const std::byte> output(std::uint32_t lane) const;

  // Frame `frame` drawn on the host by the kernels' C++ forms, for checking
  // what a device drew.
  [[nodiscard]] std::vector<std::byte> draw_on_host(std::uint64_t frame) const;

  [[nodiscard]] image_size size() const noexcept { return size_; }

 private:
  struct lane_images {
    std::unique_ptr<ferrum::gpu::arena> hdr;      // node/pattern's output
    std::unique_ptr<ferrum::gpu::arena> blurred;  // node/blur's output
    std::unique_ptr<ferrum::gpu::arena> rgba8;    // node/tonemap's output
  };

  // The kernels' own push words; the same on the device and on the host.
  [[nodiscard]] std::array<std::uint32_t, 2> pattern_push() const noexcept;
  [[nodiscard]] std::array<std::uint32_t, 3> blur_push() const noexcept;
  [[nodiscard]] std::array<std::uint32_t, 1> tonemap_push() const noexcept;

  image_size size_;
  std::unique_ptr<ferrum::gpu::kernel> pattern_;
  std::unique_ptr<ferrum::gpu::kernel> blur_;
  std::unique_ptr<ferrum::gpu::kernel> tonemap_;
  std::vector<lane_images> lanes_;  // by lane index
};

// The encoder of one frame's wave: the scheduler calls it for every node.
struct frame_encoder {
  const frame_renderer* renderer;
  std::uint64_t frame;

  void operator()(const ferrum::encode_context& c) const { renderer->encode(c, frame); }
};

}  // namespace frame_loop
