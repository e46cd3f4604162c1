// examples/frame_loop/frame_null_raster.hpp — node/draw on the null device,
// which records no graphics: the torus drawn by two CPU kernels, one over
// the frame's color image (rgba32-float, drawn over the pattern), one into
// a depth image of its own (r32-float: the null device's kernels write
// storage images, and a d32-float image is none), by a rasterizer of this
// file's, not the host's reference (frame_mesh.hpp's draw_mesh_on_host),
// so that the null device's frame is checked against code that did not
// draw it. It draws as a GPU's fixed function does, not as the reference:
// vertex positions snapped to 1/256 of a pixel, integer edge functions
// walked over the triangle's box, the top-left rule for samples on an
// edge (the reference takes them all), depth and the normal's weights
// from the fixed-point edge functions (the reference's are float
// barycentrics). The shading is the fragment shader's
// (frame_mesh.hpp's shade_normal), as a GPU runs the same shader.
//
//   c.commands.dispatch(*color_kernel, hdr, c.slot, {});   // in node/draw, null device
//   c.commands.dispatch(*depth_kernel, depth, c.slot, {});
#pragma once

#include "frame_mesh.hpp"

#include "ferrum/gpu/kernel.hpp"

#include <cstddef>
#include <span>

namespace frame_loop {

// Draws the torus posed by `params` over `color` (rgba32-float texels of
// `extent`, row-major; or empty) and into `depth` (one float per pixel of
// `extent`, cleared to 1 first; or empty).
void draw_as_a_gpu(const draw_params& params, ferrum::gpu::image_extent extent, std::span<std::byte> color,
                   std::span<std::byte> depth) noexcept;

// The null device's node/draw kernels (CPU form only). Primary: the color
// image (storage, drawn over) or the r32-float depth image (storage,
// written whole); secondary: node/draw's slot (draw_params). No push words.
[[nodiscard]] ferrum::gpu::kernel_source null_color_kernel() noexcept;
[[nodiscard]] ferrum::gpu::kernel_source null_depth_kernel() noexcept;

}  // namespace frame_loop
