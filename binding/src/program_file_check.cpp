// Checks a decoded ferrum.program.v1 file against its plan and rebuilds the
// compiled program. Each check stands in for one a compile makes, in linear
// time: the file says where things are (ids in order, every use resolved,
// every projection's offset) and the checks confirm it by comparing ids and
// numbers, instead of hashing and sorting ids as a compile does.
#include "dependency_graph_build.hpp"
#include "ferrum/binding/admission.hpp"
#include "ferrum/binding/demand.hpp"
#include "huge_pages.hpp"
#include "json_pointer.hpp"
#include "lane_placement.hpp"
#include "plan_encoding.hpp"
#include "program_binding_checks.hpp"
#include "program_file_format.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <future>
#include <map>

namespace ferrum::detail {
namespace {

constexpr std::size_t none = static_cast<std::size_t>(-1);

std::string at(std::string_view collection, std::size_t index) {
  return "/" + std::string(collection) + "/" + std::to_string(index);
}

error inconsistent(std::string detail, std::string path = {}) {
  return make_error(errc::program_inconsistent, std::move(detail), std::move(path));
}

// `order` lists each of `count` indices once, their ids strictly increasing:
// the ids are unique and `order` is their id order. Errors: duplicate_id (two
// equal ids, as validate_plan reports them), program_inconsistent.
template <class IdOf>
result<void> check_id_order(const std::vector<std::uint32_t>& order, std::size_t count, IdOf id_of,
                            std::string_view what, std::string_view collection) {
  std::vector<bool> seen(count, false);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::size_t index = order[i];
    if (index >= count || seen[index])
      return inconsistent("the " + std::string(what) + " order lists " + std::to_string(index) + " at entry " +
                          std::to_string(i) + " (out of range or twice)");
    seen[index] = true;
    if (i == 0) continue;
    const std::string_view prev = id_of(order[i - 1]);
    const std::string_view id = id_of(index);
    if (prev == id)
      return make_error(errc::duplicate_id,
                        std::string(what) + " " + quote_text(id) + " is also " + std::string(what) + " " +
                            std::to_string(std::min<std::size_t>(order[i - 1], index)),
                        at(collection, std::max<std::size_t>(order[i - 1], index)) + "/id");
    if (prev > id)
      return inconsistent("the " + std::string(what) + " order is not id order at entry " + std::to_string(i));
  }
  return {};
}

// Orders domains and pool ids by pool id.
struct pool_less {
  bool operator()(const pool_domain& a, const pool_id& b) const noexcept { return a.pool < b; }
  bool operator()(const pool_id& a, const pool_domain& b) const noexcept { return a < b.pool; }
  bool operator()(const pool_domain& a, const pool_domain& b) const noexcept { return a.pool < b.pool; }
};

auto compatibility(const resource_descriptor& r) {
  return std::tie(r.usage, r.element, r.storage.allocator, r.storage.view, r.storage.digest);
}

// Members in conservative packing order (compile_capacity_layout's): by
// decreasing alignment, ties in member (id) order; a stable counting sort.
// `classes` holds each resource's alignment class (63 - log2 alignment),
// computed in one pass in plan order: reading descriptors in id order costs
// a cache miss each.
std::vector<std::size_t> conservative_order(const std::vector<std::uint8_t>& classes, const pool_domain& domain) {
  std::array<std::size_t, 65> starts{};
  auto alignment_class = [&](std::size_t m) { return std::size_t{classes[domain.members[m]]}; };
  for (std::size_t m = 0; m < domain.members.size(); ++m) ++starts[alignment_class(m) + 1];
  for (std::size_t i = 1; i < starts.size(); ++i) starts[i] += starts[i - 1];
  std::vector<std::size_t> order(domain.members.size());
  for (std::size_t m = 0; m < domain.members.size(); ++m) order[starts[alignment_class(m)]++] = m;
  return order;
}

// For a binding domain whose offsets are not the conservative packing: the
// original module's cover checks over the slots sorted by offset (their
// codes), else program_inconsistent (a valid cover, but not compile's).
error binding_cover_error(const pool_domain& domain, const capacity_layout& layout, const std::string& bucket) {
  std::vector<std::size_t> by_offset(domain.members.size());
  for (std::size_t m = 0; m < by_offset.size(); ++m) by_offset[m] = m;
  std::sort(by_offset.begin(), by_offset.end(), [&](std::size_t a, std::size_t b) {
    return layout.projections[a].offset != layout.projections[b].offset
               ? layout.projections[a].offset < layout.projections[b].offset
               : a < b;
  });
  std::uint64_t expected = 0;
  for (std::size_t m : by_offset) {
    const projection& s = layout.projections[m];
    const std::string who = "bucket " + bucket + ", resource " + quote_text(s.resource.view());
    if (s.capacity == 0) return make_error(errc::empty_slot, who);
    if (s.offset % s.alignment != 0 || s.capacity % s.alignment != 0)
      return make_error(errc::misaligned_slot, who + ": offset " + std::to_string(s.offset) + ", capacity " +
                                                   std::to_string(s.capacity) + ", alignment " +
                                                   std::to_string(s.alignment));
    if (s.offset != expected)
      return make_error(errc::non_contiguous_slots,
                        who + ": offset " + std::to_string(s.offset) + ", expected " + std::to_string(expected));
    expected += s.capacity;
  }
  if (expected != layout.physical_size_bytes)
    return make_error(errc::inexact_cover, "bucket " + bucket + ": slots end at " + std::to_string(expected) +
                                               ", the arena has " + std::to_string(layout.physical_size_bytes) +
                                               " bytes");
  return inconsistent("bucket " + bucket + ", pool " + quote_text(domain.pool.view()) +
                      ": the slots are not in compile's order (decreasing alignment, then resource id)");
}

// Members' starts and ends by node, for the sweep over an interval pool.
struct interval_events {
  std::vector<std::size_t> start_begin, starts, end_begin, ends;
};

interval_events events_of(const pool_domain& domain, const std::vector<live_interval>& intervals, std::size_t nodes) {
  interval_events e;
  e.start_begin.assign(nodes + 1, 0);
  e.end_begin.assign(nodes + 1, 0);
  for (std::size_t r : domain.members) {
    ++e.start_begin[intervals[r].first + 1];
    ++e.end_begin[intervals[r].last + 1];
  }
  for (std::size_t n = 0; n < nodes; ++n) {
    e.start_begin[n + 1] += e.start_begin[n];
    e.end_begin[n + 1] += e.end_begin[n];
  }
  e.starts.resize(domain.members.size());
  e.ends.resize(domain.members.size());
  std::vector<std::size_t> s(e.start_begin.begin(), e.start_begin.end() - 1);
  std::vector<std::size_t> t(e.end_begin.begin(), e.end_begin.end() - 1);
  for (std::size_t m = 0; m < domain.members.size(); ++m) {
    e.starts[s[intervals[domain.members[m]].first]++] = m;
    e.ends[t[intervals[domain.members[m]].last]++] = m;
  }
  return e;
}

// No two members of an interval pool whose live intervals overlap share a
// byte: a sweep over the nodes, keeping the live members' ranges (pairwise
// disjoint) by offset.
result<void> check_interval_aliasing(const pool_domain& domain, const capacity_layout& layout, const interval_events& e,
                                     std::size_t nodes, const std::string& bucket) {
  std::map<std::uint64_t, std::size_t> live;  // offset -> member
  const auto end_of = [&](std::size_t m) { return layout.projections[m].offset + layout.projections[m].capacity; };
  for (std::size_t n = 0; n < nodes; ++n) {
    for (std::size_t i = e.start_begin[n]; i < e.start_begin[n + 1]; ++i) {
      const std::size_t m = e.starts[i];
      const projection& proj = layout.projections[m];
      auto next = live.lower_bound(proj.offset);
      std::size_t clash = none;
      if (next != live.end() && next->first < end_of(m)) clash = next->second;
      if (clash == none && next != live.begin() && end_of(std::prev(next)->second) > proj.offset)
        clash = std::prev(next)->second;
      if (clash != none)
        return inconsistent("bucket " + bucket + ", pool " + quote_text(domain.pool.view()) + ": resources " +
                            quote_text(layout.projections[clash].resource.view()) + " and " +
                            quote_text(proj.resource.view()) + " share bytes while both are live (node " +
                            std::to_string(n) + ")");
      live.emplace_hint(next, proj.offset, m);
    }
    for (std::size_t i = e.end_begin[n]; i < e.end_begin[n + 1]; ++i) live.erase(layout.projections[e.ends[i]].offset);
  }
  return {};
}

}  // namespace

result<compiled_program> rebuild_program(const program_tables& t, const plan& p) {
  // The plan's shape first: a file of another plan usually differs here.
  std::size_t uses = 0;
  for (const plan_node& n : p.nodes) uses += n.resources.size();
  const auto stale = [&](const std::string& what, std::uint64_t file, std::uint64_t given) {
    return make_error(errc::program_stale, "the file's program has " + std::to_string(file) + " " + what +
                                               ", the plan given " + std::to_string(given) + " (plan hash " +
                                               t.hash.str() + " in the file)");
  };
  if (t.node_count != p.nodes.size()) return stale("nodes", t.node_count, p.nodes.size());
  if (t.resource_count != p.resources.size()) return stale("resources", t.resource_count, p.resources.size());
  if (t.use_count != uses) return stale("resource uses", t.use_count, uses);
  if (t.bucket_count != p.buckets.size()) return stale("buckets", t.bucket_count, p.buckets.size());
  if (t.lanes != p.lanes) return stale("lanes", t.lanes, p.lanes);
  if (t.budget_bytes != p.budget_bytes) return stale("budget bytes", t.budget_bytes, p.budget_bytes);
  if (p.nodes.empty()) return make_error(errc::empty_plan, "the plan has no nodes", "/nodes");
  if (p.buckets.empty()) return make_error(errc::empty_plan, "the plan has no buckets", "/buckets");
  if (p.lanes < 1) return make_error(errc::number_out_of_range, "lanes must be at least 1", "/lanes");
  const std::size_t node_count = p.nodes.size();
  const std::size_t resource_count = p.resources.size();

  // Resources in id order, checked; then the plan hash, on a second thread
  // while the layouts are checked. The future joins on every return path.
  if (auto ok = check_id_order(
          t.resource_order, resource_count, [&](std::size_t r) { return p.resources[r].id.view(); }, "resource",
          "resources");
      !ok)
    return ok.error();
  std::vector<std::size_t> resources_by_id(t.resource_order.begin(), t.resource_order.end());
  auto hash_task = std::async(std::launch::async | std::launch::deferred,
                              [&p, &resources_by_id] { return hash_plan(p, resources_by_id); });
  if (auto ok = check_id_order(
          t.node_order, node_count, [&](std::size_t n) { return p.nodes[n].id.view(); }, "node", "nodes");
      !ok)
    return ok.error();

  // Every node's resources, resolved by the file and confirmed by id; the
  // live intervals; each binding resource's owner.
  std::vector<live_interval> intervals(resource_count, live_interval{none, 0});
  std::vector<std::size_t> owner(resource_count, none);
  std::vector<std::size_t> bound_of(node_count, none);
  std::vector<std::size_t> listed_by(resource_count, none);  // the last node listing it
  std::size_t k = 0;
  for (std::size_t n = 0; n < node_count; ++n) {
    const plan_node& node = p.nodes[n];
    std::size_t bound = none;
    for (std::size_t j = 0; j < node.resources.size(); ++j, ++k) {
      const std::size_t r = t.use_resource[k];
      if (r >= resource_count || p.resources[r].id != node.resources[j])
        return inconsistent("entry " + std::to_string(k) + " of the resolved uses does not name node " +
                                quote_text(node.id.view()) + "'s resource " + quote_text(node.resources[j].view()),
                            at("nodes", n) + "/resources/" + std::to_string(j));
      if (listed_by[r] == n)
        return make_error(
            errc::duplicate_id,
            "node " + quote_text(node.id.view()) + " lists resource " + quote_text(node.resources[j].view()) + " twice",
            at("nodes", n) + "/resources/" + std::to_string(j));
      listed_by[r] = n;
      if (intervals[r].first == none) intervals[r].first = n;
      intervals[r].last = n;
      if (node.binding && bound == none && *node.binding == node.resources[j]) bound = r;
    }
    if (!node.binding) continue;
    // compile requires a node to list the resource it binds.
    if (bound == none || p.resources[bound].kind != allocation_kind::binding || p.resources[bound].node != node.id)
      return make_error(errc::binding_not_owned,
                        "node " + quote_text(node.id.view()) + " binds resource " + quote_text(node.binding->view()) +
                            ", which is not a binding resource of this node that it lists",
                        at("nodes", n) + "/binding");
    owner[bound] = n;
    bound_of[n] = bound;
  }

  std::vector<std::uint8_t> alignment_classes(resource_count);
  for (std::size_t r = 0; r < resource_count; ++r) {
    const resource_descriptor& res = p.resources[r];
    const auto path = [r] { return at("resources", r); };
    if (res.kind == allocation_kind::binding && !res.node)
      return make_error(errc::missing_field, "binding resource " + quote_text(res.id.view()) + " names no node",
                        path() + "/node");
    if (res.kind == allocation_kind::workspace && res.node)
      return make_error(errc::unknown_field, "workspace resource " + quote_text(res.id.view()) + " names a node",
                        path() + "/node");
    if (res.kind == allocation_kind::binding && owner[r] == none)
      return make_error(errc::binding_not_owned,
                        "resource " + quote_text(res.id.view()) + " names node " + quote_text(res.node->view()) +
                            ", which does not bind it",
                        path() + "/node");
    if (!is_valid_alignment(res.alignment))
      return make_error(errc::invalid_alignment,
                        "resource " + quote_text(res.id.view()) + ": alignment " + std::to_string(res.alignment),
                        path() + "/alignment");
    alignment_classes[r] = static_cast<std::uint8_t>(63 - std::countr_zero(res.alignment));
    if (res.demand.dimension && *res.demand.dimension > 2)
      return make_error(errc::number_out_of_range, "dimension must be 0, 1 or 2", path() + "/demand/dimension");
    if (intervals[r].first == none)
      return make_error(errc::unused_resource, "resource " + quote_text(res.id.view()) + " is used by no node", path());
  }

  // Domains: the file names each resource's domain; members follow in id
  // order. Domains must be the pools, in pool id order.
  const std::size_t domain_count = t.domain_count;
  if (domain_count == 0 || domain_count > resource_count)
    return inconsistent(std::to_string(domain_count) + " domains for " + std::to_string(resource_count) + " resources");
  std::vector<pool_domain> domains(domain_count);
  std::vector<std::size_t> member_at(resource_count);  // position in its domain
  for (std::size_t r : resources_by_id) {
    const std::size_t d = t.resource_domain[r];
    if (d >= domain_count)
      return inconsistent("resource " + quote_text(p.resources[r].id.view()) + " is in domain " + std::to_string(d) +
                          " of " + std::to_string(domain_count));
    member_at[r] = domains[d].members.size();
    domains[d].members.push_back(r);
  }
  std::vector<const pool_option*> options;
  for (const pool_option& o : p.pools) options.push_back(&o);
  std::sort(options.begin(), options.end(), [](const auto* a, const auto* b) { return a->pool < b->pool; });
  for (std::size_t i = 1; i < options.size(); ++i)
    if (options[i - 1]->pool == options[i]->pool)
      return make_error(errc::duplicate_id, "pool " + quote_text(options[i]->pool.view()) + " has options twice",
                        "/pools/" + json_pointer_token(options[i]->pool.view()));
  for (std::size_t d = 0; d < domain_count; ++d) {
    pool_domain& domain = domains[d];
    if (domain.members.empty()) return inconsistent("domain " + std::to_string(d) + " has no members");
    const resource_descriptor& first = p.resources[domain.members.front()];
    domain.pool = first.pool;
    if (d > 0 && !(domains[d - 1].pool < domain.pool))
      return inconsistent("domains " + std::to_string(d - 1) + " and " + std::to_string(d) +
                          " are not in strictly increasing pool id order");
    auto option = std::lower_bound(options.begin(), options.end(), domain.pool,
                                   [](const pool_option* o, const pool_id& pool) { return o->pool < pool; });
    if (option != options.end() && (*option)->pool == domain.pool) domain.liveness = (*option)->liveness;
    if (!is_contract_digest(first.storage.digest))
      return make_error(errc::invalid_contract, "resource " + quote_text(first.id.view()),
                        at("resources", domain.members.front()) + "/storage/contract");
    for (std::size_t r : domain.members) {
      const resource_descriptor& res = p.resources[r];
      if (res.pool != domain.pool)
        return inconsistent("resource " + quote_text(res.id.view()) + " of pool " + quote_text(res.pool.view()) +
                                " is in the domain of pool " + quote_text(domain.pool.view()),
                            at("resources", r));
      if (compatibility(first) != compatibility(res))
        return make_error(errc::incompatible_pool_member,
                          "pool " + quote_text(res.pool.view()) + ": resource " + quote_text(res.id.view()) +
                              " differs from resource " + quote_text(first.id.view()),
                          at("resources", r));
      if (domain.liveness == liveness_mode::interval && res.lifetime != allocation_lifetime::invocation)
        return make_error(errc::invalid_liveness,
                          "pool " + quote_text(res.pool.view()) + " is interval but resource " +
                              quote_text(res.id.view()) + " is persistent",
                          at("resources", r) + "/lifetime");
    }
  }
  // Every pool is a domain, so an option's pool must be one of them.
  for (const pool_option* o : options)
    if (!std::binary_search(domains.begin(), domains.end(), o->pool, pool_less{}))
      return make_error(errc::dangling_reference,
                        "options for pool " + quote_text(o->pool.view()) + ", which no resource uses",
                        "/pools/" + json_pointer_token(o->pool.view()));

  // The binding domain: at most one, conservative, of binding resources only.
  std::size_t binding_domain = none;
  for (std::size_t d = 0; d < domain_count; ++d) {
    const auto& members = domains[d].members;
    if (std::none_of(members.begin(), members.end(),
                     [&](std::size_t r) { return p.resources[r].kind == allocation_kind::binding; }))
      continue;
    if (binding_domain != none)
      return make_error(errc::multiple_binding_domains, "pools " + quote_text(domains[binding_domain].pool.view()) +
                                                            " and " + quote_text(domains[d].pool.view()));
    binding_domain = d;
  }
  if (binding_domain != none) {
    const pool_domain& domain = domains[binding_domain];
    if (domain.liveness != liveness_mode::conservative)
      return make_error(errc::invalid_binding_domain, "pool " + quote_text(domain.pool.view()) + " is not conservative",
                        "/pools/" + json_pointer_token(domain.pool.view()) + "/liveness");
    for (std::size_t r : domain.members)
      if (const char* why = binding_domain_violation(p.resources[r]))
        return make_error(errc::invalid_binding_domain, "pool " + quote_text(domain.pool.view()) + ": " + why,
                          at("resources", r));
  }

  // The dependency graph, its node ids found through the checked id order;
  // it moves live intervals' ends as compile does.
  auto dependencies = compile_dependency_graph(p, [&](std::string_view id) -> std::optional<std::size_t> {
    const auto found =
        std::lower_bound(t.node_order.begin(), t.node_order.end(), id,
                         [&](std::uint32_t n, std::string_view key) { return p.nodes[n].id.view() < key; });
    if (found == t.node_order.end() || p.nodes[*found].id.view() != id) return std::nullopt;
    return *found;
  });
  if (!dependencies) return dependencies.error();
  extend_for_dependencies(intervals, *dependencies);

  std::vector<std::optional<wave_domain_layout>> wave_layouts;
  for (const pool_domain& domain : domains) {
    auto layout = compile_wave_domain_layout(p, domain, intervals);
    if (!layout) return layout.error();
    wave_layouts.emplace_back(std::move(*layout));
  }
  std::vector<interval_events> events(domain_count);
  for (std::size_t d = 0; d < domain_count; ++d)
    if (domains[d].liveness == liveness_mode::interval) events[d] = events_of(domains[d], intervals, node_count);
  std::vector<std::vector<std::size_t>> packing(domain_count);
  for (std::size_t d = 0; d < domain_count; ++d) packing[d] = conservative_order(alignment_classes, domains[d]);
  const std::vector<std::size_t> order = placement_order(p, domains);

  // Buckets, in id order, each a plan bucket once.
  compiled_program program;
  std::vector<bool> bucket_seen(p.buckets.size(), false);
  std::vector<std::uint64_t> lane_bytes;
  for (std::size_t i = 0; i < t.buckets.size(); ++i) {
    const program_tables::bucket_record& record = t.buckets[i];
    const std::size_t b = record.plan_bucket;
    if (b >= p.buckets.size() || bucket_seen[b])
      return inconsistent("bucket entry " + std::to_string(i) + " names plan bucket " + std::to_string(b) +
                          " (out of range or twice)");
    bucket_seen[b] = true;
    const bucket_spec& spec = p.buckets[b];
    const std::string bucket_path = at("buckets", b);
    auto id = spec.id();
    if (!id) return make_error(errc::invalid_id, id.error().detail, bucket_path + "/class");
    if (i > 0 && !(program.buckets.back().id < *id))
      return inconsistent("bucket entry " + std::to_string(i) + " (" + id->str() + ") is not in id order");
    for (std::size_t dim = 0; dim < spec.dims.size(); ++dim)
      if (spec.dims[dim] == 0)
        return make_error(errc::number_out_of_range, "capacity dimensions must be at least 1",
                          bucket_path + "/capacity/" + std::to_string(dim));
    // One budget per domain (pool id order), each naming a used pool once.
    std::vector<std::size_t> budget_of(domain_count, none);
    for (std::size_t j = 0; j < spec.budgets.size(); ++j) {
      const workspace_budget& budget = spec.budgets[j];
      const std::string budget_path = bucket_path + "/budgets/" + std::to_string(j);
      auto d = std::lower_bound(domains.begin(), domains.end(), budget.pool, pool_less{});
      if (d == domains.end() || d->pool != budget.pool)
        return make_error(errc::dangling_reference,
                          "budget for pool " + quote_text(budget.pool.view()) + ", which no resource uses",
                          budget_path + "/pool");
      if (budget.min > budget.max)
        return make_error(errc::invalid_budget,
                          "pool " + quote_text(budget.pool.view()) + ": min " + std::to_string(budget.min) + " > max " +
                              std::to_string(budget.max),
                          budget_path);
      std::size_t& slot = budget_of[static_cast<std::size_t>(d - domains.begin())];
      if (slot != none)
        return make_error(errc::duplicate_id,
                          "bucket " + id->str() + " has two budgets for pool " + quote_text(budget.pool.view()),
                          budget_path);
      slot = j;
    }
    for (std::size_t d = 0; d < domain_count; ++d)
      if (budget_of[d] == none)
        return make_error(errc::missing_budget,
                          "bucket " + id->str() + " has no budget for pool " + quote_text(domains[d].pool.view()),
                          bucket_path + "/budgets");

    // Capacity layouts: the file's offsets, capacities recomputed.
    std::vector<std::optional<capacity_layout>> layouts;
    std::size_t projection_at = 0;
    for (std::size_t d = 0; d < domain_count; ++d) {
      const pool_domain& domain = domains[d];
      const program_tables::domain_record& sizes = record.domains[d];
      capacity_layout layout{domain.pool, domain.liveness, {}, sizes.physical_size_bytes, sizes.unaliased_size_bytes};
      reserve_huge(layout.projections, domain.members.size());
      const std::string where = "bucket " + id->str() + ", pool " + quote_text(domain.pool.view());
      for (std::size_t r : domain.members) {
        const resource_descriptor& res = p.resources[r];
        const auto& stored = record.projections[projection_at++];
        auto bytes = resolve_demand(res, spec.dims);
        if (!bytes) {
          const errc code = static_cast<errc>(bytes.error().code.value());
          return make_error(code, bytes.error().detail,
                            at("resources", r) + (code == errc::invalid_alignment ? "/alignment" : "/demand"));
        }
        if (stored.capacity != *bytes)
          return inconsistent(where + ", resource " + quote_text(res.id.view()) + ": capacity " +
                              std::to_string(stored.capacity) + ", its demand is " + std::to_string(*bytes));
        const auto end = checked_add(stored.offset, stored.capacity);
        if (stored.offset % res.alignment != 0 || !end || *end > sizes.physical_size_bytes)
          return inconsistent(where + ", resource " + quote_text(res.id.view()) + ": offset " +
                              std::to_string(stored.offset) + " is misaligned or past the arena's " +
                              std::to_string(sizes.physical_size_bytes) + " bytes");
        layout.projections.push_back({res.id, stored.offset, stored.capacity, res.alignment});
      }
      // The conservative packing: compile's layout of a conservative pool,
      // and the unaliased size of every pool.
      std::uint64_t packed = 0;
      bool matches = true;
      for (std::size_t m : packing[d]) {
        const projection& proj = layout.projections[m];
        const auto offset = checked_align_up(packed, proj.alignment);
        const auto next = offset ? checked_add(*offset, proj.capacity) : std::nullopt;
        if (!next)
          return make_error(errc::size_overflow, "arena offset of resource " + quote_text(proj.resource.view()),
                            at("resources", domain.members[m]));
        matches = matches && proj.offset == *offset;
        packed = *next;
      }
      if (domain.liveness == liveness_mode::conservative) {
        if (!matches && d == binding_domain) return binding_cover_error(domain, layout, id->str());
        if (!matches)
          return inconsistent(where + ": the offsets are not compile's packing (decreasing alignment, then id)");
        if (layout.physical_size_bytes != packed || layout.unaliased_size_bytes != packed)
          return d == binding_domain
                     ? make_error(errc::inexact_cover, "bucket " + id->str() + ": slots end at " +
                                                           std::to_string(packed) + ", the arena has " +
                                                           std::to_string(layout.physical_size_bytes) + " bytes")
                     : inconsistent(where + ": physical size " + std::to_string(layout.physical_size_bytes) +
                                    ", unaliased " + std::to_string(layout.unaliased_size_bytes) +
                                    "; the packing ends at " + std::to_string(packed));
      } else {
        if (layout.unaliased_size_bytes != packed || layout.physical_size_bytes > packed)
          return inconsistent(where + ": physical size " + std::to_string(layout.physical_size_bytes) + ", unaliased " +
                              std::to_string(layout.unaliased_size_bytes) + "; the conservative packing ends at " +
                              std::to_string(packed));
        if (auto ok = check_interval_aliasing(domain, layout, events[d], node_count, id->str()); !ok) return ok.error();
      }
      const workspace_budget& budget = spec.budgets[budget_of[d]];
      if (layout.physical_size_bytes < budget.min || layout.physical_size_bytes > budget.max)
        return make_error(errc::workspace_budget_exceeded,
                          "pool " + quote_text(domain.pool.view()) + " needs " +
                              std::to_string(layout.physical_size_bytes) + " bytes; budget is [" +
                              std::to_string(budget.min) + ", " + std::to_string(budget.max) + "]",
                          bucket_path + "/budgets/" + std::to_string(budget_of[d]));
      layouts.emplace_back(std::move(layout));
    }

    auto placement = place_pools(*id, layouts, order);
    if (!placement) return placement.error();
    for (std::size_t d = 0; d < domain_count; ++d)
      if (record.domains[d].lane_offset != placement->offsets[d])
        return inconsistent("bucket " + id->str() + ", pool " + quote_text(domains[d].pool.view()) + ": lane offset " +
                            std::to_string(record.domains[d].lane_offset) + ", placed at " +
                            std::to_string(placement->offsets[d]));
    if (record.lane_bytes != placement->size || record.unaliased_lane_bytes != placement->unaliased_size)
      return inconsistent("bucket " + id->str() + ": lane bytes " + std::to_string(record.lane_bytes) + " (" +
                          std::to_string(record.unaliased_lane_bytes) + " unaliased), placed: " +
                          std::to_string(placement->size) + " (" + std::to_string(placement->unaliased_size) + ")");
    lane_bytes.push_back(placement->size);

    compiled_bucket bucket{
        *id, spec, {}, nullptr, std::move(placement->offsets), placement->size, placement->unaliased_size};
    for (auto& layout : layouts) bucket.capacity_layouts.push_back(std::move(*layout));
    if ((record.has_binding != 0) != (binding_domain != none) || record.has_binding > 1)
      return inconsistent(
          "bucket " + id->str() + ": binding flag " + std::to_string(record.has_binding) +
          (binding_domain != none ? ", the plan has binding resources" : ", the plan has no binding resources"));
    program.buckets.push_back(std::move(bucket));
  }
  auto admitted = check_admission(p.lanes, p.budget_bytes, lane_bytes);
  if (!admitted) return admitted.error();
  if (*admitted != t.admitted_bytes)
    return inconsistent("admitted bytes " + std::to_string(t.admitted_bytes) + ", the lanes take " +
                        std::to_string(*admitted));

  const result<plan_hash> hash = hash_task.get();
  if (!hash) return hash.error();
  if (*hash != t.hash)
    return make_error(errc::program_stale,
                      "the file was compiled from plan " + t.hash.str() + ", the plan given is " + hash->str());

  // Program binding layouts: one slot per binding node, in node order, its
  // bytes those of its resource's projection; fingerprints recomputed.
  if (binding_domain != none) {
    const pool_domain& domain = domains[binding_domain];
    if (wave_layouts[binding_domain]->projection_count != domain.members.size())
      return make_error(errc::incomplete_domain_layout, "pool " + quote_text(domain.pool.view()));
    for (std::size_t i = 0; i < program.buckets.size(); ++i) {
      compiled_bucket& bucket = program.buckets[i];
      const capacity_layout& layout = bucket.capacity_layouts[binding_domain];
      if (layout.physical_size_bytes == 0)
        return make_error(errc::incomplete_capacity_layout, "bucket " + bucket.id.str() + ": 0 bytes");
      std::vector<binding_slot> slots;
      reserve_huge(slots, domain.members.size());
      // A node's binding is a binding resource (checked above), so a member
      // of the binding domain; the slots come out in node order.
      for (std::size_t n = 0; n < node_count; ++n) {
        const std::size_t r = bound_of[n];
        if (r == none) continue;
        const projection& proj = layout.projections[member_at[r]];
        slots.push_back({n, p.nodes[n].id, proj.resource, proj.offset, proj.capacity, proj.alignment});
      }
      auto digest =
          binding_fingerprint(bucket.id, wave_layouts[binding_domain]->claim, layout.physical_size_bytes, slots);
      if (!digest) return digest.error();
      if (*digest != t.buckets[i].fingerprint)
        return inconsistent("bucket " + bucket.id.str() + ": the file's fingerprint " + t.buckets[i].fingerprint.str() +
                            " is not the layout's, " + digest->str());
      bucket.binding = std::make_shared<const program_binding_layout>(
          bucket.id, wave_layouts[binding_domain]->claim, layout.physical_size_bytes, std::move(slots), *digest, *hash);
    }
  }

  program.hash = *hash;
  program.node_count = node_count;
  program.dependencies = std::move(*dependencies);
  program.lanes = p.lanes;
  program.budget_bytes = p.budget_bytes;
  program.admitted_bytes = *admitted;
  for (auto& layout : wave_layouts) program.wave_layouts.push_back(std::move(*layout));
  program.domains = std::move(domains);
  return program;
}

}  // namespace ferrum::detail
