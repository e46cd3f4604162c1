// lane_image_placement.cpp — the specs and placement of a lane's images
// (ferrum/scheduler/lane_image_placement.hpp).
#include "ferrum/scheduler/lane_image_placement.hpp"

#include <string>
#include <vector>

namespace ferrum {

std::uint32_t image_usage_of(std::uint32_t accesses) noexcept {
  const auto takes = [&](resource_access a) { return (accesses & (1u << static_cast<unsigned>(a))) != 0; };
  std::uint32_t usage = 0;
  if (takes(resource_access::sampled)) usage |= gpu::image_usage::sampled;
  if (takes(resource_access::storage_read) || takes(resource_access::storage_write) ||
      takes(resource_access::storage_read_write))
    usage |= gpu::image_usage::storage;
  if (takes(resource_access::color_attachment)) usage |= gpu::image_usage::color_attachment;
  if (takes(resource_access::depth_attachment)) usage |= gpu::image_usage::depth_attachment;
  // Read by depth tests and by shaders.
  if (takes(resource_access::depth_read)) usage |= gpu::image_usage::depth_attachment | gpu::image_usage::sampled;
  if (takes(resource_access::transfer_src)) usage |= gpu::image_usage::transfer_src;
  if (takes(resource_access::transfer_dst)) usage |= gpu::image_usage::transfer_dst;
  return usage;
}

gpu::image_spec lane_image_spec(const lane_image& i) noexcept {
  return {i.image.format, i.image.width, i.image.height, i.image.mips, i.image.layers, image_usage_of(i.accesses)};
}

namespace {

error in_bucket(const compiled_bucket& bucket, error e) {
  e.detail = "the images of bucket " + quote_text(bucket.id.str()) + ": " + e.detail;
  return e;
}

}  // namespace

result<image_placement> lane_image_placement(const compiled_bucket& bucket, gpu::device& device) {
  std::vector<image_size> sizes;
  for (const lane_image& i : bucket.lane.images) {
    if (i.imported) {  // the engine's
      sizes.push_back({});
      continue;
    }
    auto needs = device.image_requirements(lane_image_spec(i));
    if (!needs) return in_bucket(bucket, needs.error());
    sizes.push_back({needs->bytes, needs->alignment});
  }
  auto placement = place_lane_images(bucket.lane, sizes);
  if (!placement) return in_bucket(bucket, placement.error());
  return placement;
}

}  // namespace ferrum
