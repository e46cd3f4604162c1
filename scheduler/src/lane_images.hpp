// lane_images.hpp (private) — a lane's images, made from its bucket's lane
// recipe on the lane's device (lane_memory::make, lane_pool.cpp).
#pragma once

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/held_lane.hpp"

namespace ferrum::detail {

// The images of `bucket` on `device`: each image's requirements, placed
// (place_lane_images), one block of image memory with each persistent image
// in the layout a wave starts it in; per node its transitions and images.
// Empty when the bucket has none. Errors: the device's (invalid_image,
// out_of_device_memory, ...), with the bucket named.
[[nodiscard]] result<lane_images> make_lane_images(const compiled_program& program, const compiled_bucket& bucket,
                                                   gpu::device& device);

}  // namespace ferrum::detail
