// rebuild_program and the plan's stages of it (program_file_check.hpp).
#include "program_file_check.hpp"

#include "history_rules.hpp"

#include "conservative_packing.hpp"
#include "dependency_graph_build.hpp"
#include "ferrum/binding/admission.hpp"
#include "image_rules.hpp"
#include "plan_rules.hpp"
#include "queue_order.hpp"

#include <algorithm>
#include <future>
#include <span>

namespace ferrum::detail {
namespace {

// The plan's shape first: a file of another plan usually differs here.
result<void> check_shape(const program_tables& t, const plan& p) {
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
  return check_plan_shape(p);
}

// `order` lists each of `count` indices once, their ids strictly increasing:
// the ids are unique and `order` is their id order. Errors: duplicate_id (two
// equal ids: `duplicate(earlier, later)`, as validate_plan reports them),
// program_inconsistent.
template <class IdOf, class Duplicate>
result<void> check_id_order(const std::vector<std::uint32_t>& order, std::size_t count, IdOf id_of,
                            std::string_view what, Duplicate duplicate) {
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
      return duplicate(std::min<std::size_t>(order[i - 1], index), std::max<std::size_t>(order[i - 1], index));
    if (prev > id)
      return inconsistent("the " + std::string(what) + " order is not id order at entry " + std::to_string(i));
  }
  return {};
}

result<void> check_resource_order(file_plan& f) {
  return check_id_order(
      f.t.resource_order, f.p.resources.size(), [&](std::size_t r) { return f.p.resources[r].id.view(); }, "resource",
      [&](std::size_t earlier, std::size_t later) { return duplicate_resource(f.p, earlier, later); });
}

result<void> check_node_order(file_plan& f) {
  return check_id_order(
      f.t.node_order, f.p.nodes.size(), [&](std::size_t n) { return f.p.nodes[n].id.view(); }, "node",
      [&](std::size_t earlier, std::size_t later) { return duplicate_node(f.p, earlier, later); });
}

// Every node's declared accesses and resources, resolved by the file and
// confirmed by id; the live intervals; each node's binding resource and its
// owner.
result<void> check_uses(file_plan& f) {
  const plan& p = f.p;
  f.intervals.assign(p.resources.size(), live_interval{no_index, 0});
  f.owner.assign(p.resources.size(), no_index);
  f.bound_of.assign(p.nodes.size(), no_index);
  std::vector<std::size_t> listed;  // a node's resources' indices
  std::size_t k = 0;
  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    const plan_node& node = p.nodes[n];
    if (auto ok = check_access(node, n, p.format); !ok) return ok.error();
    std::size_t bound = no_index;
    for (std::size_t j = 0; j < node.resources.size(); ++j, ++k) {
      const std::size_t r = f.t.use_resource[k];
      if (r >= p.resources.size() || p.resources[r].id != node.resources[j])
        return inconsistent("entry " + std::to_string(k) + " of the resolved uses does not name node " +
                                quote_text(node.id.view()) + "'s resource " + quote_text(node.resources[j].view()),
                            element_path("nodes", n) + "/resources/" + std::to_string(j));
      if (f.intervals[r].first == no_index) f.intervals[r].first = n;
      f.intervals[r].last = n;
      if (node.binding && bound == no_index && *node.binding == node.resources[j]) bound = r;
    }
    const auto resolved = std::span(f.t.use_resource).subspan(k - node.resources.size(), node.resources.size());
    listed.assign(resolved.begin(), resolved.end());
    if (auto ok = check_repeated_uses(p, n, listed); !ok) return ok.error();
    if (!node.binding) continue;
    // compile requires a node to list the resource it binds.
    if (auto ok = check_binding_owner(node, n, bound == no_index ? nullptr : &p.resources[bound]); !ok)
      return ok.error();
    f.owner[bound] = n;
    f.bound_of[n] = bound;
  }
  return {};
}

// Each resource's own fields; that its node binds it; that a node uses it.
result<void> check_resources(file_plan& f) {
  const plan& p = f.p;
  f.alignment_classes.resize(p.resources.size());
  for (std::size_t r = 0; r < p.resources.size(); ++r) {
    const resource_descriptor& res = p.resources[r];
    if (auto ok = check_image(p, res, r); !ok) return ok.error();
    if (auto ok = check_resource_node(res, r); !ok) return ok.error();
    if (res.kind == allocation_kind::binding && f.owner[r] == no_index)
      return make_error(errc::binding_not_owned,
                        "resource " + quote_text(res.id.view()) + " names node " + quote_text(res.node->view()) +
                            ", which does not bind it",
                        resource_path(r) + "/node");
    if (auto ok = check_alignment(res, r); !ok) return ok.error();
    f.alignment_classes[r] = static_cast<std::uint8_t>(alignment_class(res.alignment));
    if (auto ok = check_dimension(res, r); !ok) return ok.error();
    if (f.intervals[r].first == no_index) return unused_resource(res, r);
  }
  // The file's uses are 32-bit; a plan without images or history needs no copy.
  if (std::none_of(p.resources.begin(), p.resources.end(), [](const resource_descriptor& r) {
        return r.image || r.history_of || r.lifetime == allocation_lifetime::history;
      }))
    return {};
  const std::vector<std::size_t> uses(f.t.use_resource.begin(), f.t.use_resource.end());
  if (auto ok = check_history(p, uses); !ok) return ok.error();
  return check_image_uses(p, uses);
}

// The file names each resource's domain; members follow in id order.
result<void> deal_members(file_plan& f) {
  const std::size_t domain_count = f.t.domain_count;
  if (domain_count == 0 || domain_count > f.p.resources.size())
    return inconsistent(std::to_string(domain_count) + " domains for " + std::to_string(f.p.resources.size()) +
                        " resources");
  f.domains.resize(domain_count);
  f.member_at.resize(f.p.resources.size());
  for (std::size_t r : f.resources_by_id) {
    const std::size_t d = f.t.resource_domain[r];
    if (d >= domain_count)
      return inconsistent("resource " + quote_text(f.p.resources[r].id.view()) + " is in domain " + std::to_string(d) +
                          " of " + std::to_string(domain_count));
    f.member_at[r] = f.domains[d].members.size();
    f.domains[d].members.push_back(r);
  }
  return {};
}

// Orders domains and pool ids by pool id.
struct pool_less {
  bool operator()(const pool_domain& a, const pool_id& b) const noexcept { return a.pool < b; }
  bool operator()(const pool_id& a, const pool_domain& b) const noexcept { return a < b.pool; }
};

// Domain d: the pool of its members, after domain d - 1's; its liveness from
// `options` (sorted by pool); its members' contract and compatibility.
result<void> check_domain(file_plan& f, std::size_t d, const std::vector<const pool_option*>& options) {
  pool_domain& domain = f.domains[d];
  if (domain.members.empty()) return inconsistent("domain " + std::to_string(d) + " has no members");
  const resource_descriptor& first = f.p.resources[domain.members.front()];
  domain.pool = first.pool;
  domain.images = first.image.has_value();
  domain.history = first.lifetime == allocation_lifetime::history;
  if (d > 0 && !(f.domains[d - 1].pool < domain.pool))
    return inconsistent("domains " + std::to_string(d - 1) + " and " + std::to_string(d) +
                        " are not in strictly increasing pool id order");
  auto option = std::lower_bound(options.begin(), options.end(), domain.pool,
                                 [](const pool_option* o, const pool_id& pool) { return o->pool < pool; });
  const bool has_option = option != options.end() && (*option)->pool == domain.pool;
  if (has_option) domain.liveness = (*option)->liveness;
  // Members match the first in their contract (check_pool_member).
  if (!first.image)
    if (auto ok = check_contract(first, domain.members.front()); !ok) return ok.error();
  for (std::size_t r : domain.members) {
    const resource_descriptor& res = f.p.resources[r];
    if (res.pool != domain.pool)
      return inconsistent("resource " + quote_text(res.id.view()) + " of pool " + quote_text(res.pool.view()) +
                              " is in the domain of pool " + quote_text(domain.pool.view()),
                          resource_path(r));
    if (auto ok = check_pool_member(f.p, domain, r); !ok) return ok.error();
  }
  auto memory = pool_memory_class(f.p, domain, has_option ? (*option)->memory : std::nullopt);
  if (!memory) return memory.error();
  domain.memory = *memory;
  return {};
}

// The pool domains (derive_pool_domains): the pools, in pool id order.
result<void> check_domains(file_plan& f) {
  if (auto ok = deal_members(f); !ok) return ok.error();
  std::vector<const pool_option*> options;
  for (const pool_option& o : f.p.pools) options.push_back(&o);
  std::sort(options.begin(), options.end(), [](const auto* a, const auto* b) { return a->pool < b->pool; });
  for (std::size_t i = 1; i < options.size(); ++i)
    if (options[i - 1]->pool == options[i]->pool) return duplicate_pool_option(*options[i]);
  for (std::size_t d = 0; d < f.domains.size(); ++d)
    if (auto ok = check_domain(f, d, options); !ok) return ok.error();
  // Every pool is a domain, so an option's pool must be one of them.
  for (const pool_option* o : options)
    if (!std::binary_search(f.domains.begin(), f.domains.end(), o->pool, pool_less{})) return dangling_pool_option(*o);
  return {};
}

// The binding domain: at most one, conservative, of binding resources only.
result<void> check_binding_domains(file_plan& f) {
  auto found = find_binding_domain(f.p, f.domains);
  if (!found) return found.error();
  f.binding_domain = found->value_or(no_index);
  if (*found) return check_binding_domain(f.p, f.domains[**found]);
  return {};
}

// The dependency graph, its node ids found through the checked id order; it
// moves live intervals' ends as compile does.
result<void> check_dependencies(file_plan& f) {
  const plan& p = f.p;
  const std::vector<std::uint32_t>& by_id = f.t.node_order;
  auto dependencies = compile_dependency_graph(p, [&](std::string_view id) -> std::optional<std::size_t> {
    const auto found = std::lower_bound(by_id.begin(), by_id.end(), id, [&](std::uint32_t n, std::string_view key) {
      return p.nodes[n].id.view() < key;
    });
    if (found == by_id.end() || p.nodes[*found].id.view() != id) return std::nullopt;
    return *found;
  });
  if (!dependencies) return dependencies.error();
  f.dependencies = std::move(*dependencies);
  if (std::any_of(p.nodes.begin(), p.nodes.end(), [&](const plan_node& n) { return n.queue != p.nodes[0].queue; })) {
    // The file's uses are 32-bit; a plan on one queue needs no copy (nor
    // moves an interval: extend_for_dependencies).
    const std::vector<std::size_t> uses(f.t.use_resource.begin(), f.t.use_resource.end());
    if (auto ok = check_queue_order(p, uses, f.dependencies); !ok) return ok.error();
    extend_for_dependencies(f.intervals, f.dependencies, p, uses);
  }
  return {};
}

result<void> compile_wave_layouts(file_plan& f) {
  for (const pool_domain& domain : f.domains) {
    auto layout = compile_wave_domain_layout(f.p, domain, f.intervals);
    if (!layout) return layout.error();
    f.wave_layouts.emplace_back(std::move(*layout));
  }
  return {};
}

// Buckets, in id order, each a plan bucket once; the lanes' admission.
result<void> check_buckets(const file_plan& f, compiled_program& program) {
  std::vector<bool> bucket_seen(f.p.buckets.size(), false);
  std::vector<std::uint64_t> lane_bytes;
  for (std::size_t i = 0; i < f.t.buckets.size(); ++i) {
    auto bucket = check_bucket(f, i, bucket_seen, program.buckets.empty() ? nullptr : &program.buckets.back());
    if (!bucket) return bucket.error();
    lane_bytes.push_back(bucket->admitted_lane_bytes());
    program.buckets.push_back(std::move(*bucket));
  }
  auto admitted = check_admission(f.p.lanes, f.p.budget_bytes, lane_bytes);
  if (!admitted) return admitted.error();
  if (*admitted != f.t.admitted_bytes)
    return inconsistent("admitted bytes " + std::to_string(f.t.admitted_bytes) + ", the lanes take " +
                        std::to_string(*admitted));
  program.admitted_bytes = *admitted;
  return {};
}

}  // namespace

error inconsistent(std::string detail, std::string path) {
  return make_error(errc::program_inconsistent, std::move(detail), std::move(path));
}

error stale_program(const plan_hash& file, const plan_hash& given) {
  return make_error(errc::program_stale,
                    "the file was compiled from plan " + file.str() + ", the plan given is " + given.str());
}

result<compiled_program> rebuild_program(const program_tables& t, const plan& p) {
  if (auto ok = check_shape(t, p); !ok) return ok.error();
  file_plan f(t, p);
  // Resources in id order, checked; then the plan hash, on a second thread
  // while the rest is checked (it reads the plan and that order, which no
  // stage changes). The future joins on every return path.
  if (auto ok = check_resource_order(f); !ok) return ok.error();
  f.resources_by_id.assign(t.resource_order.begin(), t.resource_order.end());
  auto hash_task =
      std::async(std::launch::async | std::launch::deferred,
                 [&p, by_id = std::span<const std::size_t>(f.resources_by_id)] { return hash_plan(p, by_id); });
  // validate_plan, derive_pool_domains and what compile_program_binding_layouts
  // requires of the binding domain.
  using stage = result<void> (*)(file_plan&);
  for (stage check : {check_node_order, check_uses, check_resources, check_domains, check_binding_domains,
                      check_dependencies, compile_wave_layouts})
    if (auto ok = check(f); !ok) return ok.error();

  // Capacity layouts, placement and admission, bucket by bucket.
  prepare_layout_checks(f);
  compiled_program program;
  if (auto ok = check_buckets(f, program); !ok) return ok.error();

  const result<plan_hash> hash = hash_task.get();
  if (!hash) return hash.error();
  if (*hash != t.hash) return stale_program(t.hash, *hash);
  if (auto ok = check_binding_layouts(f, *hash, program); !ok) return ok.error();

  program.hash = *hash;
  program.node_count = p.nodes.size();
  program.dependencies = std::move(f.dependencies);
  program.lanes = p.lanes;
  program.budget_bytes = p.budget_bytes;
  for (auto& layout : f.wave_layouts) program.wave_layouts.push_back(std::move(*layout));
  program.domains = std::move(f.domains);
  return program;
}

}  // namespace ferrum::detail
