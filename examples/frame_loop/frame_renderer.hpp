// examples/frame_loop/frame_renderer.hpp — the frame_loop example's GPU side:
// its kernels and graphics pipeline, and the encoder that records a frame's
// passes (pattern, draw, draw.readback's copies of what draw drew, blur.x,
// blur.y, tonemap, then output's copies) into
// the frame's wave, over images that the plan gives each lane.
//
//   const bool raster = frame_loop::frame_renderer::draws_natively(device);
//   ferrum::plan p = frame_loop::plan_for_size(base, {256, 256}, std::nullopt, raster);
//   frame_loop::frame_renderer renderer(device, p, *program, {256, 256});
//   frame_loop::frame_encoder encode{&renderer, frame};
//   scheduler.async_submit(renderer.request(), encode, token);
//   // once the wave completed, holding its lane (a lease or a readback):
//   std::span<const std::byte> pixels = renderer.output(*lease, report.wave);
//   frame_loop::drawn_frame drawn = renderer.drawn(*lease, report.wave);  // before blur and tone map
//
// With --present the plan has the window's swapchain image too
// (image/present, imported: frame_plan.hpp): node/output copies the frame
// into it, node/present presents it; each wave names the frame's acquired
// image (main.cpp). With --overlay, node/overlay between the two draws a
// Dear ImGui window over it, its color attachment (frame_overlay.hpp).
//
// The example makes no memory of its own. Its images are image resources of
// the plan (frame_loop.json), which the scheduler makes in the memory of
// each lane, once, and transitions from pass to pass (storage writes in
// layout general, sampled reads in shader-read-only, the copy out in
// transfer-src): a frame writes only its own lane's images, and the
// scheduler gives a lane to the next frame only after the fence of the one
// before it. A bucket's capacity is [width, height, width x height]: images
// take the first two ("extent": "bucket"), the read-back bytes the third.
// frame_loop runs its plan made for the frame's size (plan_for_size), so
// the images are exactly the frame; the lanes are made when a frame first
// needs them.
//
//   pool               resource                  live (nodes)        format
//   pool/bindings      resource/pattern.params   pattern             (16 bytes)
//                      resource/draw.params      draw                (112 bytes)
//   pool/engine        resource/mesh             draw                the engine's vertex buffer (imported)
//   pool/frame.images  image/frame.hdr           pattern .. blur.x   rgba32-float
//     (interval)       image/frame.depth         draw .. readback    d32-float (r32-float on the null device)
//                      image/frame.blurred_x     blur.x .. blur.y    rgba32-float
//                      image/frame.blurred       blur.y .. tonemap   rgba32-float
//                      image/frame.ldr           tonemap .. output   rgba8-unorm
//                        (its channels BGRA under --present when the swapchain's images are)
//   pool/frame.output  resource/frame.rgba8      output, persistent  4 bytes a pixel, read back
//                      resource/draw.color       readback, persistent  16 bytes a pixel (draw's color)
//                      resource/draw.depth       readback, persistent  4 bytes a pixel (draw's depth)
//
// node/draw.readback copies what node/draw drew, color and depth, into
// read-back memory before the blur and the tone map, so that the last
// frame's draw is checked per pixel (frame_check.hpp); the post-processing
// is checked against the host's blur and tone map of that same color.
//
// The blur runs as its two separable halves so that images can share
// memory: a single blur pass reads the pattern's image and writes the
// blurred one, so both would be live at it and nothing could share. Now
// frame.hdr's interval ends at blur.x before frame.blurred's begins at
// blur.y, and frame.blurred_x's ends before frame.ldr's begins, so the
// interval pool lays each pair over the same memory.
//
// The host reads the frame after the wave completed: node/output copies
// frame.ldr into frame.rgba8, readback memory, persistent (its bytes are
// never shared and keep what the lane's last frame wrote until the lane's
// next frame). Only a conservative pool may hold a persistent resource,
// hence its own pool. The storage contract digest is SHA-256 of its format:
// "frame_loop rgba8 image: row-major, one RGBA8 word per pixel, red in the
// low byte".
//
// node/draw draws the torus (frame_mesh.hpp) over the pattern: on Vulkan the
// engine's graphics pipeline in the node's native scope (frame_raster.hpp),
// from the engine's mesh, an imported resource each wave names (request()),
// the pattern's image its color attachment (loaded and stored, as the plan
// derives: the pattern wrote it, the readback and the blur read it),
// depth-tested against frame.depth (cleared, stored for the readback); the
// scheduler moves frame.hdr from general (the pattern's storage write) to
// color-attachment, transfer-src for the readback and then to
// shader-read-only for the blur. The null device records no graphics: there
// the plan has node/draw run the null device's own rasterizer as two
// kernels, color and depth (frame_null_raster.hpp, plan_for_size's raster).
//
// node/pattern and node/draw own binding slots: the frame's parameters reach
// the GPU in them, the wave's own bytes (the draw's pose as a per-instance
// vertex input, so a replayed list draws each frame's pose). The blurs and the
// tonemap read one image and write another, so their constants (radius,
// axis, exposure) are push words.
#pragma once

#include "frame_check.hpp"
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

class mesh_pipeline;
class frame_overlay;

// What node/draw drew, read back by node/draw.readback: rgba32-float color
// and float depth texels, row-major.
struct drawn_frame {
  std::span<const std::byte> color;
  std::span<const std::byte> depth;
};
struct overlay_numbers;

// A frame drawn on the host (frame_renderer::draw_on_host): its 8-bit
// pixels, and which of them an edge of the torus reaches (1), through the
// blur: there the device's rasterizer may have decided a pixel the other way.
struct host_frame {
  std::vector<std::byte> pixels;
  std::vector<std::uint8_t> edges;
  std::size_t edge_pixels = 0;  // how many are 1
};

class frame_renderer {
 public:
  // Makes the kernels (and, drawing natively, the graphics pipeline) on
  // `device`, for frames of `size` run by `program`, compiled from `p`.
  // Throws std::runtime_error when `p` is not the example's kind of plan
  // made for this device (nodes node/pattern and node/draw, each owning a
  // slot of its parameters' size in every bucket, node/draw.readback,
  // node/blur.x, node/blur.y, node/tonemap and node/output, in this order,
  // each listing the images and buffers it reads and writes, and
  // node/present after them when it presents; resource/mesh exactly when
  // the device draws natively; frame.rgba8, draw.color and draw.depth
  // persistent read-back memory; a bucket of class "frame" whose images
  // are `size`), ferrum::error_exception with the device's error when it
  // refuses a kernel.
  // `order`: the byte order the tone map writes frame.ldr in (BGRA for a
  // swapchain of BGRA images, --present). `overlay` (--overlay): what
  // node/overlay draws with (the plan has it: plan_for_size's overlay);
  // it must outlive this object.
  frame_renderer(ferrum::gpu::device& device, const ferrum::plan& p, const ferrum::compiled_program& program,
                 image_size size, channel_order order = channel_order::rgba, const frame_overlay* overlay = nullptr);
  frame_renderer(const frame_renderer&) = delete;
  frame_renderer& operator=(const frame_renderer&) = delete;
  ~frame_renderer();

  // Whether node/draw runs the engine's graphics pipeline on `device` (a
  // device with graphics), or the host's rasterizer as a kernel (plan_for_size's raster).
  [[nodiscard]] static bool draws_natively(const ferrum::gpu::device& device) noexcept;

  // What every frame's wave asks for: class "frame", extent [width, height,
  // width x height]; drawing natively, the engine's mesh for resource/mesh
  // (valid while this object lives).
  [[nodiscard]] ferrum::wave_request request() const noexcept;

  // Whether a lane may replay its lists (scheduler_options::replay): not
  // with an overlay, whose draws change every frame.
  [[nodiscard]] bool replayable() const noexcept { return overlay_ == nullptr; }

  // Records node `c.node_index`'s pass of frame `frame` on lane `c.lane`
  // unless the lane replays it (encode_context::replay), and, for
  // node/pattern and node/draw, writes the frame's parameters into its slot;
  // node/overlay shows `numbers` (none: zeros). Called by the scheduler,
  // concurrently for different nodes. Throws ferrum::error_exception when
  // the device refuses the command, std::runtime_error when the overlay
  // cannot draw.
  void encode(const ferrum::encode_context& c, std::uint64_t frame, const overlay_numbers* numbers = nullptr) const;

  // The 8-bit pixels that the completed wave `wave` drew on `lane` (held by
  // the caller, and run by no wave since): frame.rgba8's bytes in it. Valid
  // while the caller holds the lane.
  [[nodiscard]] std::span<const std::byte> output(const ferrum::lane_contents& lane, std::uint64_t wave) const;

  // What node/draw of the completed wave `wave` drew on `lane`
  // (node/draw.readback's copies), valid as output()'s bytes are.
  [[nodiscard]] drawn_frame drawn(const ferrum::lane_contents& lane, std::uint64_t wave) const;

  // Frame `frame`'s node/draw on the host: the pattern kernel's C++ form and
  // frame_mesh.hpp's rasterizer (not the null device's), color, depth and
  // the edge pixels, for checking what a device drew (frame_check.hpp).
  [[nodiscard]] raster_reference draw_raster_on_host(std::uint64_t frame) const;

  // The blur and the tone map's C++ forms over `drawn_color` (a frame's
  // rgba32-float texels): the 8-bit frame the device's passes should make
  // of it. Throws std::invalid_argument when it is not a frame's size.
  [[nodiscard]] std::vector<std::byte> post_process_on_host(std::span<const std::byte> drawn_color) const;

  // `pixels` (output()'s or draw_on_host()'s) in RGBA order, as PNG stores
  // them.
  [[nodiscard]] std::vector<std::byte> to_rgba(std::span<const std::byte> pixels) const;

  // Frame `frame` drawn on the host by the kernels' C++ forms and the
  // host's rasterizer, pass for pass as the device draws it, with the edge
  // pixels widened by the blur's radius: what --present's window should
  // show (the screenshot test's expected image).
  [[nodiscard]] host_frame draw_on_host(std::uint64_t frame) const;

  [[nodiscard]] image_size size() const noexcept { return size_; }
  [[nodiscard]] channel_order order() const noexcept { return order_; }

 private:
  [[nodiscard]] std::size_t pixels() const noexcept { return std::size_t{size_.width} * size_.height; }
  // The first `bytes` of read-back resource `id` of node `node` on `lane`,
  // which wave `wave` wrote; throws std::logic_error when there are none.
  [[nodiscard]] std::span<const std::byte> read_back_bytes(const ferrum::lane_contents& lane, std::uint64_t wave,
                                                           std::string_view id, std::size_t node,
                                                           std::size_t bytes) const;

  // The kernels' own push words; the same on the device and on the host.
  [[nodiscard]] std::array<std::uint32_t, 2> blur_push(blur_axis axis) const noexcept;
  [[nodiscard]] std::array<std::uint32_t, 2> tonemap_push() const noexcept;

  image_size size_;
  channel_order order_;
  std::unique_ptr<ferrum::gpu::kernel> pattern_;
  std::unique_ptr<mesh_pipeline> pipeline_;           // drawing natively
  std::array<ferrum::imported_buffer, 1> imports_{};  // its mesh
  std::unique_ptr<ferrum::gpu::kernel> draw_;         // or not: color
  std::unique_ptr<ferrum::gpu::kernel> draw_depth_;   // and depth
  std::unique_ptr<ferrum::gpu::kernel> blur_;         // both halves: the axis is a push word
  std::unique_ptr<ferrum::gpu::kernel> tonemap_;
  const frame_overlay* overlay_;
};

// The encoder of one frame's wave: the scheduler calls it for every node.
// `numbers`: what --overlay shows on this frame (null without it).
struct frame_encoder {
  const frame_renderer* renderer;
  std::uint64_t frame;
  std::shared_ptr<const overlay_numbers> numbers{};

  void operator()(const ferrum::encode_context& c) const { renderer->encode(c, frame, numbers.get()); }
};

}  // namespace frame_loop
