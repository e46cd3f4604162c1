#include "plan_rules.hpp"

#include "ferrum/binding/image_access.hpp"

#include "json_pointer.hpp"
#include "program_binding_checks.hpp"

#include <algorithm>
#include <utility>

namespace ferrum::detail {
namespace {

std::string node_path(std::size_t n) { return element_path("nodes", n); }
std::string bucket_path(std::size_t b) { return element_path("buckets", b); }
std::string budget_path(std::size_t b, std::size_t j) { return bucket_path(b) + "/budgets/" + std::to_string(j); }
std::string pool_path(const pool_id& pool) { return "/pools/" + json_pointer_token(pool.view()); }

}  // namespace

std::string element_path(std::string_view collection, std::size_t index) {
  return "/" + std::string(collection) + "/" + std::to_string(index);
}

result<void> check_plan_shape(const plan& p) {
  if (p.nodes.empty()) return make_error(errc::empty_plan, "the plan has no nodes", "/nodes");
  if (p.buckets.empty()) return make_error(errc::empty_plan, "the plan has no buckets", "/buckets");
  if (p.lanes < 1) return make_error(errc::number_out_of_range, "lanes must be at least 1", "/lanes");
  return {};
}

error v2_field_in_v1(std::string_view field, std::string path) {
  return make_error(errc::unknown_field,
                    "field " + quote_text(field) + " is not defined in ferrum.plan.v1; use ferrum.plan.v2",
                    std::move(path));
}

error duplicate_node(const plan& p, std::size_t earlier, std::size_t later) {
  return make_error(errc::duplicate_id,
                    "node " + node_id::quote(p.nodes[later].id.view()) + " is also node " + std::to_string(earlier),
                    node_path(later) + "/id");
}

error duplicate_resource(const plan& p, std::size_t earlier, std::size_t later) {
  return make_error(
      errc::duplicate_id,
      "resource " + resource_id::quote(p.resources[later].id.view()) + " is also resource " + std::to_string(earlier),
      resource_path(later) + "/id");
}

error resource_node_error(const resource_descriptor& r, std::size_t index) {
  if (r.kind == allocation_kind::binding)
    return make_error(errc::missing_field, "binding resource " + resource_id::quote(r.id.view()) + " names no node",
                      resource_path(index) + "/node");
  return make_error(errc::unknown_field, "workspace resource " + resource_id::quote(r.id.view()) + " names a node",
                    resource_path(index) + "/node");
}

error dimension_error(std::size_t index) {
  return make_error(errc::number_out_of_range, "dimension must be 0, 1 or 2",
                    resource_path(index) + "/demand/dimension");
}

error contract_error(const resource_descriptor& r, std::size_t index) {
  return make_error(errc::invalid_contract, "resource " + resource_id::quote(r.id.view()),
                    resource_path(index) + "/storage/contract");
}

error invalid_alignment(const resource_descriptor& r) {
  return make_error(errc::invalid_alignment,
                    "resource " + resource_id::quote(r.id.view()) + ": alignment " + std::to_string(r.alignment));
}

error unused_resource(const resource_descriptor& r, std::size_t index) {
  return make_error(errc::unused_resource, "resource " + resource_id::quote(r.id.view()) + " is used by no node",
                    resource_path(index));
}

error demand_error(const error& e, std::size_t index) {
  const errc code = static_cast<errc>(e.code.value());
  return make_error(code, e.detail,
                    resource_path(index) + (code == errc::invalid_alignment ? "/alignment"
                                            : code == errc::invalid_image   ? "/image"
                                                                            : "/demand"));
}

error repeated_use(const plan_node& node, std::size_t n, std::size_t j) {
  return make_error(errc::duplicate_id,
                    "node " + node_id::quote(node.id.view()) + " lists resource " +
                        resource_id::quote(node.resources[j].view()) +
                        " twice (only an image may be listed again, each time for mip levels or layers the others "
                        "do not reach)",
                    node_path(n) + "/resources/" + std::to_string(j));
}

namespace {

// Node n's k-th listing repeats an earlier one: at its listing, or where the
// node names ranges (a listing a file's access array made), at its access.
error repeated_listing(const plan_node& node, std::size_t n, std::size_t k) {
  if (node.ranges.empty()) return repeated_use(node, n, k);
  return make_error(errc::duplicate_id,
                    "node " + node_id::quote(node.id.view()) + " reaches resource " +
                        resource_id::quote(node.resources[k].view()) +
                        " twice in one place: its accesses to an image name mip levels or layers that do not overlap",
                    node_path(n) + "/access/" + json_pointer_token(node.resources[k].view()));
}

}  // namespace

result<void> check_repeated_uses(const plan& p, std::size_t n, std::span<const std::size_t> uses) {
  const plan_node& node = p.nodes[n];
  // Whether listings j and k of one resource may stand side by side.
  const auto disjoint = [&](std::size_t j, std::size_t k) {
    const resource_descriptor& r = p.resources[uses[k]];
    if (!r.image) return false;
    const std::uint32_t mips = r.image->mips;
    const std::uint32_t layers = r.image->layers;
    return !overlaps(resolve(node.range_of(j), mips, layers), resolve(node.range_of(k), mips, layers));
  };
  // Few resources per node: the quadratic scan beats sorting below 16.
  if (uses.size() < 16) {
    for (std::size_t k = 1; k < uses.size(); ++k)
      for (std::size_t j = 0; j < k; ++j)
        if (uses[j] == uses[k] && uses[k] < p.resources.size() && !disjoint(j, k)) return repeated_listing(node, n, k);
    return {};
  }
  std::vector<std::size_t> order(uses.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return uses[a] != uses[b] ? uses[a] < uses[b] : a < b; });
  for (std::size_t i = 1; i < order.size(); ++i)
    for (std::size_t j = i; j-- > 0 && uses[order[j]] == uses[order[i]];)
      if (uses[order[i]] < p.resources.size() && !disjoint(order[j], order[i]))
        return repeated_listing(node, n, order[i]);
  return {};
}

error range_count_error(const plan_node& node, std::size_t n, plan_format format) {
  const std::string path = node_path(n) + "/access";
  if (format != plan_format::v2) return v2_field_in_v1("access", path);
  return make_error(errc::invalid_access,
                    "node " + node_id::quote(node.id.view()) + " gives " + std::to_string(node.ranges.size()) +
                        " subresource ranges for its " + std::to_string(node.resources.size()) +
                        " resources (none, or one per resource)",
                    path);
}

error access_error(const plan_node& node, std::size_t n, plan_format format) {
  const std::string path = node_path(n) + "/access";
  if (format != plan_format::v2) return v2_field_in_v1("access", path);
  const auto count = [](std::size_t number, std::string_view what) {
    return std::to_string(number) + " " + std::string(what) + (number == 1 ? "" : what.back() == 's' ? "es" : "s");
  };
  if (node.access.size() != node.resources.size())
    return make_error(errc::invalid_access,
                      "node " + node_id::quote(node.id.view()) + " declares " + count(node.access.size(), "access") +
                          " for its " + count(node.resources.size(), "resource"),
                      path);
  std::size_t k = 0;
  while (k + 1 < node.access.size() && node.access[k] <= last_resource_access) ++k;
  return make_error(errc::invalid_access,
                    "node " + node_id::quote(node.id.view()) + " declares access " +
                        std::to_string(static_cast<unsigned>(node.access[k])) + " to resource " +
                        resource_id::quote(node.resources[k].view()) + " (not an access ferrum knows)",
                    path + "/" + json_pointer_token(node.resources[k].view()));
}

error binding_not_owned(const plan_node& node, std::size_t n) {
  return make_error(errc::binding_not_owned,
                    "node " + node_id::quote(node.id.view()) + " binds resource " +
                        resource_id::quote(node.binding.value_or(resource_id{}).view()) +
                        ", which is not a binding resource of this node that it lists",
                    node_path(n) + "/binding");
}

error dangling_pool_option(const pool_option& option) {
  return make_error(errc::dangling_reference,
                    "options for pool " + pool_id::quote(option.pool.view()) + ", which no resource uses",
                    pool_path(option.pool));
}

error duplicate_pool_option(const pool_option& option) {
  return make_error(errc::duplicate_id, "pool " + pool_id::quote(option.pool.view()) + " has options twice",
                    pool_path(option.pool));
}

result<void> check_declared_memory(const plan& p, const pool_id& pool, std::optional<memory_class> declared,
                                   bool binds) {
  if (!declared) return {};
  const std::string where = pool_path(pool) + "/memory";
  if (p.format == plan_format::v1)
    return make_error(errc::invalid_memory_class,
                      "pool " + pool_id::quote(pool.view()) + ": ferrum.plan.v1 declares no memory classes", where);
  if (binds && *declared != memory_class::upload)
    return make_error(errc::invalid_memory_class,
                      "pool " + pool_id::quote(pool.view()) + " holds binding slots, which the host writes: " +
                          "its memory is 'upload', not " + quote_text(to_string(*declared)),
                      where);
  return {};
}

result<memory_class> pool_memory_class(const plan& p, const pool_domain& domain, std::optional<memory_class> declared) {
  const bool binds = std::any_of(domain.members.begin(), domain.members.end(),
                                 [&](std::size_t r) { return p.resources[r].kind == allocation_kind::binding; });
  if (auto ok = check_declared_memory(p, domain.pool, declared, binds); !ok) return ok.error();
  if (declared == memory_class::imported && domain.liveness == liveness_mode::interval)
    return make_error(errc::invalid_liveness,
                      "pool " + pool_id::quote(domain.pool.view()) +
                          " is imported: each of its resources is a buffer of the engine's, which ferrum never "
                          "aliases; it cannot be interval",
                      pool_path(domain.pool) + "/liveness");
  const bool images = std::any_of(domain.members.begin(), domain.members.end(),
                                  [&](std::size_t r) { return p.resources[r].image.has_value(); });
  if (images && declared.value_or(memory_class::device) != memory_class::device && declared != memory_class::imported)
    return make_error(errc::invalid_memory_class,
                      "pool " + pool_id::quote(domain.pool.view()) +
                          " holds images, which live in 'device' memory or are the engine's ('imported'), not " +
                          quote_text(to_string(*declared)),
                      pool_path(domain.pool) + "/memory");
  // History resources are the scheduler's, outside the lanes: placed as
  // the engine's are (check_history refuses another declared class).
  if (domain.history) return memory_class::imported;
  return declared.value_or(derived_memory_class(binds));
}

error incompatible_member(const resource_descriptor& r, const resource_descriptor& first, std::size_t index) {
  return make_error(errc::incompatible_pool_member,
                    "pool " + pool_id::quote(r.pool.view()) + ": resource " + resource_id::quote(r.id.view()) +
                        " differs from resource " + resource_id::quote(first.id.view()),
                    resource_path(index));
}

error invalid_liveness(const resource_descriptor& r, std::size_t index) {
  return make_error(errc::invalid_liveness,
                    "pool " + pool_id::quote(r.pool.view()) + " is interval but resource " +
                        resource_id::quote(r.id.view()) + " is " + std::string(to_string(r.lifetime)),
                    resource_path(index) + "/lifetime");
}

result<std::optional<std::size_t>> find_binding_domain(const plan& p, const std::vector<pool_domain>& domains) {
  std::optional<std::size_t> found;
  for (std::size_t d = 0; d < domains.size(); ++d) {
    const auto& members = domains[d].members;
    if (std::none_of(members.begin(), members.end(),
                     [&](std::size_t r) { return p.resources[r].kind == allocation_kind::binding; }))
      continue;
    if (found)
      return make_error(errc::multiple_binding_domains, "pools " + pool_id::quote(domains[*found].pool.view()) +
                                                            " and " + pool_id::quote(domains[d].pool.view()));
    found = d;
  }
  return found;
}

result<void> check_binding_domain(const plan& p, const pool_domain& domain) {
  if (domain.liveness != liveness_mode::conservative)
    return make_error(errc::invalid_binding_domain,
                      "pool " + pool_id::quote(domain.pool.view()) + " is not conservative",
                      pool_path(domain.pool) + "/liveness");
  for (std::size_t r : domain.members)
    if (const char* why = binding_domain_violation(p.resources[r]))
      return make_error(errc::invalid_binding_domain, "pool " + pool_id::quote(domain.pool.view()) + ": " + why,
                        resource_path(r));
  return {};
}

result<void> check_binding_wave_layout(const pool_domain& domain, const wave_domain_layout& layout) {
  if (layout.projection_count != domain.members.size() || layout.claim.ids().size() != domain.members.size())
    return make_error(errc::incomplete_domain_layout, "pool " + pool_id::quote(domain.pool.view()) + ": " +
                                                          std::to_string(domain.members.size()) + " descriptors, " +
                                                          std::to_string(layout.projection_count) + " projections");
  return {};
}

result<void> check_binding_capacity_layout(const bucket_id& bucket, const pool_domain& domain,
                                           const capacity_layout& layout) {
  if (layout.projections.size() != domain.members.size() || layout.physical_size_bytes == 0)
    return make_error(errc::incomplete_capacity_layout,
                      "bucket " + bucket.str() + ": " + std::to_string(layout.projections.size()) +
                          " projections for " + std::to_string(domain.members.size()) + " descriptors, " +
                          std::to_string(layout.physical_size_bytes) + " bytes");
  return {};
}

result<bucket_id> bucket_id_of(const bucket_spec& spec, std::size_t b) {
  auto id = spec.id();
  if (!id) return make_error(errc::invalid_id, id.error().detail, bucket_path(b) + "/class");
  return id;
}

error zero_dimension(std::size_t b, std::size_t d) {
  return make_error(errc::number_out_of_range, "capacity dimensions must be at least 1",
                    bucket_path(b) + "/capacity/" + std::to_string(d));
}

result<void> check_budget(const workspace_budget& budget, std::size_t b, std::size_t j, bool pool_is_used) {
  if (!pool_is_used)
    return make_error(errc::dangling_reference,
                      "budget for pool " + pool_id::quote(budget.pool.view()) + ", which no resource uses",
                      budget_path(b, j) + "/pool");
  if (budget.min > budget.max)
    return make_error(errc::invalid_budget,
                      "pool " + pool_id::quote(budget.pool.view()) + ": min " + std::to_string(budget.min) + " > max " +
                          std::to_string(budget.max),
                      budget_path(b, j));
  return {};
}

error duplicate_budget(const bucket_id& bucket, const workspace_budget& budget, std::size_t b, std::size_t j) {
  return make_error(errc::duplicate_id,
                    "bucket " + bucket.str() + " has two budgets for pool " + pool_id::quote(budget.pool.view()),
                    budget_path(b, j));
}

error missing_budget(const bucket_id& bucket, const pool_id& pool, std::size_t b) {
  return make_error(errc::missing_budget,
                    "bucket " + bucket.str() + " has no budget for pool " + pool_id::quote(pool.view()),
                    bucket_path(b) + "/budgets");
}

error budget_exceeded(const pool_id& pool, std::uint64_t bytes, const workspace_budget& budget, std::size_t b,
                      std::size_t j) {
  return make_error(errc::workspace_budget_exceeded,
                    "pool " + pool_id::quote(pool.view()) + " needs " + std::to_string(bytes) + " bytes; budget is [" +
                        std::to_string(budget.min) + ", " + std::to_string(budget.max) + "]",
                    budget_path(b, j));
}

error arena_offset_overflow(const resource_id& resource, std::size_t index) {
  return make_error(errc::size_overflow, "arena offset of resource " + resource_id::quote(resource.view()),
                    resource_path(index));
}

}  // namespace ferrum::detail
