#include "ferrum/binding/plan.hpp"

#include "dependency_graph_build.hpp"
#include "json_pointer.hpp"
#include "plan_encoding.hpp"
#include "plan_index.hpp"
#include "sha256_writer.hpp"

#include <boost/unordered/unordered_flat_set.hpp>

#include <algorithm>
#include <array>
#include <iterator>
#include <utility>

namespace ferrum {
namespace {

template <class Enum, std::size_t N>
using name_table = std::array<std::pair<Enum, std::string_view>, N>;

constexpr name_table<allocation_kind, 2> kind_names{
    {{allocation_kind::binding, "binding"}, {allocation_kind::workspace, "workspace"}}};
constexpr name_table<allocation_lifetime, 2> lifetime_names{
    {{allocation_lifetime::invocation, "invocation"}, {allocation_lifetime::persistent, "persistent"}}};
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

std::string at(std::string_view collection, std::size_t index) {
  return "/" + std::string(collection) + "/" + std::to_string(index);
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

// The index of the first entry that repeats an earlier one, if any. Nodes use
// a handful of resources, so the quadratic scan beats sorting below 16.
std::optional<std::size_t> repeated_entry(const std::vector<resource_id>& ids) {
  if (ids.size() < 16) {
    for (std::size_t i = 1; i < ids.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (ids[i] == ids[j]) return i;
    return std::nullopt;
  }
  auto [first, second] = find_duplicate(ids, [](const resource_id& r) -> const resource_id& { return r; });
  if (second == ids.size()) return std::nullopt;
  return second;
}

}  // namespace

std::string_view to_string(allocation_kind v) noexcept { return name_of(kind_names, v); }
std::string_view to_string(allocation_lifetime v) noexcept { return name_of(lifetime_names, v); }
std::string_view to_string(buffer_usage v) noexcept { return name_of(usage_names, v); }
std::string_view to_string(element_type v) noexcept { return name_of(element_names, v); }
std::string_view to_string(storage_allocator v) noexcept { return name_of(allocator_names, v); }
std::string_view to_string(storage_view v) noexcept { return name_of(view_names, v); }
std::string_view to_string(liveness_mode v) noexcept { return name_of(liveness_names, v); }
std::string_view to_string(plan_format v) noexcept {
  return v == plan_format::v1 ? "ferrum.plan.v1" : v == plan_format::v2 ? "ferrum.plan.v2" : "unknown";
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
  return w.finish();
}

result<void> validate_plan(const plan& p, const plan_index& index, dependency_graph* graph) {
  if (p.nodes.empty()) return make_error(errc::empty_plan, "the plan has no nodes", "/nodes");
  if (p.buckets.empty()) return make_error(errc::empty_plan, "the plan has no buckets", "/buckets");
  if (p.lanes < 1) return make_error(errc::number_out_of_range, "lanes must be at least 1", "/lanes");

  if (const auto& dup = index.duplicate_node())
    return make_error(
        errc::duplicate_id,
        "node " + node_id::quote(p.nodes[dup->second].id.view()) + " is also node " + std::to_string(dup->first),
        at("nodes", dup->second) + "/id");
  if (const auto& dup = index.duplicate_resource())
    return make_error(errc::duplicate_id,
                      "resource " + resource_id::quote(p.resources[dup->second].id.view()) + " is also resource " +
                          std::to_string(dup->first),
                      at("resources", dup->second) + "/id");

  for (std::size_t i = 0; i < p.resources.size(); ++i) {
    const resource_descriptor& r = p.resources[i];
    auto path = [&] { return at("resources", i); };
    if (r.kind == allocation_kind::binding && !r.node)
      return make_error(errc::missing_field, "binding resource " + resource_id::quote(r.id.view()) + " names no node",
                        path() + "/node");
    if (r.kind == allocation_kind::workspace && r.node)
      return make_error(errc::unknown_field, "workspace resource " + resource_id::quote(r.id.view()) + " names a node",
                        path() + "/node");
    if (r.node && index.owner(i) == plan_index::none)
      return make_error(
          errc::dangling_reference,
          "resource " + resource_id::quote(r.id.view()) + " belongs to unknown node " + node_id::quote(r.node->view()),
          path() + "/node");
    if (r.demand.dimension && *r.demand.dimension > 2)
      return make_error(errc::number_out_of_range, "dimension must be 0, 1 or 2", path() + "/demand/dimension");
    if (!is_contract_digest(r.storage.digest))
      return make_error(errc::invalid_contract, "resource " + resource_id::quote(r.id.view()),
                        path() + "/storage/contract");
  }
  std::vector<bool> used(p.resources.size(), false);

  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const plan_node& node = p.nodes[i];
    auto path = [&] { return at("nodes", i); };
    for (std::size_t j = 0; j < node.resources.size(); ++j) {
      const std::size_t r = index.uses(i)[j];
      if (r == plan_index::none)
        return make_error(errc::dangling_reference,
                          "node " + node_id::quote(node.id.view()) + " uses unknown resource " +
                              resource_id::quote(node.resources[j].view()),
                          path() + "/resources/" + std::to_string(j));
      used[r] = true;
    }
    if (auto second = repeated_entry(node.resources))
      return make_error(errc::duplicate_id,
                        "node " + node_id::quote(node.id.view()) + " lists resource " +
                            resource_id::quote(node.resources[*second].view()) + " twice",
                        path() + "/resources/" + std::to_string(*second));
    if (node.binding) {
      const std::size_t r = index.binding(i);
      if (r == plan_index::none)
        return make_error(errc::dangling_reference,
                          "node " + node_id::quote(node.id.view()) + " binds unknown resource " +
                              resource_id::quote(node.binding->view()),
                          path() + "/binding");
      used[r] = true;
      const resource_descriptor& bound = p.resources[r];
      if (bound.kind != allocation_kind::binding || bound.node != node.id)
        return make_error(errc::binding_not_owned,
                          "node " + node_id::quote(node.id.view()) + " binds resource " +
                              resource_id::quote(bound.id.view()) + ", which is not a binding resource of this node",
                          path() + "/binding");
    }
  }

  // The distinct pools, in id order; a set first, as there are few pools and
  // many resources.
  boost::unordered_flat_set<std::string_view, std::hash<std::string_view>> pool_names;
  for (std::size_t i = 0; i < p.resources.size(); ++i) {
    if (!used[i])
      return make_error(errc::unused_resource,
                        "resource " + resource_id::quote(p.resources[i].id.view()) + " is used by no node",
                        at("resources", i));
    pool_names.insert(p.resources[i].pool.view());
  }
  std::vector<pool_id> resource_pools;
  for (std::string_view name : pool_names) resource_pools.push_back(pool_id::make(name).value());
  std::sort(resource_pools.begin(), resource_pools.end());
  auto pool_is_used = [&](const pool_id& pool) {
    return std::binary_search(resource_pools.begin(), resource_pools.end(), pool);
  };

  for (std::size_t i = 0; i < p.pools.size(); ++i)
    if (!pool_is_used(p.pools[i].pool))
      return make_error(errc::dangling_reference,
                        "options for pool " + pool_id::quote(p.pools[i].pool.view()) + ", which no resource uses",
                        "/pools/" + json_pointer_token(p.pools[i].pool.view()));
  if (auto [first, second] = find_duplicate(p.pools, [](const pool_option& o) -> const pool_id& { return o.pool; });
      second != p.pools.size())
    return make_error(errc::duplicate_id, "pool " + pool_id::quote(p.pools[second].pool.view()) + " has options twice",
                      "/pools/" + json_pointer_token(p.pools[second].pool.view()));

  for (std::size_t b = 0; b < p.buckets.size(); ++b) {
    const bucket_spec& bucket = p.buckets[b];
    const std::string path = at("buckets", b);
    auto id = bucket.id();
    if (!id) return make_error(errc::invalid_id, id.error().detail, path + "/class");
    for (std::size_t d = 0; d < bucket.dims.size(); ++d)
      if (bucket.dims[d] == 0)
        return make_error(errc::number_out_of_range, "capacity dimensions must be at least 1",
                          path + "/capacity/" + std::to_string(d));
    for (std::size_t j = 0; j < bucket.budgets.size(); ++j) {
      const workspace_budget& budget = bucket.budgets[j];
      const std::string budget_path = path + "/budgets/" + std::to_string(j);
      if (!pool_is_used(budget.pool))
        return make_error(errc::dangling_reference,
                          "budget for pool " + pool_id::quote(budget.pool.view()) + ", which no resource uses",
                          budget_path + "/pool");
      if (budget.min > budget.max)
        return make_error(errc::invalid_budget,
                          "pool " + pool_id::quote(budget.pool.view()) + ": min " + std::to_string(budget.min) +
                              " > max " + std::to_string(budget.max),
                          budget_path);
    }
    if (auto [first, second] =
            find_duplicate(bucket.budgets, [](const workspace_budget& x) -> const pool_id& { return x.pool; });
        second != bucket.budgets.size())
      return make_error(
          errc::duplicate_id,
          "bucket " + id->str() + " has two budgets for pool " + pool_id::quote(bucket.budgets[second].pool.view()),
          path + "/budgets/" + std::to_string(second));
    // The budgets are unique and name used pools, so they cover every pool
    // exactly when there are as many budgets as pools.
    if (bucket.budgets.size() != resource_pools.size()) {
      std::vector<pool_id> budgeted;
      for (const workspace_budget& x : bucket.budgets) budgeted.push_back(x.pool);
      std::sort(budgeted.begin(), budgeted.end());
      std::vector<pool_id> missing;
      std::set_difference(resource_pools.begin(), resource_pools.end(), budgeted.begin(), budgeted.end(),
                          std::back_inserter(missing));
      return make_error(errc::missing_budget,
                        "bucket " + id->str() + " has no budget for pool " + pool_id::quote(missing.front().view()),
                        path + "/budgets");
    }
  }
  if (auto [first, second] = find_duplicate(p.buckets, [](const bucket_spec& b) { return b.id().value(); });
      second != p.buckets.size())
    return make_error(errc::duplicate_id,
                      "bucket " + p.buckets[second].id().value().str() + " is also bucket " + std::to_string(first),
                      at("buckets", second));

  auto dependencies = compile_dependency_graph(p, [&index](std::string_view id) { return index.node(id); });
  if (!dependencies) return dependencies.error();
  if (graph != nullptr) *graph = std::move(*dependencies);
  return {};
}

}  // namespace detail
}  // namespace ferrum
