// image_transitions.hpp (private) — a plan's images and the layout
// transitions its nodes make (lane_recipe::images, transitions), derived
// from the nodes' accesses in plan order (docs/design.md, "Images"). The
// same for every bucket but for the images' extents.
#pragma once

#include "ferrum/binding/lane_recipe.hpp"
#include "ferrum/binding/pool_domain.hpp"
#include "plan_index.hpp"

#include <vector>

namespace ferrum::detail {

struct image_plan {
  std::vector<lane_image> images;      // extents as declared
  std::vector<std::size_t> resources;  // per image, its plan index
  std::vector<image_transition> transitions;
  std::vector<std::size_t> transition_begin;
};

// The images of `domains` (program order; `layouts`, their wave layouts,
// give the interval pools' live intervals) and the transitions of `p`'s
// nodes, a checked plan indexed by `index`.
[[nodiscard]] image_plan derive_image_transitions(const plan& p, const plan_index& index,
                                                  const std::vector<pool_domain>& domains,
                                                  const std::vector<wave_domain_layout>& layouts);

// Fills `recipe`'s images and transitions from `images`, each image's
// extent the one it has in a bucket of `dims` (invalid_image as
// resolve_image_extent).
[[nodiscard]] result<void> place_images(lane_recipe& recipe, const image_plan& images, const plan& p,
                                        const bucket_capacity& dims);

}  // namespace ferrum::detail
