// plan_rules — the plan's rules, each once, with its error: code, detail and
// JSON pointer. compile's stages (validate_plan, derive_pool_domains,
// compile_capacity_layout, compile_program_binding_layouts) check them on a
// plan they index; load_compiled_program (program_file_check.cpp) on a plan
// it checks against a program file, finding things its own way.
//
// A `check_*` holds a rule's condition; it is inline and builds its error out
// of line, so the loops of compile stay as tight as when they held the
// conditions themselves. The functions that return an `error` are the rules
// whose condition each caller finds its own way (a duplicate id: by the plan
// index, or by the file's id order), with the one error both report.
#pragma once

#include "ferrum/binding/capacity_layout.hpp"
#include "ferrum/binding/demand.hpp"
#include "plan_encoding.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace ferrum::detail {

// "/<collection>/<index>", a plan element's JSON pointer.
[[nodiscard]] std::string element_path(std::string_view collection, std::size_t index);
[[nodiscard]] inline std::string resource_path(std::size_t index) { return element_path("resources", index); }

// The plan as a whole: nodes, buckets, lanes >= 1 (empty_plan,
// number_out_of_range).
[[nodiscard]] result<void> check_plan_shape(const plan& p);

// A field that ferrum.plan.v2 defines and a v1 plan uses (unknown_field, at
// `path`, the field): a node's `queue`, `after` or `access`, a pool option's
// `memory`. The plan loader reports it for such a key in a v1 file, the
// dependency graph and check_access for a v1 plan built in code.
[[nodiscard]] error v2_field_in_v1(std::string_view field, std::string path);

// Two nodes or two resources share an id (duplicate_id, at the later one).
[[nodiscard]] error duplicate_node(const plan& p, std::size_t earlier, std::size_t later);
[[nodiscard]] error duplicate_resource(const plan& p, std::size_t earlier, std::size_t later);

// --- Resources (resource `index` of the plan).

// The errors of the checks below; invalid_alignment's has no path
// (resolve_demand's, located by demand_error).
[[nodiscard]] error resource_node_error(const resource_descriptor& r, std::size_t index);
[[nodiscard]] error dimension_error(std::size_t index);
[[nodiscard]] error contract_error(const resource_descriptor& r, std::size_t index);
[[nodiscard]] error invalid_alignment(const resource_descriptor& r);

// A binding resource names its node (missing_field); a workspace resource
// names none (unknown_field).
[[nodiscard]] inline result<void> check_resource_node(const resource_descriptor& r, std::size_t index) {
  if ((r.kind == allocation_kind::binding && !r.node) || (r.kind == allocation_kind::workspace && r.node))
    return resource_node_error(r, index);
  return {};
}

// A demand's dimension is 0, 1 or 2 (number_out_of_range).
[[nodiscard]] inline result<void> check_dimension(const resource_descriptor& r, std::size_t index) {
  if (r.demand.dimension && *r.demand.dimension > 2) return dimension_error(index);
  return {};
}

// A storage contract is 64 lowercase hex digits (invalid_contract).
[[nodiscard]] inline result<void> check_contract(const resource_descriptor& r, std::size_t index) {
  if (!is_contract_digest(r.storage.digest)) return contract_error(r, index);
  return {};
}

// No node uses or binds resource `index` (unused_resource).
[[nodiscard]] error unused_resource(const resource_descriptor& r, std::size_t index);

// resolve_demand's error, at resource `index`'s alignment or demand.
[[nodiscard]] error demand_error(const error& e, std::size_t index);

// Resource `index`'s capacity in a bucket of `dims` (resolve_demand), its
// errors located.
[[nodiscard]] inline result<std::uint64_t> resource_capacity(const resource_descriptor& r, std::size_t index,
                                                             const bucket_capacity& dims) {
  auto bytes = resolve_demand(r, dims);
  if (!bytes) return demand_error(bytes.error(), index);
  return bytes;
}

// An alignment is a power of two (invalid_alignment, at its alignment):
// resolve_demand checks it first, with the same error.
[[nodiscard]] inline result<void> check_alignment(const resource_descriptor& r, std::size_t index) {
  if (!is_valid_alignment(r.alignment)) return demand_error(invalid_alignment(r), index);
  return {};
}

// --- Nodes (node `n` of the plan).

// Node n lists its resource `j` twice (duplicate_id).
[[nodiscard]] error repeated_use(const plan_node& node, std::size_t n, std::size_t j);

// Node n lists each resource once, but an image in ranges that do not
// overlap (duplicate_id at the later listing). `uses`: the resource index
// of each of its resources (plan_index::uses; past the plan's resources
// where unresolved).
[[nodiscard]] result<void> check_repeated_uses(const plan& p, std::size_t n, std::span<const std::size_t> uses);

[[nodiscard]] error binding_not_owned(const plan_node& node, std::size_t n);

// Node n binds `bound` (the resource its binding names and lists; nullptr
// where there is none), a binding resource of its own (binding_not_owned).
[[nodiscard]] inline result<void> check_binding_owner(const plan_node& node, std::size_t n,
                                                      const resource_descriptor* bound) {
  if (bound == nullptr || bound->kind != allocation_kind::binding || bound->node != node.id)
    return binding_not_owned(node, n);
  return {};
}

// Node n's declared accesses: none in a v1 plan (unknown_field, at its
// `access`); in a v2 plan none, or one per resource (invalid_access, at its
// `access`), each a resource_access (invalid_access, at the resource's
// entry, keyed by its id as in the plan file).
[[nodiscard]] error access_error(const plan_node& node, std::size_t n, plan_format format);
// Node n's ranges, set in a v1 plan (unknown_field) or not one per resource
// (invalid_access), at its `access`.
[[nodiscard]] error range_count_error(const plan_node& node, std::size_t n, plan_format format);

[[nodiscard]] inline result<void> check_access(const plan_node& node, std::size_t n, plan_format format) {
  if (!node.ranges.empty() && (format != plan_format::v2 || node.ranges.size() != node.resources.size()))
    return range_count_error(node, n, format);
  if (node.access.empty()) return {};
  if (format != plan_format::v2 || node.access.size() != node.resources.size()) return access_error(node, n, format);
  for (const resource_access a : node.access)
    if (a > last_resource_access) return access_error(node, n, format);
  return {};
}

// --- Pools.

// Options for a pool no resource uses (dangling_reference), or for one pool
// twice (duplicate_id).
[[nodiscard]] error dangling_pool_option(const pool_option& option);
[[nodiscard]] error duplicate_pool_option(const pool_option& option);

[[nodiscard]] error incompatible_member(const resource_descriptor& r, const resource_descriptor& first,
                                        std::size_t index);
[[nodiscard]] error invalid_liveness(const resource_descriptor& r, std::size_t index);

// Resource `index` may be a member of `domain`: it matches the domain's
// first member, if any, in usage, element and storage
// (incompatible_pool_member), and an interval pool holds invocation
// resources only (invalid_liveness).
[[nodiscard]] inline result<void> check_pool_member(const plan& p, const pool_domain& domain, std::size_t index) {
  const resource_descriptor& r = p.resources[index];
  if (!domain.members.empty()) {
    const resource_descriptor& first = p.resources[domain.members.front()];
    const auto compatibility = [](const resource_descriptor& x) {
      return std::make_tuple(x.image.has_value(), x.usage, x.element, x.storage.allocator, x.storage.view,
                             std::string_view(x.storage.digest));
    };
    if (compatibility(first) != compatibility(r)) return incompatible_member(r, first, index);
  }
  if (domain.liveness == liveness_mode::interval && r.lifetime != allocation_lifetime::invocation)
    return invalid_liveness(r, index);
  return {};
}

// The class a pool gets where the plan declares none: upload for a pool of
// binding resources (`binds`: the host writes every slot), device otherwise.
[[nodiscard]] constexpr memory_class derived_memory_class(bool binds) noexcept {
  return binds ? memory_class::upload : memory_class::device;
}

// The memory class of `domain` (its members dealt), given its pool's
// `declared` class: the declared one, else upload for a pool of binding
// resources (the host writes every slot) and device for any other.
// invalid_memory_class: a binding pool declared another class, or a v1 plan
// declaring a class; invalid_liveness: an imported pool declared interval.
// A pool of history resources (pool_domain::history) is `imported`: the
// scheduler's two copies of each pair, outside the lanes.
[[nodiscard]] result<memory_class> pool_memory_class(const plan& p, const pool_domain& domain,
                                                     std::optional<memory_class> declared);
// The errors of pool_memory_class, for `pool`, which holds binding
// resources when `binds`.
[[nodiscard]] result<void> check_declared_memory(const plan& p, const pool_id& pool,
                                                 std::optional<memory_class> declared, bool binds);

// The binding domain: the one domain holding binding resources, if any
// (multiple_binding_domains where two do).
[[nodiscard]] result<std::optional<std::size_t>> find_binding_domain(const plan& p,
                                                                     const std::vector<pool_domain>& domains);

// The binding domain is conservative and holds binding resources only, u8,
// contiguous, of invocation lifetime (invalid_binding_domain).
[[nodiscard]] result<void> check_binding_domain(const plan& p, const pool_domain& domain);

// The binding domain's wave layout has a projection and an id per member
// (incomplete_domain_layout); its capacity layout in `bucket` a projection
// per member and some bytes (incomplete_capacity_layout).
[[nodiscard]] result<void> check_binding_wave_layout(const pool_domain& domain, const wave_domain_layout& layout);
[[nodiscard]] result<void> check_binding_capacity_layout(const bucket_id& bucket, const pool_domain& domain,
                                                         const capacity_layout& layout);

// --- Buckets (bucket `b` of the plan; budget `j` of its budgets).

// The bucket's id (invalid_id, at its class).
[[nodiscard]] result<bucket_id> bucket_id_of(const bucket_spec& spec, std::size_t b);

[[nodiscard]] error zero_dimension(std::size_t b, std::size_t d);

// Every capacity dimension is at least 1 (number_out_of_range).
[[nodiscard]] inline result<void> check_capacity_dims(const bucket_spec& spec, std::size_t b) {
  for (std::size_t d = 0; d < spec.dims.size(); ++d)
    if (spec.dims[d] == 0) return zero_dimension(b, d);
  return {};
}

// A budget names a pool some resource uses (dangling_reference) and has min
// <= max (invalid_budget).
[[nodiscard]] result<void> check_budget(const workspace_budget& budget, std::size_t b, std::size_t j,
                                        bool pool_is_used);

// Budget j repeats a pool (duplicate_id); the bucket has no budget for
// `pool` (missing_budget).
[[nodiscard]] error duplicate_budget(const bucket_id& bucket, const workspace_budget& budget, std::size_t b,
                                     std::size_t j);
[[nodiscard]] error missing_budget(const bucket_id& bucket, const pool_id& pool, std::size_t b);

[[nodiscard]] error budget_exceeded(const pool_id& pool, std::uint64_t bytes, const workspace_budget& budget,
                                    std::size_t b, std::size_t j);

// A pool's arena of `bytes` lies within its budget j in bucket b
// (workspace_budget_exceeded).
[[nodiscard]] inline result<void> check_budget_fit(const pool_id& pool, std::uint64_t bytes,
                                                   const workspace_budget& budget, std::size_t b, std::size_t j) {
  if (bytes < budget.min || bytes > budget.max) return budget_exceeded(pool, bytes, budget, b, j);
  return {};
}

// Packing a member past u64 (size_overflow, at resource `index`).
[[nodiscard]] error arena_offset_overflow(const resource_id& resource, std::size_t index);

}  // namespace ferrum::detail
