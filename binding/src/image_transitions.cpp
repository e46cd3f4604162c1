#include "image_transitions.hpp"

#include "ferrum/binding/image_access.hpp"

#include "image_rules.hpp"

#include <algorithm>
#include <limits>

namespace ferrum::detail {

image_plan derive_image_transitions(const plan& p, const plan_index& index, const std::vector<pool_domain>& domains,
                                    const std::vector<wave_domain_layout>& layouts) {
  image_plan out;
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> image_of(p.resources.size(), none);
  for (std::size_t d = 0; d < domains.size(); ++d)
    for (std::size_t m = 0; m < domains[d].members.size(); ++m) {
      const std::size_t r = domains[d].members[m];
      const resource_descriptor& res = p.resources[r];
      if (!res.image) continue;
      image_of[r] = out.images.size();
      lane_image& image = out.images.emplace_back(lane_image{res.id, d, m, *res.image, res.lifetime});
      image.imported = domains[d].memory == memory_class::imported;
      // An interval pool holds invocation resources only, each with its interval.
      if (domains[d].liveness == liveness_mode::interval) {
        image.aliasable = true;
        image.live = layouts[d].intervals[m];
      }
      out.resources.push_back(r);
    }
  out.transition_begin.assign(1, 0);
  if (out.images.empty()) {
    out.transition_begin.assign(p.nodes.size() + 1, 0);
    return out;
  }

  // Each image's accesses, and the last one: where a persistent image starts.
  std::vector<std::optional<resource_access>> last(out.images.size());
  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    const auto uses = index.uses(n);
    for (std::size_t k = 0; k < uses.size(); ++k)
      if (const std::size_t i = image_of[uses[k]]; i != none) {
        const resource_access a = p.nodes[n].access_of(k);
        out.images[i].accesses |= 1u << static_cast<unsigned>(a);
        last[i] = a;
      }
  }
  std::vector<image_layout> layout(out.images.size(), image_layout::undefined);
  for (std::size_t i = 0; i < out.images.size(); ++i) {
    if (out.images[i].lifetime != allocation_lifetime::persistent || !last[i]) {
      last[i].reset();
      continue;
    }
    out.images[i].initial = layout[i] = layout_of(*last[i]);
  }

  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    const std::size_t first = out.transitions.size();
    const auto uses = index.uses(n);
    for (std::size_t k = 0; k < uses.size(); ++k) {
      const std::size_t i = image_of[uses[k]];
      if (i == none) continue;
      const resource_access a = p.nodes[n].access_of(k);
      if (layout[i] != layout_of(a)) out.transitions.push_back({i, layout[i], layout_of(a), last[i], a});
      layout[i] = layout_of(a);
      last[i] = a;
    }
    std::sort(out.transitions.begin() + static_cast<std::ptrdiff_t>(first), out.transitions.end(),
              [](const image_transition& x, const image_transition& y) { return x.image < y.image; });
    out.transition_begin.push_back(out.transitions.size());
  }
  return out;
}

result<void> place_images(lane_recipe& recipe, const image_plan& images, const plan& p, const bucket_capacity& dims) {
  recipe.images = images.images;
  for (std::size_t i = 0; i < recipe.images.size(); ++i) {
    auto extent = resolve_image_extent(p.resources[images.resources[i]], dims);
    if (!extent) return extent.error();
    image_desc& image = recipe.images[i].image;
    recipe.images[i].bucket_divisor = image.bucket_extent ? image.extent_divisor : 0;
    image.bucket_extent = false;
    image.extent_divisor = 1;
    image.width = extent->width;
    image.height = extent->height;
  }
  recipe.transitions = images.transitions;
  recipe.transition_begin = images.transition_begin;
  return {};
}

}  // namespace ferrum::detail
