// examples/frame_loop/frame_plan.hpp — a frame_loop plan made for one frame
// size: what --resize-at compiles, on a background thread, to swap in while
// frames run.
//
//   ferrum::plan p = frame_loop::plan_for_size(base, {1920, 1080});
#pragma once

#include "frame_renderer.hpp"

#include "ferrum/binding/plan.hpp"

namespace frame_loop {

// `base` with its buckets of class "frame" replaced by one that holds
// exactly `size`'s pixels, each pool's budget what its resources take at
// that size (without aliasing: the compiler's layout takes that or less).
// Throws ferrum::error_exception when a resource's demand cannot be resolved
// at that size.
[[nodiscard]] ferrum::plan plan_for_size(const ferrum::plan& base, image_size size);

}  // namespace frame_loop
