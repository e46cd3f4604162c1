// lane_image_formats.cpp — whether a device's formats can take what a
// bucket's images are used for (ferrum/scheduler/lane_image_placement.hpp).
#include "ferrum/binding/image_access.hpp"
#include "ferrum/scheduler/lane_image_placement.hpp"

#include <string>

namespace ferrum {

result<void> check_lane_image_formats(const compiled_bucket& bucket, const gpu::device& device) {
  const lane_recipe& recipe = bucket.lane;
  const std::size_t nodes = recipe.use_begin.empty() ? 0 : recipe.use_begin.size() - 1;
  for (std::size_t n = 0; n < nodes; ++n)
    for (const lane_use& use : recipe.node_uses(n)) {
      if (!is_image_access(use.access)) continue;
      const std::uint32_t needed = image_usage_of(1u << static_cast<unsigned>(use.access));
      for (const lane_image& i : recipe.images) {
        if (i.domain != use.domain || i.member != use.member) continue;
        const std::uint32_t missing = needed & ~device.format_features(i.image.format);
        if (missing == 0) break;
        const std::string format(to_string(i.image.format));
        return make_error(errc::format_unsupported,
                          "bucket " + quote_text(bucket.id.str()) + ": image " + quote_text(i.resource.view()) +
                              " of format " + quote_text(format) + " is taken " + quote_text(to_string(use.access)) +
                              " by node " + std::to_string(n) + ", and device " + quote_text(device.name()) +
                              " has no " + gpu::format_feature_names(missing) + " feature for " + format);
      }
    }
  return {};
}

}  // namespace ferrum
