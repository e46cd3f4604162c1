#include "image_rules.hpp"

#include "ferrum/binding/image_access.hpp"

#include "json_pointer.hpp"
#include "plan_rules.hpp"

#include <algorithm>
#include <vector>

namespace ferrum::detail {
namespace {

std::string image_path(std::size_t index, std::string_view field) {
  return resource_path(index) + "/image" + (field.empty() ? "" : "/" + std::string(field));
}

std::string who(const resource_descriptor& r) { return "image " + resource_id::quote(r.id.view()); }

// Whether a buffer's field of `r` differs from its default.
bool sets_buffer_fields(const resource_descriptor& r) {
  const resource_descriptor defaults;
  return r.demand != defaults.demand || r.alignment != defaults.alignment || r.usage != defaults.usage ||
         r.element != defaults.element || r.storage != defaults.storage || r.node.has_value();
}

error access_path_error(errc code, const plan& p, std::size_t n, std::size_t k, std::string detail) {
  const plan_node& node = p.nodes[n];
  return make_error(code, "node " + node_id::quote(node.id.view()) + ": " + std::move(detail),
                    element_path("nodes", n) + "/access/" + json_pointer_token(node.resources[k].view()));
}

// What the earlier nodes left of one image while the uses are walked.
struct image_state {
  bool written = false;
  bool presented = false;
};

// Whether the access writes every texel without reading any.
constexpr bool writes_whole(resource_access a) noexcept { return !access_reads(a); }

// Whether `r` is in an imported pool: an image of the engine's, which each
// wave names (wave_request::images).
bool is_imported(const plan& p, const resource_descriptor& r) {
  return std::any_of(p.pools.begin(), p.pools.end(),
                     [&](const pool_option& o) { return o.pool == r.pool && o.memory == memory_class::imported; });
}

}  // namespace

result<void> check_image(const plan& p, const resource_descriptor& r, std::size_t index) {
  if (!r.image) return {};
  const image_desc& image = *r.image;
  if (p.format != plan_format::v2) return v2_field_in_v1("image", image_path(index, ""));
  if (r.kind != allocation_kind::workspace)
    return make_error(errc::invalid_image, who(r) + " is a binding resource; an image is a workspace resource",
                      resource_path(index) + "/kind");
  if (r.lifetime == allocation_lifetime::persistent && is_imported(p, r))
    return make_error(errc::invalid_image,
                      who(r) + " is imported: it holds what the engine puts in it, and cannot be persistent",
                      resource_path(index) + "/lifetime");
  if (sets_buffer_fields(r))
    return make_error(errc::invalid_image,
                      who(r) +
                          " sets a buffer's demand, alignment, usage, element, storage or node; an image's "
                          "bytes follow from its format and extent",
                      resource_path(index));
  if (!image.bucket_extent &&
      (image.width == 0 || image.height == 0 || image.width > max_image_extent || image.height > max_image_extent))
    return make_error(errc::invalid_image,
                      who(r) + ": extent " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                          " is outside 1.." + std::to_string(max_image_extent),
                      image_path(index, "extent"));
  if (image.layers == 0 || image.layers > max_image_layers)
    return make_error(
        errc::invalid_image,
        who(r) + ": " + std::to_string(image.layers) + " layers is outside 1.." + std::to_string(max_image_layers),
        image_path(index, "layers"));
  const std::uint32_t chain = image.bucket_extent ? 32 : full_mip_chain(image.width, image.height);
  if (image.mips == 0 || image.mips > chain)
    return make_error(errc::invalid_image,
                      who(r) + ": " + std::to_string(image.mips) + " mip levels is outside 1.." +
                          std::to_string(chain) + (image.bucket_extent ? "" : " for its extent"),
                      image_path(index, "mips"));
  if (image.bucket_extent)
    for (const bucket_spec& bucket : p.buckets)
      if (auto extent = resolve_image_extent(r, bucket.dims); !extent)
        return make_error(errc::invalid_image, extent.error().detail, image_path(index, ""));
  return {};
}

result<void> check_image_uses(const plan& p, std::span<const std::size_t> all_uses) {
  std::vector<image_state> images(p.resources.size());
  for (std::size_t n = 0, first = 0; n < p.nodes.size(); first += p.nodes[n].resources.size(), ++n) {
    const plan_node& node = p.nodes[n];
    const auto uses = all_uses.subspan(first, node.resources.size());
    for (std::size_t k = 0; k < uses.size(); ++k) {
      const resource_descriptor& r = p.resources[uses[k]];
      const resource_access a = node.access_of(k);
      const std::string access = quote_text(to_string(a));
      if (!r.image) {
        if (is_image_access(a))
          return access_path_error(errc::invalid_access, p, n, k,
                                   "resource " + resource_id::quote(r.id.view()) + " is a buffer; " + access +
                                       " is an image's access (a buffer's: 'read', 'write', 'read-write', "
                                       "'vertex', 'index', 'indirect', 'uniform')");
        if (node.queue == queue_kind::transfer && !transfer_queue_takes(a))
          return access_path_error(errc::invalid_access, p, n, k,
                                   "a transfer-queue node reaches buffer " + resource_id::quote(r.id.view()) +
                                       " by 'read', 'write' or 'read-write' only, not " + access +
                                       " (a transfer queue runs no draws and no shaders)");
        continue;
      }
      if (!is_image_access(a))
        return access_path_error(errc::invalid_access, p, n, k,
                                 who(r) + " needs an image access, not " + access +
                                     " (the default where none is declared): 'sampled', 'storage-read', "
                                     "'storage-write', 'storage-read-write', 'color-attachment', "
                                     "'depth-attachment', 'depth-read', 'transfer-src', 'transfer-dst', 'present'");
      if (!format_takes(r.image->format, a))
        return access_path_error(
            errc::invalid_image_access, p, n, k,
            who(r) + " of format " + quote_text(to_string(r.image->format)) + " cannot take " + access);
      if (a == resource_access::present && !is_imported(p, r))
        return access_path_error(errc::invalid_image_access, p, n, k,
                                 who(r) +
                                     " is presented but not imported: only an engine's image (a swapchain's, in a "
                                     "pool of memory 'imported') can be presented");
      if (node.queue == queue_kind::transfer && !transfer_queue_takes(a))
        return access_path_error(
            errc::invalid_image_access, p, n, k,
            "a transfer-queue node reaches " + who(r) + " by 'transfer-src' or 'transfer-dst' only, not " + access);
      image_state& state = images[uses[k]];
      if (state.presented)
        return access_path_error(errc::invalid_image_access, p, n, k,
                                 who(r) + " is used after it was presented; 'present' is an image's last use");
      if (!state.written && r.lifetime == allocation_lifetime::invocation && !writes_whole(a) && !is_imported(p, r))
        return access_path_error(errc::image_read_before_write, p, n, k,
                                 who(r) + " is read (" + access +
                                     ") before any node writes it; its first use in a wave writes it whole "
                                     "('storage-write', 'color-attachment', 'depth-attachment', 'transfer-dst') "
                                     "unless it is persistent or imported");
      state.written = true;
      state.presented = a == resource_access::present;
    }
  }
  return {};
}

result<image_extent> resolve_image_extent(const resource_descriptor& r, const bucket_capacity& dims) {
  const image_desc& image = *r.image;
  if (!image.bucket_extent) return image_extent{image.width, image.height};
  if (dims[0] > max_image_extent || dims[1] > max_image_extent)
    return make_error(errc::invalid_image, who(r) + " takes a bucket's extent " + std::to_string(dims[0]) + "x" +
                                               std::to_string(dims[1]) + ", outside 1.." +
                                               std::to_string(max_image_extent));
  const image_extent extent{static_cast<std::uint32_t>(dims[0]), static_cast<std::uint32_t>(dims[1])};
  if (image.mips > full_mip_chain(extent.width, extent.height))
    return make_error(errc::invalid_image, who(r) + ": " + std::to_string(image.mips) + " mip levels, and a bucket's " +
                                               std::to_string(extent.width) + "x" + std::to_string(extent.height) +
                                               " has " + std::to_string(full_mip_chain(extent.width, extent.height)));
  return extent;
}

std::uint64_t image_bytes(const image_desc& image, image_extent extent) noexcept {
  std::uint64_t texels = 0;
  for (std::uint32_t level = 0; level < image.mips; ++level) {
    const std::uint64_t w = std::max<std::uint64_t>(1, extent.width >> level);
    const std::uint64_t h = std::max<std::uint64_t>(1, extent.height >> level);
    texels += w * h;
  }
  return texels * image.layers * texel_bytes(image.format);
}

}  // namespace ferrum::detail
