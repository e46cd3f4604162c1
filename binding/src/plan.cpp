#include "ferrum/binding/plan.hpp"

#include "dependency_graph_build.hpp"
#include "history_rules.hpp"
#include "image_rules.hpp"
#include "plan_encoding.hpp"
#include "plan_hash_tails.hpp"
#include "plan_index.hpp"
#include "plan_rules.hpp"
#include "queue_order.hpp"
#include "sha256_writer.hpp"

#include <boost/unordered/unordered_flat_set.hpp>

#include <algorithm>
#include <array>
#include <iterator>
#include <tuple>
#include <utility>

namespace ferrum {
namespace {

template <class Enum, std::size_t N>
using name_table = std::array<std::pair<Enum, std::string_view>, N>;

constexpr name_table<allocation_kind, 2> kind_names{
    {{allocation_kind::binding, "binding"}, {allocation_kind::workspace, "workspace"}}};
constexpr name_table<allocation_lifetime, 3> lifetime_names{{{allocation_lifetime::invocation, "invocation"},
                                                             {allocation_lifetime::persistent, "persistent"},
                                                             {allocation_lifetime::history, "history"}}};
constexpr name_table<buffer_usage, 4> usage_names{{{buffer_usage::binding, "binding"},
                                                   {buffer_usage::storage, "storage"},
                                                   {buffer_usage::uniform, "uniform"},
                                                   {buffer_usage::staging, "staging"}}};
constexpr name_table<element_type, 7> element_names{{{element_type::u8, "u8"},
                                                     {element_type::u16, "u16"},
                                                     {element_type::u32, "u32"},
                                                     {element_type::u64, "u64"},
                                                     {element_type::i32, "i32"},
                                                     {element_type::f16, "f16"},
                                                     {element_type::f32, "f32"}}};
constexpr name_table<storage_allocator, 1> allocator_names{{{storage_allocator::linear_arena, "linear-arena"}}};
constexpr name_table<storage_view, 2> view_names{
    {{storage_view::contiguous, "contiguous"}, {storage_view::strided, "strided"}}};
constexpr name_table<liveness_mode, 2> liveness_names{
    {{liveness_mode::conservative, "conservative"}, {liveness_mode::interval, "interval"}}};
constexpr name_table<resource_access, 17> access_names{{{resource_access::read, "read"},
                                                        {resource_access::write, "write"},
                                                        {resource_access::read_write, "read-write"},
                                                        {resource_access::sampled, "sampled"},
                                                        {resource_access::storage_read, "storage-read"},
                                                        {resource_access::storage_write, "storage-write"},
                                                        {resource_access::storage_read_write, "storage-read-write"},
                                                        {resource_access::color_attachment, "color-attachment"},
                                                        {resource_access::depth_attachment, "depth-attachment"},
                                                        {resource_access::depth_read, "depth-read"},
                                                        {resource_access::transfer_src, "transfer-src"},
                                                        {resource_access::transfer_dst, "transfer-dst"},
                                                        {resource_access::present, "present"},
                                                        {resource_access::vertex, "vertex"},
                                                        {resource_access::index, "index"},
                                                        {resource_access::indirect, "indirect"},
                                                        {resource_access::uniform, "uniform"}}};

template <class Enum, std::size_t N>
std::string_view name_of(const name_table<Enum, N>& table, Enum v) noexcept {
  for (const auto& [value, name] : table)
    if (value == v) return name;
  return "unknown";
}

template <class Enum, std::size_t N>
std::optional<Enum> value_of(const name_table<Enum, N>& table, std::string_view text) noexcept {
  for (const auto& [value, name] : table)
    if (name == text) return value;
  return std::nullopt;
}

// Finds duplicates among the ids of `items`: (earlier, later) index of the
// first duplicate in id order, or (size, size) when all are unique.
// Sorting indices keeps this O(n log n).
template <class Items, class Key>
std::pair<std::size_t, std::size_t> find_duplicate(const Items& items, Key key) {
  std::vector<std::size_t> order(items.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& ka = key(items[a]);
    const auto& kb = key(items[b]);
    return ka != kb ? ka < kb : a < b;
  });
  for (std::size_t i = 1; i < order.size(); ++i)
    if (key(items[order[i - 1]]) == key(items[order[i]])) return {order[i - 1], order[i]};
  return {items.size(), items.size()};
}

// validate_plan's stages, in its order.

// Each resource's own fields and its node.
result<void> validate_resources(const plan& p, const detail::plan_index& index) {
  for (std::size_t i = 0; i < p.resources.size(); ++i) {
    const resource_descriptor& r = p.resources[i];
    if (auto ok = detail::check_image(p, r, i); !ok) return ok.error();
    if (auto ok = detail::check_resource_node(r, i); !ok) return ok.error();
    if (r.node && index.owner(i) == detail::plan_index::none)
      return make_error(
          errc::dangling_reference,
          "resource " + resource_id::quote(r.id.view()) + " belongs to unknown node " + node_id::quote(r.node->view()),
          detail::resource_path(i) + "/node");
    if (r.image) continue;
    if (auto ok = detail::check_dimension(r, i); !ok) return ok.error();
    if (auto ok = detail::check_contract(r, i); !ok) return ok.error();
  }
  return {};
}

// Each node's uses and binding; marks the resources they name in `used`.
result<void> validate_nodes(const plan& p, const detail::plan_index& index, std::vector<bool>& used) {
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const plan_node& node = p.nodes[i];
    if (auto ok = detail::check_access(node, i, p.format); !ok) return ok.error();
    for (std::size_t j = 0; j < node.resources.size(); ++j) {
      const std::size_t r = index.uses(i)[j];
      if (r == detail::plan_index::none)
        return make_error(errc::dangling_reference,
                          "node " + node_id::quote(node.id.view()) + " uses unknown resource " +
                              resource_id::quote(node.resources[j].view()),
                          detail::element_path("nodes", i) + "/resources/" + std::to_string(j));
      used[r] = true;
    }
    if (auto ok = detail::check_repeated_uses(p, i, index.uses(i)); !ok) return ok.error();
    if (!node.binding) continue;
    const std::size_t r = index.binding(i);
    if (r == detail::plan_index::none)
      return make_error(errc::dangling_reference,
                        "node " + node_id::quote(node.id.view()) + " binds unknown resource " +
                            resource_id::quote(node.binding->view()),
                        detail::element_path("nodes", i) + "/binding");
    used[r] = true;
    if (auto ok = detail::check_binding_owner(node, i, &p.resources[r]); !ok) return ok.error();
  }
  return {};
}

// Every resource is used; the distinct pools, in id order (a set first, as
// there are few pools and many resources).
result<std::vector<pool_id>> used_pools(const plan& p, const std::vector<bool>& used) {
  boost::unordered_flat_set<std::string_view, std::hash<std::string_view>> pool_names;
  std::string_view previous;
  for (std::size_t i = 0; i < p.resources.size(); ++i) {
    if (!used[i]) return detail::unused_resource(p.resources[i], i);
    // A pool's resources usually come together: hash only a change of pool.
    if (const std::string_view pool = p.resources[i].pool.view(); i == 0 || pool != previous) {
      pool_names.insert(pool);
      previous = pool;
    }
  }
  std::vector<pool_id> pools;
  for (std::string_view name : pool_names) pools.push_back(pool_id::make(name).value());
  std::sort(pools.begin(), pools.end());
  return pools;
}

bool pool_is_used(const std::vector<pool_id>& pools, const pool_id& pool) {
  return std::binary_search(pools.begin(), pools.end(), pool);
}

// Pool options name used pools, each once, and a memory class that fits
// (check_declared_memory).
result<void> validate_pool_options(const plan& p, const std::vector<pool_id>& pools) {
  for (const pool_option& option : p.pools)
    if (!pool_is_used(pools, option.pool)) return detail::dangling_pool_option(option);
  if (auto [first, second] = find_duplicate(p.pools, [](const pool_option& o) -> const pool_id& { return o.pool; });
      second != p.pools.size())
    return detail::duplicate_pool_option(p.pools[second]);
  if (std::none_of(p.pools.begin(), p.pools.end(), [](const pool_option& o) { return o.memory.has_value(); }))
    return {};
  const auto binds = detail::binding_pools(p);
  for (const pool_option& option : p.pools)
    if (auto ok = detail::check_declared_memory(p, option.pool, option.memory, binds.contains(option.pool.view())); !ok)
      return ok;
  return {};
}

// Bucket b: its id, dimensions and budgets, one per used pool.
result<void> validate_bucket(const plan& p, std::size_t b, const std::vector<pool_id>& pools) {
  const bucket_spec& bucket = p.buckets[b];
  auto id = detail::bucket_id_of(bucket, b);
  if (!id) return id.error();
  if (auto ok = detail::check_capacity_dims(bucket, b); !ok) return ok.error();
  for (std::size_t j = 0; j < bucket.budgets.size(); ++j)
    if (auto ok = detail::check_budget(bucket.budgets[j], b, j, pool_is_used(pools, bucket.budgets[j].pool)); !ok)
      return ok.error();
  if (auto [first, second] =
          find_duplicate(bucket.budgets, [](const workspace_budget& x) -> const pool_id& { return x.pool; });
      second != bucket.budgets.size())
    return detail::duplicate_budget(*id, bucket.budgets[second], b, second);
  // The budgets are unique and name used pools, so they cover every pool
  // exactly when there are as many budgets as pools.
  if (bucket.budgets.size() != pools.size()) {
    std::vector<pool_id> budgeted;
    for (const workspace_budget& x : bucket.budgets) budgeted.push_back(x.pool);
    std::sort(budgeted.begin(), budgeted.end());
    std::vector<pool_id> missing;
    std::set_difference(pools.begin(), pools.end(), budgeted.begin(), budgeted.end(), std::back_inserter(missing));
    return detail::missing_budget(*id, missing.front(), b);
  }
  return {};
}

}  // namespace

std::string_view to_string(allocation_kind v) noexcept { return name_of(kind_names, v); }
std::string_view to_string(allocation_lifetime v) noexcept { return name_of(lifetime_names, v); }
std::string_view to_string(buffer_usage v) noexcept { return name_of(usage_names, v); }
std::string_view to_string(element_type v) noexcept { return name_of(element_names, v); }
std::string_view to_string(storage_allocator v) noexcept { return name_of(allocator_names, v); }
std::string_view to_string(storage_view v) noexcept { return name_of(view_names, v); }
std::string_view to_string(liveness_mode v) noexcept { return name_of(liveness_names, v); }
std::string to_string(const subresource_range& r) {
  if (r.whole()) return "whole";
  const auto span = [](std::string_view one, std::string_view many, std::uint32_t base, std::uint32_t count) {
    if (count == 1) return std::string(one) + " " + std::to_string(base);
    return std::string(many) + " " + std::to_string(base) + ".." + (count == 0 ? "" : std::to_string(base + count - 1));
  };
  return span("mip", "mips", r.base_mip, r.mips) + " of " + span("layer", "layers", r.base_layer, r.layers);
}

std::string_view to_string(resource_access v) noexcept { return name_of(access_names, v); }
std::string_view to_string(plan_format v) noexcept {
  return v == plan_format::v1 ? "ferrum.plan.v1" : v == plan_format::v2 ? "ferrum.plan.v2" : "unknown";
}

std::string extent_text(const image_desc& image) {
  if (!image.bucket_extent) return std::to_string(image.width) + "x" + std::to_string(image.height);
  return image.extent_divisor == 1 ? "bucket" : "bucket/" + std::to_string(image.extent_divisor);
}

template <>
std::optional<allocation_kind> enum_from_string(std::string_view t) noexcept {
  return value_of(kind_names, t);
}
template <>
std::optional<allocation_lifetime> enum_from_string(std::string_view t) noexcept {
  return value_of(lifetime_names, t);
}
template <>
std::optional<buffer_usage> enum_from_string(std::string_view t) noexcept {
  return value_of(usage_names, t);
}
template <>
std::optional<element_type> enum_from_string(std::string_view t) noexcept {
  return value_of(element_names, t);
}
template <>
std::optional<storage_allocator> enum_from_string(std::string_view t) noexcept {
  return value_of(allocator_names, t);
}
template <>
std::optional<storage_view> enum_from_string(std::string_view t) noexcept {
  return value_of(view_names, t);
}
template <>
std::optional<liveness_mode> enum_from_string(std::string_view t) noexcept {
  return value_of(liveness_names, t);
}
template <>
std::optional<resource_access> enum_from_string(std::string_view t) noexcept {
  return value_of(access_names, t);
}
template <>
std::optional<memory_class> enum_from_string(std::string_view t) noexcept {
  return memory_class_from_string(t);
}
template <>
std::optional<image_format> enum_from_string(std::string_view t) noexcept {
  return image_format_from_string(t);
}

std::string sha256_digest::str() const {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "sha256/";
  for (std::uint8_t b : bytes) {
    out += hex[b >> 4];
    out += hex[b & 0xf];
  }
  return out;
}

result<plan_hash> hash_plan(const plan& p) { return detail::hash_plan(p, detail::plan_index(p)); }

result<void> validate_plan(const plan& p) { return detail::validate_plan(p, detail::plan_index(p), nullptr); }

namespace detail {

result<plan_hash> hash_plan(const plan& p, const plan_index& index) { return hash_plan(p, index.resources_by_id()); }

result<plan_hash> hash_plan(const plan& p, std::span<const std::size_t> resources_by_id) {
  sha256_writer w;
  const bool v2 = p.format == plan_format::v2;
  w.str(to_string(p.format));

  w.u64(p.nodes.size());
  std::vector<const resource_id*> uses;
  for (const plan_node& node : p.nodes) {
    w.str(node.id.view());
    uses.assign(node.resources.size(), nullptr);
    for (std::size_t i = 0; i < uses.size(); ++i) uses[i] = &node.resources[i];
    std::sort(uses.begin(), uses.end(), [](const auto* a, const auto* b) { return *a < *b; });
    w.u64(uses.size());
    for (const resource_id* r : uses) w.str(r->view());
    w.u8(node.binding.has_value());
    if (node.binding) w.str(node.binding->view());
    if (!v2) continue;
    w.enumeration(node.queue);
    std::vector<std::string_view> after;
    for (const node_id& d : node.after) after.push_back(d.view());
    std::sort(after.begin(), after.end());
    w.u64(after.size());
    for (std::string_view d : after) w.str(d);
  }

  w.u64(p.resources.size());
  for (std::size_t i : resources_by_id) {
    const resource_descriptor* r = &p.resources[i];
    w.str(r->id.view());
    w.str(r->pool.view());
    w.enumeration(r->kind);
    w.u8(r->node.has_value());
    if (r->node) w.str(r->node->view());
    w.u64(r->demand.base);
    w.u64(r->demand.per_unit);
    w.u8(r->demand.dimension.has_value());
    if (r->demand.dimension) w.u8(*r->demand.dimension);
    w.u64(r->alignment);
    w.enumeration(r->lifetime);
    w.enumeration(r->usage);
    w.enumeration(r->element);
    w.enumeration(r->storage.allocator);
    w.enumeration(r->storage.view);
    w.str(r->storage.digest);
  }

  std::vector<const bucket_spec*> buckets;
  for (const bucket_spec& b : p.buckets) buckets.push_back(&b);
  auto bucket_key = [](const bucket_spec* b) { return std::pair(b->cls, b->dims); };
  std::sort(buckets.begin(), buckets.end(),
            [&](const auto* a, const auto* b) { return bucket_key(a) < bucket_key(b); });
  w.u64(buckets.size());
  std::vector<const workspace_budget*> budgets;
  for (const bucket_spec* b : buckets) {
    w.str(b->cls.view());
    for (std::uint64_t d : b->dims) w.u64(d);
    budgets.clear();
    for (const workspace_budget& budget : b->budgets) budgets.push_back(&budget);
    std::sort(budgets.begin(), budgets.end(), [](const auto* x, const auto* y) { return x->pool < y->pool; });
    w.u64(budgets.size());
    for (const workspace_budget* budget : budgets) {
      w.str(budget->pool.view());
      w.u64(budget->min);
      w.u64(budget->max);
    }
  }

  std::vector<const pool_option*> pools;
  for (const pool_option& o : p.pools) pools.push_back(&o);
  std::sort(pools.begin(), pools.end(), [](const auto* a, const auto* b) { return a->pool < b->pool; });
  w.u64(pools.size());
  for (const pool_option* o : pools) {
    w.str(o->pool.view());
    w.enumeration(o->liveness);
  }

  w.u64(p.lanes);
  w.u64(p.budget_bytes);
  if (v2)
    if (auto ok = hash_v2_tails(w, p, resources_by_id, pools); !ok) return ok.error();
  return w.finish();
}

result<void> validate_plan(const plan& p, const plan_index& index, dependency_graph* graph) {
  if (auto ok = check_plan_shape(p); !ok) return ok.error();
  if (const auto& dup = index.duplicate_node()) return duplicate_node(p, dup->first, dup->second);
  if (const auto& dup = index.duplicate_resource()) return duplicate_resource(p, dup->first, dup->second);
  if (auto ok = validate_resources(p, index); !ok) return ok.error();
  std::vector<bool> used(p.resources.size(), false);
  if (auto ok = validate_nodes(p, index, used); !ok) return ok.error();
  if (auto ok = check_history(p, index.all_uses()); !ok) return ok.error();
  if (auto ok = check_image_uses(p, index.all_uses()); !ok) return ok.error();
  const auto pools = used_pools(p, used);
  if (!pools) return pools.error();
  if (auto ok = validate_pool_options(p, *pools); !ok) return ok.error();
  for (std::size_t b = 0; b < p.buckets.size(); ++b)
    if (auto ok = validate_bucket(p, b, *pools); !ok) return ok.error();
  if (auto [first, second] = find_duplicate(p.buckets, [](const bucket_spec& b) { return b.id().value(); });
      second != p.buckets.size())
    return make_error(errc::duplicate_id,
                      "bucket " + p.buckets[second].id().value().str() + " is also bucket " + std::to_string(first),
                      element_path("buckets", second));

  auto dependencies = compile_dependency_graph(p, [&index](std::string_view id) { return index.node(id); });
  if (!dependencies) return dependencies.error();
  if (auto ok = check_queue_order(p, index.all_uses(), *dependencies); !ok) return ok.error();
  if (graph != nullptr) *graph = std::move(*dependencies);
  return {};
}

}  // namespace detail
}  // namespace ferrum
