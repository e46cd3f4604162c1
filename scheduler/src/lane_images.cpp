#include "lane_images.hpp"

#include "ferrum/binding/image_access.hpp"
#include "ferrum/binding/image_placement.hpp"

#include <string>

namespace ferrum::detail {

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

result<lane_images> make_lane_images(const compiled_program& program, const compiled_bucket& bucket,
                                     gpu::device& device) {
  const lane_recipe& recipe = bucket.lane;
  lane_images out;
  if (recipe.images.empty()) return out;
  const auto in_bucket = [&](error e) {
    e.detail = "the images of bucket " + quote_text(bucket.id.str()) + ": " + e.detail;
    return e;
  };
  std::vector<gpu::placed_image> placed;
  std::vector<image_size> sizes;
  for (const lane_image& i : recipe.images) {
    const gpu::image_spec spec{i.image.format, i.image.width,  i.image.height,
                               i.image.mips,   i.image.layers, image_usage_of(i.accesses)};
    auto needs = device.image_requirements(spec);
    if (!needs) return in_bucket(needs.error());
    sizes.push_back({needs->bytes, needs->alignment});
    placed.push_back({spec, 0, i.initial});
  }
  auto placement = place_lane_images(recipe, sizes);
  if (!placement) return in_bucket(placement.error());
  for (std::size_t i = 0; i < placed.size(); ++i) placed[i].offset = placement->offsets[i];
  auto memory = device.create_image_memory(placed, placement->bytes);
  if (!memory) return in_bucket(memory.error());
  out.memory = std::move(*memory);
  out.bytes = placement->bytes;
  out.unaliased_bytes = placement->unaliased_bytes;
  for (const image_transition& t : recipe.transitions)
    out.transitions.push_back({&out.memory->at(t.image), t.from, t.to});
  out.transition_begin = recipe.transition_begin;
  out.use_begin.push_back(0);
  for (std::size_t n = 0; n < program.node_count; ++n) {
    for (const lane_use& use : recipe.node_uses(n)) {
      for (std::size_t i = 0; i < recipe.images.size(); ++i) {
        const lane_image& image = recipe.images[i];
        if (image.domain != use.domain || image.member != use.member) continue;
        out.uses.push_back({&bucket.capacity_layouts[use.domain].projections[use.member].resource, &out.memory->at(i),
                            use.access, layout_of(use.access)});
      }
    }
    out.use_begin.push_back(out.uses.size());
  }
  return out;
}

}  // namespace ferrum::detail
