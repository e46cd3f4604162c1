#include "image_rules.hpp"

#include "ferrum/binding/image_access.hpp"

#include "history_rules.hpp"
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

// What the earlier nodes left of one image while the uses are walked, per
// subresource (mip-major: level m of layer l is m * layers + l).
struct image_state {
  std::vector<bool> written;
  std::vector<image_layout> left;  // the layout each was left in
  bool presented = false;
  std::size_t last_node = 0;  // the last use: its node and listing
  std::size_t last_use = 0;

  // Whether every subresource of `r` (resolved) was written; marks them
  // written, and left in `l`.
  bool use(const subresource_range& r, std::uint32_t layers, image_layout l) {
    bool all = true;
    for (std::uint32_t m = r.base_mip; m < r.base_mip + r.mips; ++m)
      for (std::uint32_t y = r.base_layer; y < r.base_layer + r.layers; ++y) {
        const std::size_t cell = std::size_t{m} * layers + y;
        all = all && written[cell];
        written[cell] = true;
        left[cell] = l;
      }
    return all;
  }
};

// Node n's k-th use reaches `range` of image `r`: inside it, one mip level
// for an attachment, the whole image for present (invalid_image_access).
result<void> check_range(const plan& p, std::size_t n, std::size_t k, const resource_descriptor& r,
                         const subresource_range& range) {
  const plan_node& node = p.nodes[n];
  const subresource_range declared = node.range_of(k);
  const image_desc& image = *r.image;
  if (!fits(range, image.mips, image.layers))
    return access_path_error(errc::invalid_image_access, p, n, k,
                             who(r) + " has " + std::to_string(image.mips) + " mip levels and " +
                                 std::to_string(image.layers) + " layers; the access reaches mip levels from " +
                                 std::to_string(declared.base_mip) + " (" +
                                 (declared.mips == 0 ? "to the last" : std::to_string(declared.mips)) +
                                 ") of layers from " + std::to_string(declared.base_layer) + " (" +
                                 (declared.layers == 0 ? "to the last" : std::to_string(declared.layers)) + ")");
  const resource_access a = node.access_of(k);
  if (is_attachment_access(a) && range.mips != 1)
    return access_path_error(errc::invalid_image_access, p, n, k,
                             who(r) + " is drawn into at " + to_string(range) +
                                 "; an attachment is one mip level (name it with 'mips': [level, 1])");
  if (a == resource_access::present && !declared.whole())
    return access_path_error(errc::invalid_image_access, p, n, k,
                             who(r) + " is presented at " + to_string(range) + "; present takes the whole image");
  return {};
}

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
  if (image.extent_divisor != 1 && (!image.bucket_extent || !is_extent_divisor(image.extent_divisor)))
    return make_error(errc::invalid_image,
                      who(r) + ": extent divisor " + std::to_string(image.extent_divisor) +
                          (image.bucket_extent ? " is not a power of two in 2.." + std::to_string(max_extent_divisor)
                                               : " on a fixed extent; only a bucket's extent is divided"),
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
        if (!node.range_of(k).whole())
          return access_path_error(errc::invalid_access, p, n, k,
                                   "resource " + resource_id::quote(r.id.view()) +
                                       " is a buffer; only an image's access names mip levels and layers");
        if (node.queue == queue_kind::transfer && !transfer_queue_takes(a))
          return access_path_error(errc::invalid_access, p, n, k,
                                   "a transfer-queue node reaches buffer " + resource_id::quote(r.id.view()) +
                                       " by 'read', 'write' or 'read-write' only, not " + access +
                                       " (a transfer queue runs no draws and no shaders)");
        if (node.queue == queue_kind::async_compute && is_draw_access(a))
          return access_path_error(errc::invalid_access, p, n, k,
                                   "an async-compute node draws nothing: buffer " + resource_id::quote(r.id.view()) +
                                       " cannot be its " + access + " buffer (raster nodes run on the compute queue)");
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
      if (node.queue == queue_kind::async_compute && (is_attachment_access(a) || a == resource_access::present))
        return access_path_error(errc::invalid_image_access, p, n, k,
                                 "an async-compute node cannot take " + who(r) + " as " + access +
                                     ": raster nodes (attachments) and 'present' run on the compute queue only");
      image_state& state = images[uses[k]];
      if (state.presented)
        return access_path_error(errc::invalid_image_access, p, n, k,
                                 who(r) + " is used after it was presented; 'present' is an image's last use");
      const subresource_range range = resolve(node.range_of(k), r.image->mips, r.image->layers);
      if (auto ok = check_range(p, n, k, r, range); !ok) return ok.error();
      const bool imported = is_imported(p, r);
      if (imported && !node.range_of(k).whole())
        return access_path_error(errc::invalid_image_access, p, n, k,
                                 who(r) +
                                     " is imported; an access to an imported image takes the whole image "
                                     "(ferrum makes views of ranges of the lane's own images only)");
      if (state.written.empty()) {
        state.written.assign(std::size_t{r.image->mips} * r.image->layers, false);
        state.left.assign(state.written.size(), image_layout::undefined);
      }
      state.last_node = n;
      state.last_use = k;
      const bool kept = holds_earlier_contents(r) || imported;
      if (!state.use(range, r.image->layers, layout_of(a)) && !kept && !writes_whole(a))
        return access_path_error(errc::image_read_before_write, p, n, k,
                                 who(r) + " is read (" + access + ") at " + to_string(range) +
                                     " before any node writes it there; a subresource's first use in a wave "
                                     "writes it whole ('storage-write', 'color-attachment', 'depth-attachment', "
                                     "'transfer-dst') unless the image is persistent, imported or a history's "
                                     "previous");
      state.presented = a == resource_access::present;
    }
  }
  // A persistent image starts the next wave in the layout its last use
  // left: one for every subresource the wave reaches.
  for (std::size_t i = 0; i < images.size(); ++i) {
    const image_state& state = images[i];
    if (p.resources[i].lifetime != allocation_lifetime::persistent || state.left.empty()) continue;
    const image_layout last = layout_of(p.nodes[state.last_node].access_of(state.last_use));
    const auto other = std::find_if(state.left.begin(), state.left.end(),
                                    [&](image_layout l) { return l != image_layout::undefined && l != last; });
    if (other == state.left.end()) continue;
    const auto cell = static_cast<std::uint32_t>(other - state.left.begin());
    const std::uint32_t layers = p.resources[i].image->layers;
    return access_path_error(errc::invalid_image_access, p, state.last_node, state.last_use,
                             "persistent " + who(p.resources[i]) + " ends the wave in " + quote_text(to_string(last)) +
                                 " here but in " + quote_text(to_string(*other)) + " at " +
                                 to_string({cell / layers, 1, cell % layers, 1}) +
                                 "; a persistent image's wave leaves every subresource it reaches in one layout");
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
  // Each side ceil(d / k), never 0 (a bucket's side is at least 1).
  const std::uint64_t k = std::max<std::uint32_t>(image.extent_divisor, 1);
  const auto side = [k](std::uint64_t d) {
    return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (d + k - 1) / k));
  };
  const image_extent extent{side(dims[0]), side(dims[1])};
  if (image.mips > full_mip_chain(extent.width, extent.height))
    return make_error(errc::invalid_image, who(r) + ": " + std::to_string(image.mips) + " mip levels, and its " +
                                               std::to_string(extent.width) + "x" + std::to_string(extent.height) +
                                               " (" + extent_text(image) + ") in a bucket of " +
                                               std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + " has " +
                                               std::to_string(full_mip_chain(extent.width, extent.height)));
  return extent;
}

std::uint64_t image_bytes(const image_desc& image, image_extent extent) noexcept {
  std::uint64_t bytes = 0;
  for (std::uint32_t level = 0; level < image.mips; ++level)
    bytes += level_bytes(image.format, std::max(1u, extent.width >> level), std::max(1u, extent.height >> level));
  return bytes * image.layers;
}

}  // namespace ferrum::detail
