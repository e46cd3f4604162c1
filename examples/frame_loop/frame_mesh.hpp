// examples/frame_loop/frame_mesh.hpp — the scene frame_loop draws: a lit
// torus of 4096 triangles turning from frame to frame, depth-tested, drawn
// over the pattern pass's image (node/draw). The mesh is made here, once; the
// pose and the projection are each frame's draw_params, which reach the
// GPU in node/draw's binding slot (the wave's own bytes).
//
// The same scene drawn on the host (draw_mesh_on_host) follows the
// pipeline's fixed-function rules: pixel centres sampled, Vulkan's viewport
// transform, depth less-than against a cleared 1, the normal interpolated
// perspective-correctly and shaded as shaders/mesh_fragment.frag shades it.
// It is the reference that a device's drawing (its color and depth, before
// any post-processing: frame_check.hpp) is checked against: exact, up to
// float rounding, except at pixels that a silhouette or an occlusion edge
// crosses, which draw_mesh_on_host marks. The null device does not run it:
// its draw is frame_null_raster.hpp's, a rasterizer of its own (fixed-point
// vertices, edge functions, the top-left rule), so that its frame is checked
// against code that is not the code that drew it.
//
//   std::span<const frame_loop::mesh_vertex> mesh = frame_loop::torus_mesh();
//   frame_loop::store(frame_loop::draw_params_of_frame(frame, width, height), slot_bytes);
#pragma once

#include "ferrum/gpu/kernel.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace frame_loop {

// A vertex as the pipeline's vertex input reads it: binding 0, 24 bytes.
struct mesh_vertex {
  std::array<float, 3> position;  // location 0
  std::array<float, 3> normal;    // location 1
};
static_assert(sizeof(mesh_vertex) == 24);

// The torus, a triangle list (64 segments around, 32 around the tube, two
// triangles each), about the y axis, of radii 0.8 and 0.32.
[[nodiscard]] std::span<const mesh_vertex> torus_mesh();

// One frame's pose: the clip transform's rows (projection x view x model)
// and the model's rotation rows (for normals; w unused), as the vertex shader
// reads them — a per-instance vertex input (binding 1) over the slot.
struct draw_params {
  std::array<std::array<float, 4>, 4> clip;
  std::array<std::array<float, 4>, 3> model;
};
inline constexpr std::size_t draw_params_bytes = 7 * 16;

// Frame `frame`'s pose at 60 frames per second, for a `width` x `height`
// image: a function of those alone.
[[nodiscard]] draw_params draw_params_of_frame(std::uint64_t frame, std::uint32_t width, std::uint32_t height) noexcept;

// Writes `params` as the shader reads them into the first draw_params_bytes
// bytes of `slot`, which must hold that many; load reads them back.
void store(const draw_params& params, std::span<std::byte> slot) noexcept;
[[nodiscard]] draw_params load_draw_params(std::span<const std::byte> slot) noexcept;

// shaders/mesh_fragment.frag's lighting of an interpolated (not yet
// normalized, not zero) view-space normal: the fragment's color.
[[nodiscard]] std::array<float, 3> shade_normal(const std::array<float, 3>& normal) noexcept;

// Draws the torus posed by `params` over `hdr`, the frame's rgba32-float
// texels (row-major, `extent`), keeping what is behind where it draws
// nothing. With `depth` (one float per pixel of `extent`, or empty), also
// writes the depth the depth test kept where the torus covers a pixel's
// centre (the rest is left as it was: the caller's clear). With `edges`,
// also marks (1) every pixel of `extent` that a silhouette or occlusion edge
// crosses: where the torus covers some of the pixel's centre and corners
// and not others, or covers them at view depths far apart.
void draw_mesh_on_host(const draw_params& params, ferrum::gpu::image_extent extent, std::span<std::byte> hdr,
                       std::span<float> depth, std::vector<std::uint8_t>* edges);

}  // namespace frame_loop
