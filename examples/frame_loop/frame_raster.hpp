// examples/frame_loop/frame_raster.hpp — node/draw on a device with graphics
// (Vulkan): the engine's own graphics pipeline (shaders/mesh_vertex.vert,
// shaders/mesh_fragment.frag) and vertex buffer, recorded in the node's native scope
// inside dynamic rendering over the attachments ferrum transitioned.
//
//   frame_loop::mesh_pipeline pipeline(device);  // once, after the device
//   request.imports = {{"resource/mesh", pipeline.mesh()}};  // every wave
//   // in node/draw's encoder:
//   const ferrum::native_scope native = c.native().value();
//   pipeline.draw(native, *c.resource("resource/mesh"), *c.image("image/frame.hdr"),
//                 *c.image("image/frame.depth"), width, height);
//
// The mesh's vertices are the engine's, in an arena of its own
// (ferrum::gpu::device::create_arena, written once, before any frame), and
// a declared resource of the plan: resource/mesh, of an imported pool,
// which node/draw reads (docs/embedding.md, "Imported buffers") and each
// wave names, so the native draw touches only what its node declares. The
// frame's pose is read per instance from node/draw's binding slot
// (binding 1: frame_mesh.hpp, draw_params) — not push constants, which a
// replayed list would repeat. Load and store ops are the plan's
// (node_image::load, store): the color image keeps the pattern under the
// torus (load) for the blur after it (store); the depth image is cleared
// and dropped.
#pragma once

#include "frame_mesh.hpp"

#include "ferrum/gpu/arena.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>

namespace frame_loop {

class mesh_pipeline {
 public:
  // Makes the pipeline and the mesh's buffer on `device`, a Vulkan device
  // with graphics (device_limits::graphics). Throws std::runtime_error
  // when it is not, or Vulkan refuses.
  explicit mesh_pipeline(ferrum::gpu::device& device);
  mesh_pipeline(const mesh_pipeline&) = delete;
  mesh_pipeline& operator=(const mesh_pipeline&) = delete;
  ~mesh_pipeline();

  // The mesh: what each wave names for resource/mesh.
  [[nodiscard]] ferrum::gpu::arena_range mesh() const noexcept { return mesh_->whole(); }

  // Records the torus from `mesh` (node/draw's resource/mesh: this
  // pipeline's mesh()), posed by the draw_params in `native`'s slot, over
  // `color` (rgba32-float) tested against `depth` (d32-float), both of
  // `width` x `height`. Throws std::runtime_error when `mesh` is smaller
  // than the mesh.
  void draw(const ferrum::native_scope& native, const ferrum::node_resource& mesh, const ferrum::node_image& color,
            const ferrum::node_image& depth, std::uint32_t width, std::uint32_t height) const;

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  std::unique_ptr<ferrum::gpu::arena> mesh_;
  std::uint32_t vertex_count_ = 0;
};

}  // namespace frame_loop
