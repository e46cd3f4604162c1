// frame_build: frame_builder::build(), the declarations as a plan
// (frame_builder.hpp): resources and their pools, passes with their uses
// and derived `after`, buckets and budgets; then validate_plan. The checks
// of the declarations (pools, buckets, a buffer read first) are also
// hash()'s (frame_hash.cpp).
#include "ferrum/binding/frame_builder.hpp"

#include "frame_builder_state.hpp"
#include "json_pointer.hpp"

#include "ferrum/binding/image_access.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace ferrum {
namespace {

std::string resource_path(std::size_t k) { return "/resources/" + std::to_string(k); }

}  // namespace

frame_builder::state::pool_choice frame_builder::state::choose_pool(const resource& r) const {
  const frame_pools& pools = options.pools;
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

const frame_pool_set::pool* frame_pool_set::find(std::string_view name) const noexcept {
  const auto it =
      std::lower_bound(pools.begin(), pools.end(), name, [](const pool& p, std::string_view n) { return p.name < n; });
  return it != pools.end() && it->name == name ? &*it : nullptr;
}

result<void> frame_builder::state::assign_pools(frame_pool_set& out) const {
  out.index.clear();
  out.by_address.clear();
  out.pools.clear();
  out.of.resize(resources.size());
  for (std::uint32_t k = 0; k < resources.size(); ++k) {
    const resource& r = resources[k];
    const pool_choice c = choose_pool(r);
    // Most resources take a pool of the options, known by its address
    // once one has: no id check, no lookup by name.
    const auto known = std::find_if(out.by_address.begin(), out.by_address.end(),
                                    [&](const auto& a) { return a.first == c.name.data(); });
    std::uint32_t index = 0;
    if (known != out.by_address.end() && out.pools[known->second].name.size() == c.name.size()) {
      index = known->second;
    } else {
      if (!is_valid_id(c.name))
        return make_error(errc::invalid_id,
                          "resource " + resource_id::quote(r.name) + ": pool " + quote_text(c.name) + " is not an id",
                          resource_path(k) + "/pool");
      const auto [it, fresh] = out.index.try_emplace(c.name, static_cast<std::uint32_t>(out.pools.size()));
      if (fresh) out.pools.push_back({c.name, c.liveness, c.memory, k, false});
      index = it->second;
      if (r.pool.empty()) out.by_address.emplace_back(c.name.data(), index);
    }
    frame_pool_set::pool& pool = out.pools[index];
    if (!(pool_choice{pool.name, pool.liveness, pool.memory} == c))
      return make_error(errc::incompatible_pool_member,
                        "resources " + resource_id::quote(resources[pool.first].name) + " and " +
                            resource_id::quote(r.name) + " share pool " + pool_id::quote(c.name) +
                            " but differ in memory class or liveness (a transient device pool is 'interval'): "
                            "name another pool for one of them",
                        resource_path(k) + "/pool");
    pool.binding = pool.binding || r.owner.has_value();
    out.of[k] = index;
  }
  // In id order, and each resource's renumbered.
  out.renumber.resize(out.pools.size());
  std::sort(out.pools.begin(), out.pools.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (std::uint32_t j = 0; j < out.pools.size(); ++j) out.renumber[out.index.find(out.pools[j].name)->second] = j;
  for (std::uint32_t& pool : out.of) pool = out.renumber[pool];
  return {};
}

result<void> frame_builder::state::check_buckets(const frame_pool_set& pools) const {
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const auto where = [b] { return "/buckets/" + std::to_string(b); };
    if (!is_valid_id(buckets[b].cls))
      return make_error(errc::invalid_id, "bucket class " + quote_text(buckets[b].cls) + " is not an id",
                        where() + "/class");
    for (std::size_t j = 0; j < buckets[b].budgets.size(); ++j) {
      const std::string& name = buckets[b].budgets[j].first;
      if (!is_valid_id(name) || pools.find(name) == nullptr)
        return make_error(errc::dangling_reference,
                          "bucket " + quote_text(buckets[b].cls) + " budgets pool " + quote_text(name) +
                              ", which no resource of the frame is in",
                          where() + "/budgets/" + std::to_string(j) + "/pool");
    }
  }
  return {};
}

namespace {

// Each resource as the plan describes it.
void describe_resources(const frame_builder::state& s, plan& p, const frame_pool_set& pools) {
  for (std::uint32_t k = 0; k < s.resources.size(); ++k) {
    const frame_builder::state::resource& r = s.resources[k];
    resource_descriptor d;
    d.id = resource_id::make(r.name).value();
    d.pool = pool_id::make(pools.pools[pools.of[k]].name).value();
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
      d.storage.digest = r.contract.empty() ? detail::derived_contract_digest(d.usage, d.element) : r.contract;
      d.kept = r.buffer.kept;
    }
    if (r.previous_of) d.history_of = resource_id::make(s.resources[*r.previous_of].name).value();
    p.resources.push_back(std::move(d));
  }
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

void describe_buckets(const frame_builder::state& s, plan& p, const frame_pool_set& pools) {
  std::vector<frame_builder::state::bucket> buckets(s.buckets.begin(), s.buckets.end());
  if (buckets.empty()) buckets.push_back({"frame", {1, 1, 1}, {}});
  for (const frame_builder::state::bucket& declared : buckets) {
    bucket_spec spec;
    spec.cls = bucket_class::make(declared.cls).value();
    spec.dims = declared.dims;
    for (const frame_pool_set::pool& used : pools.pools) {
      const auto given = std::find_if(declared.budgets.begin(), declared.budgets.end(),
                                      [&](const auto& g) { return g.first == used.name; });
      const pool_id pool = pool_id::make(used.name).value();
      spec.budgets.push_back(given != declared.budgets.end()
                                 ? workspace_budget{pool, given->second.min, given->second.max}
                                 : workspace_budget{pool, 0, s.options.budget_bytes});
    }
    p.buckets.push_back(std::move(spec));
  }
}

}  // namespace

// A transient buffer of the frame's own memory holds nothing when a wave
// starts: its first pass writes it, without reading (images:
// validate_plan's image_read_before_write, per subresource).
result<void> frame_builder::state::check_buffers_written_first(std::vector<std::uint8_t>& seen) const {
  seen.assign(resources.size(), 0);
  for (std::size_t i = 0; i < passes.size(); ++i)
    for (const auto& u : passes[i].uses) {
      const resource& r = resources[u.resource];
      if (std::exchange(seen[u.resource], std::uint8_t{1}) != 0 || r.image || r.owner) continue;
      const bool holds_nothing = r.buffer.lifetime == allocation_lifetime::invocation &&
                                 (r.buffer.memory == memory_class::device || r.buffer.memory == memory_class::readback);
      if (holds_nothing && access_reads(u.how))
        return make_error(errc::invalid_access,
                          "pass " + node_id::quote(passes[i].name) + " reads buffer " + resource_id::quote(r.name) +
                              " (" + quote_text(to_string(u.how)) +
                              ") before any pass writes it: a transient buffer holds nothing when a frame starts, "
                              "so its first pass writes it ('write')",
                          "/nodes/" + std::to_string(i) + "/access/" + detail::json_pointer_token(r.name));
    }
  return {};
}

result<plan> frame_builder::build() const {
  const state& s = *s_;
  if (s.first_error) return *s.first_error;
  frame_pool_set pools;
  if (auto assigned = s.assign_pools(pools); !assigned) return assigned.error();
  frame_order order;
  if (auto derived = s.derive_after(order); !derived) return derived.error();
  std::vector<std::uint8_t> seen;
  if (auto written = s.check_buffers_written_first(seen); !written) return written.error();
  if (auto checked = s.check_buckets(pools); !checked) return checked.error();
  plan p;
  p.format = plan_format::v2;
  p.lanes = s.options.lanes;
  p.budget_bytes = s.options.budget_bytes;
  p.cull = s.options.cull;
  p.nodes.reserve(s.passes.size());
  p.resources.reserve(s.resources.size());
  describe_resources(s, p, pools);
  for (std::size_t i = 0; i < s.passes.size(); ++i) {
    const state::pass& pass = s.passes[i];
    plan_node n;
    n.id = node_id::make(pass.name).value();
    n.queue = pass.queue;
    if (pass.parameters) n.binding = resource_id::make(s.resources[*pass.parameters].name).value();
    describe_uses(s, pass, n);
    for (const std::uint32_t e : order.after(i)) n.after.push_back(p.nodes[e].id);
    p.nodes.push_back(std::move(n));
  }
  describe_buckets(s, p, pools);
  for (const frame_pool_set::pool& pool : pools.pools)
    if (pool.liveness != liveness_mode::conservative || pool.memory)
      p.pools.push_back({pool_id::make(pool.name).value(), pool.liveness, pool.memory});
  if (auto valid = validate_plan(p); !valid) return valid.error();
  return p;
}

}  // namespace ferrum
