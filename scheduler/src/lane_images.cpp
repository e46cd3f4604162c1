#include "lane_images.hpp"

#include "ferrum/binding/image_access.hpp"
#include "ferrum/scheduler/lane_image_placement.hpp"

#include <string>

namespace ferrum::detail {

result<lane_images> make_lane_images(const compiled_program& program, const compiled_bucket& bucket,
                                     gpu::device& device) {
  const lane_recipe& recipe = bucket.lane;
  lane_images out;
  if (recipe.images.empty()) return out;
  auto placement = lane_image_placement(bucket, device);
  if (!placement) return placement.error();
  std::vector<gpu::placed_image> placed;
  for (std::size_t i = 0; i < recipe.images.size(); ++i)
    placed.push_back({lane_image_spec(recipe.images[i]), placement->offsets[i], recipe.images[i].initial});
  auto memory = device.create_image_memory(placed, placement->bytes);
  if (!memory) {
    error e = memory.error();
    e.detail = "the image memory of bucket " + quote_text(bucket.id.str()) + ": " + e.detail;
    return e;
  }
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
