// frame_build: frame_builder::build(), the declarations as a plan
// (frame_builder.hpp): resources and their pools, passes with their uses
// and derived `after`, buckets and budgets; then validate_plan.
#include "ferrum/binding/frame_builder.hpp"

#include "frame_builder_state.hpp"
#include "json_pointer.hpp"

#include "ferrum/binding/image_access.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace ferrum {
namespace {

// Where a pool's resources go, and its options.
struct pool_choice {
  std::string name;
  liveness_mode liveness = liveness_mode::conservative;
  std::optional<memory_class> memory;
  friend bool operator==(const pool_choice&, const pool_choice&) = default;
};

pool_choice choose_pool(const frame_pools& pools, const frame_builder::state::resource& r) {
  pool_choice c;
  const allocation_lifetime life = r.image ? r.picture.lifetime : r.buffer.lifetime;
  const memory_class memory = r.image ? r.picture.memory : r.buffer.memory;
  if (r.owner) {
    c.name = pools.bindings;
  } else if (memory != memory_class::device) {
    c.memory = memory;
    c.name = memory == memory_class::imported ? (r.image ? pools.imported_images : pools.imported)
             : memory == memory_class::upload ? pools.upload
                                              : pools.readback;
  } else if (life == allocation_lifetime::history) {
    c.name = r.image ? pools.history_images : pools.history;
  } else if (life == allocation_lifetime::persistent) {
    c.name = r.image ? pools.persistent_images : pools.persistent;
  } else {
    c.name = r.image ? pools.images : pools.buffers;
    c.liveness = liveness_mode::interval;
  }
  if (!r.pool.empty()) c.name = r.pool;
  return c;
}

struct built_pool {
  pool_choice choice;
  std::uint32_t first;  // the first resource in it
};

std::string resource_path(std::size_t k) { return "/resources/" + std::to_string(k); }

// Each resource as the plan describes it, its pool's options in `pools`.
result<void> describe_resources(const frame_builder::state& s, plan& p, std::map<pool_id, built_pool>& pools) {
  // derived_contract is a SHA-256: once per description.
  std::map<std::pair<buffer_usage, element_type>, std::string> contracts;
  for (std::uint32_t k = 0; k < s.resources.size(); ++k) {
    const frame_builder::state::resource& r = s.resources[k];
    resource_descriptor d;
    d.id = resource_id::make(r.name).value();
    const pool_choice choice = choose_pool(s.options.pools, r);
    const result<pool_id> pool = pool_id::make(choice.name);
    if (!pool)
      return make_error(
          errc::invalid_id,
          "resource " + resource_id::quote(r.name) + ": pool " + quote_text(choice.name) + " is not an id",
          resource_path(k) + "/pool");
    const auto [it, fresh] = pools.try_emplace(*pool, built_pool{choice, k});
    if (!fresh && !(it->second.choice == choice))
      return make_error(errc::incompatible_pool_member,
                        "resources " + resource_id::quote(s.resources[it->second.first].name) + " and " +
                            resource_id::quote(r.name) + " share pool " + pool_id::quote(choice.name) +
                            " but differ in memory class or liveness (a transient device pool is 'interval'): "
                            "name another pool for one of them",
                        resource_path(k) + "/pool");
    d.pool = *pool;
    if (r.owner) {
      d.kind = allocation_kind::binding;
      d.node = node_id::make(s.passes[*r.owner].name).value();
    }
    if (r.image) {
      d.image = r.picture.image;
      d.lifetime = r.picture.lifetime;
      d.kept = r.picture.kept;
    } else {
      d.demand = r.buffer.size;
      d.alignment = r.buffer.alignment;
      d.lifetime = r.buffer.lifetime;
      d.usage = r.buffer.usage;
      d.element = r.buffer.element;
      if (r.contract.empty()) {
        auto [known, first] = contracts.try_emplace({d.usage, d.element});
        if (first) known->second = derived_contract(d.usage, d.element);
        d.storage.digest = known->second;
      } else {
        d.storage.digest = r.contract;
      }
      d.kept = r.buffer.kept;
    }
    if (r.previous_of) d.history_of = resource_id::make(s.resources[*r.previous_of].name).value();
    p.resources.push_back(std::move(d));
  }
  return {};
}

// A pass's uses as the plan lists them: each resource once, further
// accesses of it (other parts of an image) right after its first listing.
void describe_uses(const frame_builder::state& s, const frame_builder::state::pass& pass, plan_node& n) {
  std::vector<std::uint32_t> order;
  for (const auto& u : pass.uses)
    if (std::find(order.begin(), order.end(), u.resource) == order.end()) order.push_back(u.resource);
  bool ranged = false;
  for (const std::uint32_t r : order)
    for (const auto& u : pass.uses)
      if (u.resource == r) {
        n.resources.push_back(resource_id::make(s.resources[r].name).value());
        n.access.push_back(u.how);
        n.ranges.push_back(u.range);
        ranged = ranged || !u.range.whole();
      }
  if (!ranged) n.ranges.clear();
}

// A transient buffer of the frame's own memory holds nothing when a wave
// starts: its first pass writes it, without reading (images:
// validate_plan's image_read_before_write, per subresource).
result<void> check_buffers_written_first(const frame_builder::state& s) {
  std::vector<std::uint8_t> seen(s.resources.size());
  for (std::size_t i = 0; i < s.passes.size(); ++i)
    for (const auto& u : s.passes[i].uses) {
      const frame_builder::state::resource& r = s.resources[u.resource];
      if (std::exchange(seen[u.resource], std::uint8_t{1}) != 0 || r.image || r.owner) continue;
      const bool holds_nothing = r.buffer.lifetime == allocation_lifetime::invocation &&
                                 (r.buffer.memory == memory_class::device || r.buffer.memory == memory_class::readback);
      if (holds_nothing && access_reads(u.how))
        return make_error(errc::invalid_access,
                          "pass " + node_id::quote(s.passes[i].name) + " reads buffer " + resource_id::quote(r.name) +
                              " (" + quote_text(to_string(u.how)) +
                              ") before any pass writes it: a transient buffer holds nothing when a frame starts, "
                              "so its first pass writes it ('write')",
                          "/nodes/" + std::to_string(i) + "/access/" + detail::json_pointer_token(r.name));
    }
  return {};
}

result<void> describe_buckets(const frame_builder::state& s, plan& p, const std::map<pool_id, built_pool>& pools) {
  std::vector<frame_builder::state::bucket> buckets = s.buckets;
  if (buckets.empty()) buckets.push_back({"frame", {1, 1, 1}, {}});
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const std::string where = "/buckets/" + std::to_string(b);
    bucket_spec spec;
    const result<bucket_class> cls = bucket_class::make(buckets[b].cls);
    if (!cls)
      return make_error(errc::invalid_id, "bucket class " + quote_text(buckets[b].cls) + " is not an id",
                        where + "/class");
    spec.cls = *cls;
    spec.dims = buckets[b].dims;
    for (std::size_t j = 0; j < buckets[b].budgets.size(); ++j) {
      const std::string& name = buckets[b].budgets[j].first;
      const result<pool_id> pool = pool_id::make(name);
      if (!pool || !pools.contains(*pool))
        return make_error(errc::dangling_reference,
                          "bucket " + quote_text(buckets[b].cls) + " budgets pool " + quote_text(name) +
                              ", which no resource of the frame is in",
                          where + "/budgets/" + std::to_string(j) + "/pool");
    }
    for (const auto& used : pools) {
      const pool_id& pool = used.first;
      const auto given = std::find_if(buckets[b].budgets.begin(), buckets[b].budgets.end(),
                                      [&](const auto& g) { return g.first == pool.view(); });
      spec.budgets.push_back(given != buckets[b].budgets.end()
                                 ? workspace_budget{pool, given->second.min, given->second.max}
                                 : workspace_budget{pool, 0, s.options.budget_bytes});
    }
    p.buckets.push_back(std::move(spec));
  }
  return {};
}

}  // namespace

result<plan> frame_builder::build() const {
  const state& s = *s_;
  if (s.first_error) return *s.first_error;
  plan p;
  p.format = plan_format::v2;
  p.lanes = s.options.lanes;
  p.budget_bytes = s.options.budget_bytes;
  p.cull = s.options.cull;
  p.nodes.reserve(s.passes.size());
  p.resources.reserve(s.resources.size());
  std::map<pool_id, built_pool> pools;
  if (auto described = describe_resources(s, p, pools); !described) return described.error();
  auto after = s.derive_after();
  if (!after) return after.error();
  if (auto written = check_buffers_written_first(s); !written) return written.error();
  for (std::size_t i = 0; i < s.passes.size(); ++i) {
    const state::pass& pass = s.passes[i];
    plan_node n;
    n.id = node_id::make(pass.name).value();
    n.queue = pass.queue;
    if (pass.parameters) n.binding = resource_id::make(s.resources[*pass.parameters].name).value();
    describe_uses(s, pass, n);
    for (const std::uint32_t e : (*after)[i]) n.after.push_back(p.nodes[e].id);
    p.nodes.push_back(std::move(n));
  }
  if (auto described = describe_buckets(s, p, pools); !described) return described.error();
  for (const auto& [pool, built] : pools)
    if (built.choice.liveness != liveness_mode::conservative || built.choice.memory)
      p.pools.push_back({pool, built.choice.liveness, built.choice.memory});
  if (auto valid = validate_plan(p); !valid) return valid.error();
  return p;
}

}  // namespace ferrum
