// examples/frame_loop/frame_plan.hpp — a frame_loop plan made for one frame
// size, and, with --present, for presenting: what the example compiles at
// start, and what --resize-at compiles, on a background thread, to swap in
// while frames run.
//
//   ferrum::plan p = frame_loop::plan_for_size(base, {1920, 1080}, ferrum::image_format::bgra8_unorm, true, true);
#pragma once

#include "frame_renderer.hpp"

#include "ferrum/binding/plan.hpp"
#include "ferrum/image.hpp"

#include <optional>

namespace frame_loop {

// `base` with its buckets of class "frame" replaced by one of exactly
// `size` (capacity [width, height, width x height]), each pool's budget
// what its resources take at that size (without aliasing: the compiler's
// layout takes that or less), and the plan's memory budget at least the
// lanes' of that size. With `present` (the swapchain images'
// format), the window's image too: image/present, of that format, in an
// imported pool (pool/swapchain; each wave names the acquired image),
// which node/output also copies the frame into, and node/present, after
// it, presents; with `overlay` (--overlay), node/overlay between the two
// draws the overlay over it (frame_overlay.hpp), its color attachment. Throws ferrum::error_exception when a resource's
// demand cannot be resolved at that size. Without `raster` (a device that records no graphics: the null device),
// node/draw is the null device's rasterizer as two kernels (frame_null_raster.hpp): over image/frame.hdr, a storage
// image it reads and writes, and into image/frame.depth, made r32-float, a storage image it writes; resource/mesh
// (the engine's vertex buffer, imported) and its pool go.
[[nodiscard]] ferrum::plan plan_for_size(const ferrum::plan& base, image_size size,
                                         std::optional<ferrum::image_format> present, bool raster,
                                         bool overlay = false);

}  // namespace frame_loop
