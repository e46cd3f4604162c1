// ferrum/binding/image_placement.hpp — where a lane's images lie in the
// image memory the lane makes for them (docs/design.md, "Images").
//
// The compiler decides which images may share memory (an interval pool's
// invocation images whose live intervals do not overlap: lane_image::
// aliasable, live); the device decides how big each image is and how it
// must be aligned (gpu::device::image_requirements). A lane asks the device
// for every image's requirements, places them here, and makes one block of
// image memory that big:
//
//   std::vector<ferrum::image_size> sizes;  // per lane_recipe::images entry
//   auto placement = ferrum::place_lane_images(bucket.lane, sizes);
//   // placement->offsets[i]: image i's offset in a block of placement->bytes
#pragma once

#include "ferrum/binding/lane_recipe.hpp"
#include "ferrum/error.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace ferrum {

// What one image takes of image memory: its bytes and the alignment its
// offset needs (a power of two), as its device says.
struct image_size {
  std::uint64_t bytes = 0;
  std::uint64_t alignment = 1;
};

struct image_placement {
  // Per image of the recipe, its offset in the block.
  std::vector<std::uint64_t> offsets;
  // The block's size, and what it would be with no image sharing memory.
  std::uint64_t bytes = 0;
  std::uint64_t unaliased_bytes = 0;
};

// Places `lane`'s images, `sizes[i]` for lane.images[i]: each pool's images
// together, in pool order; an interval pool's aliasable ones packed by their
// live intervals (as its arena is) unless that packs worse, the rest side
// by side. Imported images (the engine's) take no bytes: offset 0, their
// sizes unread. Errors: invalid_image (as many sizes as images, each of at least
// one byte with a power-of-two alignment, or the detail says which is not),
// size_overflow.
[[nodiscard]] result<image_placement> place_lane_images(const lane_recipe& lane, std::span<const image_size> sizes);

}  // namespace ferrum
