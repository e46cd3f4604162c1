#include "lane_images.hpp"

#include "ferrum/binding/image_access.hpp"
#include "ferrum/scheduler/lane_image_placement.hpp"

#include <string>
#include <vector>

namespace ferrum::detail {

result<lane_images> make_lane_images(const compiled_program& program, const compiled_bucket& bucket,
                                     gpu::device& device) {
  const lane_recipe& recipe = bucket.lane;
  lane_images out;
  if (recipe.images.empty()) return out;
  auto placement = lane_image_placement(bucket, device);
  if (!placement) return placement.error();
  // The images the lane makes, and each recipe image's among them (imported
  // ones: none, until a wave names the engine's).
  // `made[i]`: its place among the images made, or among the imported ones.
  std::vector<gpu::placed_image> placed;
  std::vector<std::size_t> made(recipe.images.size(), 0);
  std::size_t imported = 0;
  for (std::size_t i = 0; i < recipe.images.size(); ++i) {
    if (recipe.images[i].imported) {
      made[i] = imported++;
      continue;
    }
    made[i] = placed.size();
    placed.push_back({lane_image_spec(recipe.images[i]), placement->offsets[i], recipe.images[i].initial});
  }
  if (!placed.empty()) {
    auto memory = device.create_image_memory(placed, placement->bytes);
    if (!memory) {
      error e = memory.error();
      e.detail = "the image memory of bucket " + quote_text(bucket.id.str()) + ": " + e.detail;
      return e;
    }
    out.memory = std::move(*memory);
  }
  out.bytes = placement->bytes;
  out.unaliased_bytes = placement->unaliased_bytes;
  const auto image_at = [&](std::size_t i) -> const gpu::image* {
    return recipe.images[i].imported ? nullptr : &out.memory->at(made[i]);
  };
  std::vector<bool> seen(recipe.images.size(), false);
  for (std::size_t t = 0; t < recipe.transitions.size(); ++t) {
    const image_transition& transition = recipe.transitions[t];
    out.transitions.push_back({image_at(transition.image), transition.from, transition.to});
    if (!recipe.images[transition.image].imported) continue;
    out.imports.push_back({made[transition.image], lane_images::no_entry, t, !seen[transition.image]});
    seen[transition.image] = true;
  }
  out.transition_begin = recipe.transition_begin;
  // Each image's first and last node in the wave: an attachment's load and
  // store ops (node_image).
  const auto is_image = [&](const lane_use& use, const lane_image& image) {
    return image.domain == use.domain && image.member == use.member;
  };
  constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::vector<std::size_t> first(recipe.images.size(), none);
  std::vector<std::size_t> last(recipe.images.size(), none);
  for (std::size_t n = 0; n < program.node_count; ++n)
    for (const lane_use& use : recipe.node_uses(n))
      for (std::size_t i = 0; i < recipe.images.size(); ++i)
        if (is_image(use, recipe.images[i])) {
          if (first[i] == none) first[i] = n;
          last[i] = n;
        }
  out.use_begin.push_back(0);
  for (std::size_t n = 0; n < program.node_count; ++n) {
    for (const lane_use& use : recipe.node_uses(n)) {
      for (std::size_t i = 0; i < recipe.images.size(); ++i) {
        const lane_image& image = recipe.images[i];
        if (!is_image(use, image)) continue;
        if (image.imported) out.imports.push_back({made[i], out.uses.size()});
        node_image& u =
            out.uses.emplace_back(node_image{&bucket.capacity_layouts[use.domain].projections[use.member].resource,
                                             image_at(i), use.access, layout_of(use.access)});
        if (!is_attachment_access(use.access)) continue;
        // Cleared where its first use in the wave draws into it or writes
        // its depth, so overwrites it (the engine's images too: what the
        // wave draws on is what it cleared, not what the engine left); a
        // persistent image keeps the lane's last wave's drawing.
        const bool overwrites =
            use.access == resource_access::color_attachment || use.access == resource_access::depth_attachment;
        if (n == first[i] && overwrites && image.lifetime == allocation_lifetime::invocation)
          u.load = attachment_load::clear;
        // Dropped after its last use where only the wave has it: a
        // persistent image keeps it for the lane's next wave, the engine's
        // for the engine.
        if (n == last[i] && image.lifetime == allocation_lifetime::invocation && !image.imported)
          u.store = attachment_store::dont_care;
      }
    }
    out.use_begin.push_back(out.uses.size());
  }
  return out;
}

}  // namespace ferrum::detail
