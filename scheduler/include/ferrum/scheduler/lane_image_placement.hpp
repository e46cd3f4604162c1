// ferrum/scheduler/lane_image_placement.hpp — what a lane of a bucket asks
// a device for its images (docs/design.md, "Images"): each image's spec, and
// where they lie in the lane's image memory.
//
//   auto placement = ferrum::lane_image_placement(bucket, device);
//   // placement->bytes: the image memory each lane of the bucket makes
#pragma once

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/image_placement.hpp"
#include "ferrum/gpu/device.hpp"

#include <cstdint>

namespace ferrum {

// The usage an image needs for the accesses a plan makes of it
// (lane_image::accesses, a bit per resource_access).
[[nodiscard]] std::uint32_t image_usage_of(std::uint32_t accesses) noexcept;

// Whether `device` can do with each image of `bucket`'s lanes what the
// plan's nodes do with it: each access's image usage (image_usage_of) among
// the features of the image's format (gpu::device::format_features).
// Checked when a lane pool is made, before any lane. Errors:
// format_unsupported, naming the bucket, the image's resource id and
// format, the access, the node (its index in the plan) and the features
// missing.
[[nodiscard]] result<void> check_lane_image_formats(const compiled_bucket& bucket, const gpu::device& device);

// Image `i` of a lane recipe as a device is asked for it.
[[nodiscard]] gpu::image_spec lane_image_spec(const lane_image& i) noexcept;

// Where a lane of `bucket` on `device` places its images, and how much
// image memory that takes (image_placement::bytes; unaliased_bytes without
// sharing): the device's requirements for each image of the bucket's lane
// recipe (imported ones are the engine's: none), placed by
// place_lane_images. What every lane of the bucket makes,
// and what `ferrum run` reports. Empty for a bucket without images. Errors:
// the device's (invalid_image, device_lost), naming the bucket.
[[nodiscard]] result<image_placement> lane_image_placement(const compiled_bucket& bucket, gpu::device& device);

}  // namespace ferrum
