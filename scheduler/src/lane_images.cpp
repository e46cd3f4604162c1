#include "lane_images.hpp"

#include "ferrum/binding/image_access.hpp"
#include "ferrum/scheduler/lane_image_placement.hpp"

#include <algorithm>
#include <string>
#include <utility>
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
  // Each range as the device names it: the whole image's for {}.
  const auto subresources = [&](std::size_t i, const subresource_range& r) {
    const image_desc& image = recipe.images[i].image;
    const subresource_range resolved = resolve(r, image.mips, image.layers);
    return gpu::image_subresources{resolved.base_mip, resolved.mips, resolved.base_layer, resolved.layers};
  };
  for (std::size_t t = 0; t < recipe.transitions.size(); ++t) {
    const image_transition& transition = recipe.transitions[t];
    out.transitions.emplace_back(image_at(transition.image), transition.from, transition.to,
                                 subresources(transition.image, transition.range));
    if (!recipe.images[transition.image].imported) continue;
    // Its first transitions in the wave (of the parts no use left: no
    // `after`) start from the layout the wave names.
    out.imports.push_back({made[transition.image], lane_images::no_entry, t, !transition.after});
  }
  out.transition_begin = recipe.transition_begin;
  // Each use's image (none: a buffer's), and per image its uses (node, range).
  constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::vector<std::size_t> image_of(recipe.uses.size(), none);
  std::vector<std::vector<std::pair<std::size_t, gpu::image_subresources>>> uses_of(recipe.images.size());
  for (std::size_t n = 0; n < program.node_count; ++n)
    for (std::size_t u = recipe.use_begin[n]; u < recipe.use_begin[n + 1]; ++u)
      for (std::size_t i = 0; i < recipe.images.size(); ++i)
        if (recipe.images[i].domain == recipe.uses[u].domain && recipe.images[i].member == recipe.uses[u].member) {
          image_of[u] = i;
          uses_of[i].emplace_back(n, subresources(i, recipe.uses[u].range));
        }
  // Whether image i's use by node n over `range` is the first (or last) in
  // the wave to reach any of those subresources: an attachment's load and
  // store ops (node_image).
  const auto alone = [&](std::size_t i, std::size_t n, const gpu::image_subresources& range, bool before) {
    return std::none_of(uses_of[i].begin(), uses_of[i].end(), [&](const auto& other) {
      return (before ? other.first < n : other.first > n) && gpu::overlaps(other.second, range);
    });
  };
  out.use_begin.push_back(0);
  for (std::size_t n = 0; n < program.node_count; ++n) {
    for (std::size_t u = recipe.use_begin[n]; u < recipe.use_begin[n + 1]; ++u) {
      const std::size_t i = image_of[u];
      if (i == none) continue;
      const lane_use& use = recipe.uses[u];
      const lane_image& image = recipe.images[i];
      if (image.imported) out.imports.push_back({made[i], out.uses.size()});
      node_image& entry =
          out.uses.emplace_back(node_image{&bucket.capacity_layouts[use.domain].projections[use.member].resource,
                                           image_at(i), use.access, layout_of(use.access)});
      entry.range = subresources(i, use.range);
      // A part of one of the lane's own images: a view of exactly it.
      if (!use.range.whole() && !image.imported) {
        auto view = device.create_image_view(*entry.image, entry.range);
        if (!view) {
          error e = view.error();
          e.detail = "a view of image " + quote_text(image.resource.view()) + " (" + to_string(use.range) +
                     ") in bucket " + quote_text(bucket.id.str()) + ": " + e.detail;
          return e;
        }
        entry.view = out.views.emplace_back(std::move(*view)).get();
      }
      if (!is_attachment_access(use.access)) continue;
      // Cleared where its first use in the wave draws into it or writes
      // its depth, so overwrites it (the engine's images too: what the
      // wave draws on is what it cleared, not what the engine left); a
      // persistent image keeps the lane's last wave's drawing.
      const bool overwrites =
          use.access == resource_access::color_attachment || use.access == resource_access::depth_attachment;
      const bool invocation = image.lifetime == allocation_lifetime::invocation;
      if (overwrites && invocation && alone(i, n, entry.range, true)) entry.load = attachment_load::clear;
      // Dropped after its last use where only the wave has it: a
      // persistent image keeps it for the lane's next wave, the engine's
      // for the engine.
      if (invocation && !image.imported && alone(i, n, entry.range, false)) entry.store = attachment_store::dont_care;
    }
    out.use_begin.push_back(out.uses.size());
  }
  return out;
}

}  // namespace ferrum::detail
