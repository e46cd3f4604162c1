#include "ferrum/binding/program_binding.hpp"

#include "ferrum/binding/demand.hpp"
#include "huge_pages.hpp"
#include "json_pointer.hpp"
#include "plan_index.hpp"
#include "program_binding_checks.hpp"
#include "sha256_writer.hpp"

#include <algorithm>

namespace ferrum {
namespace {

std::string resource_path(std::size_t index) { return "/resources/" + std::to_string(index); }

// Where a binding descriptor landed in one bucket: small enough to sort by
// offset and by node for a million slots before any slot (with its two ids)
// is built.
struct placement {
  std::uint64_t offset;
  std::uint64_t capacity;
  std::uint64_t alignment;
  std::size_t node_index;
  std::size_t member;  // index into the domain's members
};

// Checks placements sorted by offset: non-empty, aligned, contiguous from 0,
// covering exactly `physical_size` bytes.
result<void> check_cover(const std::vector<placement>& by_offset, std::uint64_t physical_size,
                         const std::string& bucket, const plan& p, const pool_domain& domain) {
  std::uint64_t expected = 0;
  for (const placement& s : by_offset) {
    auto who = [&] {
      return "bucket " + bucket + ", resource " + resource_id::quote(p.resources[domain.members[s.member]].id.view());
    };
    if (s.capacity == 0) return make_error(errc::empty_slot, who());
    if (s.alignment == 0 || s.offset % s.alignment != 0 || s.capacity % s.alignment != 0)
      return make_error(errc::misaligned_slot, who() + ": offset " + std::to_string(s.offset) + ", capacity " +
                                                   std::to_string(s.capacity) + ", alignment " +
                                                   std::to_string(s.alignment));
    if (s.offset != expected)
      return make_error(errc::non_contiguous_slots,
                        who() + ": offset " + std::to_string(s.offset) + ", expected " + std::to_string(expected));
    auto next = checked_add(expected, s.capacity);
    if (!next) return make_error(errc::size_overflow, who() + ": the binding arena's size");
    expected = *next;
  }
  if (expected != physical_size)
    return make_error(errc::inexact_cover, "bucket " + bucket + ": slots end at " + std::to_string(expected) +
                                               ", the arena has " + std::to_string(physical_size) + " bytes");
  return {};
}

}  // namespace

const char* detail::binding_domain_violation(const resource_descriptor& r) noexcept {
  if (r.kind != allocation_kind::binding) return "a member is not a binding resource";
  if (r.usage != buffer_usage::binding) return "a member's usage is not binding";
  if (r.element != element_type::u8) return "a member's element is not u8";
  if (r.storage.view != storage_view::contiguous) return "a member's storage view is not contiguous";
  if (r.lifetime != allocation_lifetime::invocation) return "a member's lifetime is not invocation";
  return nullptr;
}

result<sha256_digest> detail::binding_fingerprint(const bucket_id& bucket, const claim_identity& claim,
                                                  std::uint64_t physical_size, const std::vector<binding_slot>& slots) {
  detail::sha256_writer w;
  w.str("ferrum.program-binding-layout.v1");
  w.str(bucket.str());
  for (std::uint8_t b : claim.digest().bytes) w.u8(b);
  w.u64(physical_size);
  w.u64(slots.size());
  for (const binding_slot& s : slots) {
    w.u64(s.node_index);
    w.str(s.node.view());
    w.str(s.resource.view());
    w.u64(s.offset);
    w.u64(s.capacity);
    w.u64(s.alignment);
  }
  return w.finish();
}

const binding_slot* program_binding_layout::slot_for_node(std::size_t node_index) const noexcept {
  auto it = std::lower_bound(slots_.begin(), slots_.end(), node_index,
                             [](const binding_slot& s, std::size_t i) { return s.node_index < i; });
  return it != slots_.end() && it->node_index == node_index ? &*it : nullptr;
}

result<std::map<bucket_id, program_binding_layout>> compile_program_binding_layouts(
    const plan& p, const plan_hash& hash, const std::vector<pool_domain>& domains,
    const std::vector<std::optional<wave_domain_layout>>& layouts, const bucket_capacity_layouts& capacities) {
  return detail::compile_program_binding_layouts(p, hash, domains, layouts, capacities, detail::plan_index(p));
}

result<std::map<bucket_id, program_binding_layout>> detail::compile_program_binding_layouts(
    const plan& p, const plan_hash& hash, const std::vector<pool_domain>& domains,
    const std::vector<std::optional<wave_domain_layout>>& layouts, const bucket_capacity_layouts& capacities,
    const plan_index& index) {
  if (domains.size() != layouts.size() || std::any_of(capacities.begin(), capacities.end(),
                                                      [&](const auto& c) { return c.second.size() != domains.size(); }))
    return make_error(errc::inconsistent_domain_layouts,
                      std::to_string(domains.size()) + " domains, " + std::to_string(layouts.size()) + " wave layouts");

  std::optional<std::size_t> binding_domain;
  for (std::size_t d = 0; d < domains.size(); ++d) {
    const auto& members = domains[d].members;
    if (std::none_of(members.begin(), members.end(),
                     [&](std::size_t r) { return p.resources[r].kind == allocation_kind::binding; }))
      continue;
    if (binding_domain)
      return make_error(errc::multiple_binding_domains, "pools " +
                                                            pool_id::quote(domains[*binding_domain].pool.view()) +
                                                            " and " + pool_id::quote(domains[d].pool.view()));
    binding_domain = d;
  }
  std::map<bucket_id, program_binding_layout> out;
  if (!binding_domain) return out;

  const pool_domain& domain = domains[*binding_domain];
  if (domain.liveness != liveness_mode::conservative)
    return make_error(errc::invalid_binding_domain,
                      "pool " + pool_id::quote(domain.pool.view()) + " is not conservative",
                      "/pools/" + json_pointer_token(domain.pool.view()) + "/liveness");
  for (std::size_t r : domain.members)
    if (const char* why = detail::binding_domain_violation(p.resources[r]))
      return make_error(errc::invalid_binding_domain, "pool " + pool_id::quote(domain.pool.view()) + ": " + why,
                        resource_path(r));

  const auto& base = layouts[*binding_domain];
  if (!base) return make_error(errc::missing_domain_layout, "pool " + pool_id::quote(domain.pool.view()));
  if (base->projection_count != domain.members.size() || base->claim.ids().size() != domain.members.size())
    return make_error(errc::incomplete_domain_layout, "pool " + pool_id::quote(domain.pool.view()) + ": " +
                                                          std::to_string(domain.members.size()) + " descriptors, " +
                                                          std::to_string(base->projection_count) + " projections");

  for (const auto& [bucket, bucket_layouts] : capacities) {
    const auto& capacity = bucket_layouts[*binding_domain];
    if (!capacity) return make_error(errc::missing_capacity_layout, "bucket " + bucket.str());
    if (capacity->projections.size() != domain.members.size() || capacity->physical_size_bytes == 0)
      return make_error(errc::incomplete_capacity_layout,
                        "bucket " + bucket.str() + ": " + std::to_string(capacity->projections.size()) +
                            " projections for " + std::to_string(domain.members.size()) + " descriptors, " +
                            std::to_string(capacity->physical_size_bytes) + " bytes");

    std::vector<placement> placements;
    reserve_huge(placements, domain.members.size());
    for (std::size_t j = 0; j < domain.members.size(); ++j) {
      const std::size_t r = domain.members[j];
      const resource_descriptor& descriptor = p.resources[r];
      const std::size_t node_index = index.owner(r);
      if (node_index == plan_index::none)
        return make_error(errc::missing_binding_node,
                          "resource " + resource_id::quote(descriptor.id.view()) + " names node " +
                              node_id::quote(descriptor.node.value_or(node_id{}).view()),
                          resource_path(r) + "/node");
      const plan_node& node = p.nodes[node_index];
      if (node.binding != descriptor.id ||
          std::find(node.resources.begin(), node.resources.end(), descriptor.id) == node.resources.end())
        return make_error(errc::binding_not_owned,
                          "node " + node_id::quote(node.id.view()) + " does not own resource " +
                              resource_id::quote(descriptor.id.view()),
                          "/nodes/" + std::to_string(node_index));
      const projection& proj = capacity->projections[j];
      placements.push_back({proj.offset, proj.capacity, descriptor.alignment, node_index, j});
    }

    // Slots sharing an offset (only in broken input) are checked in a fixed
    // order, so that the same slots give the same error however they are
    // listed: by resource id, which is member order for domains that
    // derive_pool_domains made but not for a caller's own, then by member
    // index (ids repeat only in a plan validate_plan refuses). std::sort
    // alone leaves ties in an unspecified order.
    std::sort(placements.begin(), placements.end(), [&](const placement& a, const placement& b) {
      if (a.offset != b.offset) return a.offset < b.offset;
      const resource_id& a_id = p.resources[domain.members[a.member]].id;
      const resource_id& b_id = p.resources[domain.members[b.member]].id;
      if (a_id != b_id) return a_id < b_id;
      return a.member < b.member;
    });
    if (auto covered = check_cover(placements, capacity->physical_size_bytes, bucket.str(), p, domain); !covered)
      return covered.error();
    // Node indices are below p.nodes.size(): place each slot at its node
    // (O(n)); a node met twice owns two slots.
    std::vector<std::size_t> at_node(p.nodes.size(), plan_index::none);
    for (std::size_t i = 0; i < placements.size(); ++i) {
      std::size_t& seen = at_node[placements[i].node_index];
      if (seen != plan_index::none)
        return make_error(errc::duplicate_slot_owner,
                          "node " + node_id::quote(p.nodes[placements[i].node_index].id.view()) + " owns " +
                              resource_id::quote(p.resources[domain.members[placements[seen].member]].id.view()) +
                              " and " + resource_id::quote(p.resources[domain.members[placements[i].member]].id.view()),
                          "/nodes/" + std::to_string(placements[i].node_index));
      seen = i;
    }
    std::vector<binding_slot> slots;
    reserve_huge(slots, placements.size());
    for (std::size_t i : at_node) {
      if (i == plan_index::none) continue;
      const placement& s = placements[i];
      slots.push_back({s.node_index, p.nodes[s.node_index].id, p.resources[domain.members[s.member]].id, s.offset,
                       s.capacity, s.alignment});
    }

    auto digest = detail::binding_fingerprint(bucket, base->claim, capacity->physical_size_bytes, slots);
    if (!digest) return digest.error();
    out.emplace(bucket, program_binding_layout(bucket, base->claim, capacity->physical_size_bytes, std::move(slots),
                                               *digest, hash));
  }
  return out;
}

}  // namespace ferrum
