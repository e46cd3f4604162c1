// examples/frame_loop/frame_renderer.hpp — the frame_loop example's GPU side:
// its kernels, and the encoder that records a frame's four passes (pattern,
// blur.x, blur.y, tonemap) into the frame's wave, over images that the plan
// gives each lane.
//
//   frame_loop::frame_renderer renderer(device, plan, *program, {256, 256});
//   frame_loop::frame_encoder encode{&renderer, frame};
//   scheduler.async_submit(renderer.request(), encode, token);
//   // once the wave completed, and until its lane's next wave:
//   std::span<const std::byte> pixels = renderer.output(scheduler, report);
//
// With --present, frame_presenter.hpp's encoder adds, after node/tonemap's
// pass, the copy of output_range() into the frame's swapchain image.
//
// The example makes no memory of its own. Its images are workspace resources
// of the plan (frame_loop.json), which the scheduler places in the one arena
// it makes for each lane, once: a frame writes only its own lane's bytes, and
// the scheduler gives a lane to the next frame only after the fence of the
// one before it. A bucket's capacity dimension 0 counts pixels, and a frame
// asks for width x height of them, so its images come from the smallest
// bucket that holds them: frame_loop.json has one of 256 x 256 pixels (which
// 128x128 frames use too) and one of 1920 x 1080. The scheduler makes every
// bucket's lanes when it is made, used or not, so the plan has no more
// buckets than that.
//
//   pool               resource                  live (nodes)        per pixel
//   pool/bindings      resource/pattern.params   pattern             (16 bytes in all)
//   pool/frame.hdr     resource/frame.hdr        pattern .. blur.x   RGBA f32, 16 bytes
//     (interval)       resource/frame.blurred_x  blur.x .. blur.y    RGBA f32, 16 bytes
//                      resource/frame.blurred    blur.y .. tonemap   RGBA f32, 16 bytes
//   pool/frame.output  resource/frame.rgba8      tonemap, persistent RGBA8, 4 bytes
//                        (BGRA8 under --present when the swapchain's images are: the same word, red and blue swapped)
//
// The blur runs as its two separable halves so that images can share bytes:
// a single blur pass reads the pattern's image and writes the blurred one,
// so both would be live at it and nothing could share. Now frame.hdr's
// interval ends at blur.x before frame.blurred's begins at blur.y, so
// pool/frame.hdr (interval liveness) lays them over the same bytes and holds
// two images, not three; its budgets in the plan allow exactly two.
//
// The host reads frame.rgba8 after the wave completed. An invocation
// resource's bytes are its nodes' only during its live interval, so the
// output is persistent: its bytes are never shared and keep what the lane's
// last frame wrote until the lane's next frame. Only a conservative pool may
// hold a persistent resource, hence its own pool.
//
// The storage contract digests are SHA-256 of the pools' formats:
// "frame_loop hdr image: row-major RGBA, four f32 words per pixel" and
// "frame_loop rgba8 image: row-major, one RGBA8 word per pixel, red in the
// low byte".
//
// Only node/pattern owns a binding slot: the frame's parameters reach the GPU
// in it, the wave's own bytes. A kernel reads two ranges, and the blurs and
// the tonemap already read one image and write another, so their constants
// (size, radius, axis, exposure) are push words.
#pragma once

#include "frame_kernels.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/scheduler.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace frame_loop {

struct image_size {
  std::uint32_t width = 256;
  std::uint32_t height = 256;
};

class frame_renderer {
 public:
  // Makes the kernels on `device`, for frames of `size` run by `program`,
  // compiled from `p`. Throws std::runtime_error when `p` is not the
  // example's kind of plan (nodes node/pattern, owning a slot of at least
  // pattern_params_bytes in every bucket, node/blur.x, node/blur.y and
  // node/tonemap, in this order, each listing the images it reads and writes;
  // frame.rgba8 persistent; a bucket of class "frame" holding width x height
  // pixels), ferrum::error_exception with the device's error when it refuses
  // a kernel.
  // `order`: the byte order the tone map writes frame.rgba8 in (BGRA for a
  // swapchain of BGRA images, --present).
  frame_renderer(ferrum::gpu::device& device, const ferrum::plan& p, const ferrum::compiled_program& program,
                 image_size size, channel_order order = channel_order::rgba);

  // What every frame's wave asks for: class "frame", extent width x height
  // pixels.
  [[nodiscard]] ferrum::wave_request request() const noexcept;

  // Records node `c.node_index`'s pass of frame `frame` on lane `c.lane`
  // unless the lane replays it (encode_context::replay), and, for
  // node/pattern, writes the frame's parameters into its slot.
  // Called by the scheduler, concurrently for different nodes. Throws
  // ferrum::error_exception when the device refuses the command,
  // std::runtime_error when the bucket's images are too small for the frame.
  void encode(const ferrum::encode_context& c, std::uint64_t frame) const;

  // The RGBA8 pixels that the completed wave `report` of `scheduler` drew:
  // frame.rgba8's bytes in its lane's arena. Valid until the lane's next wave
  // and while `scheduler` (which owns the lanes) lives.
  [[nodiscard]] std::span<const std::byte> output(const ferrum::scheduler& scheduler,
                                                  const ferrum::wave_report& report) const;

  // Whether node `c.node_index` is the one whose pass writes the frame's
  // final 8-bit image (node/tonemap, the last), and that image's bytes on
  // `c`'s lane, once its pass is recorded: what a presenter copies into a
  // swapchain image, in the same list, after the pass.
  [[nodiscard]] bool draws_output(const ferrum::encode_context& c) const noexcept;
  [[nodiscard]] ferrum::gpu::arena_range output_range(const ferrum::encode_context& c) const;

  // `pixels` (output()'s or draw_on_host()'s) in RGBA order, as PNG stores
  // them.
  [[nodiscard]] std::vector<std::byte> to_rgba(std::span<const std::byte> pixels) const;

  // Frame `frame` drawn on the host by the kernels' C++ forms, pass for pass
  // as the device draws it, for checking what a device drew.
  [[nodiscard]] std::vector<std::byte> draw_on_host(std::uint64_t frame) const;

  [[nodiscard]] image_size size() const noexcept { return size_; }
  [[nodiscard]] channel_order order() const noexcept { return order_; }

 private:
  [[nodiscard]] std::size_t pixels() const noexcept { return std::size_t{size_.width} * size_.height; }
  // The first `pixel_bytes` x pixels() bytes of the node's resource `id`.
  [[nodiscard]] ferrum::gpu::arena_range image(const ferrum::encode_context& c, std::string_view id,
                                               std::size_t pixel_bytes) const;

  // The kernels' own push words; the same on the device and on the host.
  [[nodiscard]] std::array<std::uint32_t, 2> pattern_push() const noexcept;
  [[nodiscard]] std::array<std::uint32_t, 4> blur_push(blur_axis axis) const noexcept;
  [[nodiscard]] std::array<std::uint32_t, 2> tonemap_push() const noexcept;

  image_size size_;
  channel_order order_;
  std::unique_ptr<ferrum::gpu::kernel> pattern_;
  std::unique_ptr<ferrum::gpu::kernel> blur_;  // both halves: the axis is a push word
  std::unique_ptr<ferrum::gpu::kernel> tonemap_;
};

// The encoder of one frame's wave: the scheduler calls it for every node.
struct frame_encoder {
  const frame_renderer* renderer;
  std::uint64_t frame;

  void operator()(const ferrum::encode_context& c) const { renderer->encode(c, frame); }
};

}  // namespace frame_loop
