#include "plan_hash_tails.hpp"

#include "plan_rules.hpp"

#include <algorithm>
#include <tuple>

namespace ferrum::detail {
namespace {

// A v2 plan's declared accesses other than read_write (the default, so
// declaring it is no declaration) to whole resources, and those to part of
// an image (`ranged`), nodes in plan order and each node's resources in id
// order (a ranged image's listings by their first level and layer, which
// tell them apart: their ranges do not overlap); errors of check_access.
struct declared_access {
  std::size_t node;
  std::string_view resource;
  resource_access access;
  subresource_range range;
};
struct declarations {
  std::vector<declared_access> whole;
  std::vector<declared_access> ranged;
};

result<declarations> declared_accesses(const plan& p) {
  declarations declared;
  const auto by_resource = [](const declared_access& a, const declared_access& b) {
    return std::tie(a.resource, a.range.base_mip, a.range.base_layer) <
           std::tie(b.resource, b.range.base_mip, b.range.base_layer);
  };
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const plan_node& node = p.nodes[i];
    if (node.access.empty() && node.ranges.empty()) continue;
    if (auto ok = check_access(node, i, p.format); !ok) return ok.error();
    const std::size_t whole = declared.whole.size();
    const std::size_t ranged = declared.ranged.size();
    for (std::size_t k = 0; k < node.resources.size(); ++k) {
      const declared_access d{i, node.resources[k].view(), node.access_of(k), node.range_of(k)};
      if (!d.range.whole())
        declared.ranged.push_back(d);
      else if (d.access != resource_access::read_write)
        declared.whole.push_back(d);
    }
    std::sort(declared.whole.begin() + static_cast<std::ptrdiff_t>(whole), declared.whole.end(), by_resource);
    std::sort(declared.ranged.begin() + static_cast<std::ptrdiff_t>(ranged), declared.ranged.end(), by_resource);
  }
  return declared;
}

// The plan hash's trailing part (docs/canonical-encoding.md): present only
// when there is a declaration, so plans without any hash as before.
void hash_declared_accesses(sha256_writer& w, const std::vector<declared_access>& declared) {
  w.u64(declared.size());
  for (const declared_access& d : declared) {
    w.u64(d.node);
    w.str(d.resource);
    w.enumeration(d.access);
  }
}

// The tail after the images' (docs/canonical-encoding.md): the accesses to
// part of an image, each with its range as declared.
void hash_ranged_accesses(sha256_writer& w, const std::vector<declared_access>& ranged) {
  w.u64(ranged.size());
  for (const declared_access& d : ranged) {
    w.u64(d.node);
    w.str(d.resource);
    w.enumeration(d.access);
    w.u64(d.range.base_mip);
    w.u64(d.range.mips);
    w.u64(d.range.base_layer);
    w.u64(d.range.layers);
  }
}

// A v2 plan's declared memory classes other than the derived one (upload
// for a pool of binding resources, device for any other: declaring it is no
// declaration), of `pools` (the options in pool id order).
std::vector<const pool_option*> declared_classes(const plan& p, const std::vector<const pool_option*>& pools) {
  std::vector<const pool_option*> declared;
  for (const pool_option* o : pools)
    if (o->memory) declared.push_back(o);
  if (declared.empty()) return declared;
  const auto binds = binding_pools(p);
  std::erase_if(declared, [&](const pool_option* o) {
    return *o->memory == detail::derived_memory_class(binds.contains(o->pool.view()));
  });
  return declared;
}

// The tail after the accesses' (docs/canonical-encoding.md).
void hash_declared_classes(sha256_writer& w, const std::vector<const pool_option*>& declared) {
  w.u64(declared.size());
  for (const pool_option* o : declared) {
    w.str(o->pool.view());
    w.enumeration(*o->memory);
  }
}

// The tail after the classes' (docs/canonical-encoding.md): the image
// resources, in id order.
void hash_images(sha256_writer& w, const plan& p, std::span<const std::size_t> resources_by_id, std::size_t count) {
  w.u64(count);
  for (std::size_t i : resources_by_id) {
    const resource_descriptor& r = p.resources[i];
    if (!r.image) continue;
    w.str(r.id.view());
    w.enumeration(r.image->format);
    if (r.image->bucket_extent && r.image->extent_divisor != 1) {
      // A fraction of the bucket's: tag 2, the divisor where a width goes.
      w.u8(2);
      w.u64(r.image->extent_divisor);
      w.u64(0);
    } else {
      w.u8(r.image->bucket_extent);
      w.u64(r.image->width);
      w.u64(r.image->height);
    }
    w.u64(r.image->mips);
    w.u64(r.image->layers);
  }
}

// The tail after the ranged accesses' (docs/canonical-encoding.md): each
// previous of a history pair and the current it is the history of, in the
// previous's id order.
void hash_histories(sha256_writer& w, const plan& p, std::span<const std::size_t> resources_by_id, std::size_t count) {
  w.u64(count);
  for (std::size_t i : resources_by_id) {
    const resource_descriptor& r = p.resources[i];
    if (!r.history_of) continue;
    w.str(r.id.view());
    w.str(r.history_of->view());
  }
}

// The tail after the history pairs' (docs/canonical-encoding.md): the kept
// resources, in id order, and whether the plan culls (Culling).
void hash_culling(sha256_writer& w, const plan& p, std::span<const std::size_t> resources_by_id, std::size_t kept) {
  w.u64(kept);
  for (std::size_t i : resources_by_id)
    if (p.resources[i].kept) w.str(p.resources[i].id.view());
  w.u8(p.cull ? 1 : 0);
}

}  // namespace

// The pools holding binding resources.
boost::unordered_flat_set<std::string_view, std::hash<std::string_view>> binding_pools(const plan& p) {
  boost::unordered_flat_set<std::string_view, std::hash<std::string_view>> pools;
  for (const resource_descriptor& r : p.resources)
    if (r.kind == allocation_kind::binding) pools.insert(r.pool.view());
  return pools;
}

result<void> hash_v2_tails(sha256_writer& w, const plan& p, std::span<const std::size_t> resources_by_id,
                           const std::vector<const pool_option*>& pools) {
  const auto declared = declared_accesses(p);
  if (!declared) return declared.error();
  // Each part is written where it, or a part after it, is present, so that
  // the parts are told apart by position: declared memory classes follow the
  // accesses', images the classes', ranged accesses the images', history
  // pairs the ranged accesses'.
  const auto classes = declared_classes(p, pools);
  const auto images = static_cast<std::size_t>(
      std::count_if(p.resources.begin(), p.resources.end(), [](const resource_descriptor& r) { return r.image; }));
  const auto histories = static_cast<std::size_t>(std::count_if(
      p.resources.begin(), p.resources.end(), [](const resource_descriptor& r) { return r.history_of.has_value(); }));
  const auto kept = static_cast<std::size_t>(
      std::count_if(p.resources.begin(), p.resources.end(), [](const resource_descriptor& r) { return r.kept; }));
  const bool culling = kept != 0 || !p.cull;
  const bool history = histories != 0 || culling;
  const bool ranged = !declared->ranged.empty() || history;
  if (!declared->whole.empty() || !classes.empty() || images != 0 || ranged) hash_declared_accesses(w, declared->whole);
  if (!classes.empty() || images != 0 || ranged) hash_declared_classes(w, classes);
  if (images != 0 || ranged) hash_images(w, p, resources_by_id, images);
  if (ranged) hash_ranged_accesses(w, declared->ranged);
  if (history) hash_histories(w, p, resources_by_id, histories);
  if (culling) hash_culling(w, p, resources_by_id, kept);
  return {};
}

}  // namespace ferrum::detail
