#include "ferrum/binding/program_binding.hpp"

#include "ferrum/binding/demand.hpp"
#include "sha256_writer.hpp"

#include <algorithm>

namespace ferrum {
namespace {

std::string resource_path(std::size_t index) { return "/resources/" + std::to_string(index); }

// Why a binding domain member breaks the domain's requirements, or nullptr.
const char* binding_domain_violation(const resource_descriptor& r, liveness_mode liveness) {
  if (liveness != liveness_mode::conservative) return "the pool is not conservative";
  if (r.kind != allocation_kind::binding) return "a member is not a binding resource";
  if (r.usage != buffer_usage::binding) return "a member's usage is not binding";
  if (r.element != element_type::u8) return "a member's element is not u8";
  if (r.storage.view != storage_view::contiguous) return "a member's storage view is not contiguous";
  if (r.lifetime != allocation_lifetime::invocation) return "a member's lifetime is not invocation";
  return nullptr;
}

result<sha256_digest> fingerprint(const bucket_id& bucket, const claim_identity& claim, std::uint64_t physical_size,
                                  const std::vector<binding_slot>& slots) {
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

// Checks the slots of one bucket, sorted by offset: non-empty, aligned,
// contiguous from 0, covering exactly `physical_size` bytes.
result<void> check_cover(const std::vector<binding_slot>& by_offset, std::uint64_t physical_size, const std::string& bucket) {
  std::uint64_t expected = 0;
  for (const binding_slot& s : by_offset) {
    const std::string who = "bucket " + bucket + ", resource " + resource_id::quote(s.resource.view());
    if (s.capacity == 0) return make_error(errc::empty_slot, who);
    if (s.alignment == 0 || s.offset % s.alignment != 0 || s.capacity % s.alignment != 0)
      return make_error(errc::misaligned_slot, who + ": offset " + std::to_string(s.offset) + ", capacity " +
                                                   std::to_string(s.capacity) + ", alignment " + std::to_string(s.alignment));
    if (s.offset != expected)
      return make_error(errc::non_contiguous_slots,
                        who + ": offset " + std::to_string(s.offset) + ", expected " + std::to_string(expected));
    auto next = checked_add(expected, s.capacity);
    if (!next) return make_error(errc::size_overflow, who + ": the binding arena's size");
    expected = *next;
  }
  if (expected != physical_size)
    return make_error(errc::inexact_cover, "bucket " + bucket + ": slots end at " + std::to_string(expected) +
                                               ", the arena has " + std::to_string(physical_size) + " bytes");
  return {};
}

}  // namespace

const binding_slot* program_binding_layout::slot_for_node(std::size_t node_index) const noexcept {
  auto it = std::lower_bound(slots_.begin(), slots_.end(), node_index,
                             [](const binding_slot& s, std::size_t i) { return s.node_index < i; });
  return it != slots_.end() && it->node_index == node_index ? &*it : nullptr;
}

result<std::map<bucket_id, program_binding_layout>> compile_program_binding_layouts(
    const plan& p, const plan_hash& hash, const std::vector<pool_domain>& domains,
    const std::vector<std::optional<wave_domain_layout>>& layouts, const bucket_capacity_layouts& capacities) {
  if (domains.size() != layouts.size() ||
      std::any_of(capacities.begin(), capacities.end(), [&](const auto& c) { return c.second.size() != domains.size(); }))
    return make_error(errc::inconsistent_domain_layouts,
                      std::to_string(domains.size()) + " domains, " + std::to_string(layouts.size()) + " wave layouts");

  std::optional<std::size_t> binding_domain;
  for (std::size_t d = 0; d < domains.size(); ++d) {
    const auto& members = domains[d].members;
    if (std::none_of(members.begin(), members.end(),
                     [&](std::size_t r) { return p.resources[r].kind == allocation_kind::binding; }))
      continue;
    if (binding_domain)
      return make_error(errc::multiple_binding_domains, "pools " + pool_id::quote(domains[*binding_domain].pool.view()) +
                                                            " and " + pool_id::quote(domains[d].pool.view()));
    binding_domain = d;
  }
  std::map<bucket_id, program_binding_layout> out;
  if (!binding_domain) return out;

  const pool_domain& domain = domains[*binding_domain];
  for (std::size_t r : domain.members)
    if (const char* why = binding_domain_violation(p.resources[r], domain.liveness))
      return make_error(errc::invalid_binding_domain, "pool " + pool_id::quote(domain.pool.view()) + ": " + why,
                        resource_path(r));

  const auto& base = layouts[*binding_domain];
  if (!base) return make_error(errc::missing_domain_layout, "pool " + pool_id::quote(domain.pool.view()));
  if (base->projection_count != domain.members.size() || base->claim.ids().size() != domain.members.size())
    return make_error(errc::incomplete_domain_layout,
                      "pool " + pool_id::quote(domain.pool.view()) + ": " + std::to_string(domain.members.size()) +
                          " descriptors, " + std::to_string(base->projection_count) + " projections");

  // Node lookup by id, built once: O(n log n) instead of the seed's linear
  // search per descriptor.
  std::vector<std::size_t> nodes_by_id(p.nodes.size());
  for (std::size_t i = 0; i < nodes_by_id.size(); ++i) nodes_by_id[i] = i;
  std::sort(nodes_by_id.begin(), nodes_by_id.end(),
            [&](std::size_t a, std::size_t b) { return p.nodes[a].id < p.nodes[b].id; });
  auto find_node = [&](const node_id& id) -> std::optional<std::size_t> {
    auto it = std::lower_bound(nodes_by_id.begin(), nodes_by_id.end(), id,
                               [&](std::size_t i, const node_id& key) { return p.nodes[i].id < key; });
    if (it == nodes_by_id.end() || p.nodes[*it].id != id) return std::nullopt;
    return *it;
  };

  for (const auto& [bucket, bucket_layouts] : capacities) {
    const auto& capacity = bucket_layouts[*binding_domain];
    if (!capacity) return make_error(errc::missing_capacity_layout, "bucket " + bucket.str());
    if (capacity->projections.size() != domain.members.size() || capacity->physical_size_bytes == 0)
      return make_error(errc::incomplete_capacity_layout,
                        "bucket " + bucket.str() + ": " + std::to_string(capacity->projections.size()) +
                            " projections for " + std::to_string(domain.members.size()) + " descriptors, " +
                            std::to_string(capacity->physical_size_bytes) + " bytes");

    std::vector<binding_slot> slots;
    slots.reserve(domain.members.size());
    for (std::size_t j = 0; j < domain.members.size(); ++j) {
      const std::size_t r = domain.members[j];
      const resource_descriptor& descriptor = p.resources[r];
      const node_id owner = descriptor.node.value_or(node_id{});
      auto node_index = find_node(owner);
      if (!node_index)
        return make_error(errc::missing_binding_node, "resource " + resource_id::quote(descriptor.id.view()) +
                                                          " names node " + node_id::quote(owner.view()),
                          resource_path(r) + "/node");
      const plan_node& node = p.nodes[*node_index];
      if (node.binding != descriptor.id ||
          std::find(node.resources.begin(), node.resources.end(), descriptor.id) == node.resources.end())
        return make_error(errc::binding_not_owned, "node " + node_id::quote(node.id.view()) +
                                                       " does not own resource " +
                                                       resource_id::quote(descriptor.id.view()),
                          "/nodes/" + std::to_string(*node_index));
      const projection& proj = capacity->projections[j];
      slots.push_back({*node_index, node.id, descriptor.id, proj.offset, proj.capacity, descriptor.alignment});
    }

    std::sort(slots.begin(), slots.end(), [](const auto& a, const auto& b) { return a.offset < b.offset; });
    if (auto covered = check_cover(slots, capacity->physical_size_bytes, bucket.str()); !covered)
      return covered.error();
    std::sort(slots.begin(), slots.end(), [](const auto& a, const auto& b) { return a.node_index < b.node_index; });
    auto duplicate = std::adjacent_find(slots.begin(), slots.end(),
                                        [](const auto& a, const auto& b) { return a.node_index == b.node_index; });
    if (duplicate != slots.end())
      return make_error(errc::duplicate_slot_owner, "node " + node_id::quote(duplicate->node.view()) + " owns " +
                                                        resource_id::quote(duplicate->resource.view()) + " and " +
                                                        resource_id::quote((duplicate + 1)->resource.view()),
                        "/nodes/" + std::to_string(duplicate->node_index));

    auto digest = fingerprint(bucket, base->claim, capacity->physical_size_bytes, slots);
    if (!digest) return digest.error();
    out.emplace(bucket, program_binding_layout(bucket, base->claim, capacity->physical_size_bytes, std::move(slots),
                                               *digest, hash));
  }
  return out;
}

}  // namespace ferrum
