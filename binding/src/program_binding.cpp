#include "ferrum/binding/program_binding.hpp"

#include "conservative_packing.hpp"
#include "ferrum/binding/demand.hpp"
#include "huge_pages.hpp"
#include "plan_index.hpp"
#include "plan_rules.hpp"
#include "program_binding_checks.hpp"
#include "sha256_writer.hpp"

#include <algorithm>

namespace ferrum {

const char* detail::binding_domain_violation(const resource_descriptor& r) noexcept {
  if (r.kind != allocation_kind::binding) return "a member is not a binding resource";
  if (r.usage != buffer_usage::binding) return "a member's usage is not binding";
  if (r.element != element_type::u8) return "a member's element is not u8";
  if (r.storage.view != storage_view::contiguous) return "a member's storage view is not contiguous";
  if (r.lifetime != allocation_lifetime::invocation) return "a member's lifetime is not invocation";
  return nullptr;
}

void detail::sort_by_offset(std::vector<binding_placement>& placements, const plan& p, const pool_domain& domain) {
  std::sort(placements.begin(), placements.end(), [&](const binding_placement& a, const binding_placement& b) {
    if (a.offset != b.offset) return a.offset < b.offset;
    const resource_id& a_id = p.resources[domain.members[a.member]].id;
    const resource_id& b_id = p.resources[domain.members[b.member]].id;
    if (a_id != b_id) return a_id < b_id;
    return a.member < b.member;
  });
}

result<void> detail::check_binding_cover(const std::vector<binding_placement>& by_offset, std::uint64_t physical_size,
                                         const std::string& bucket, const plan& p, const pool_domain& domain) {
  std::uint64_t expected = 0;
  for (const binding_placement& s : by_offset) {
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
  if (expected != physical_size) return inexact_cover(bucket, expected, physical_size);
  return {};
}

error detail::inexact_cover(const std::string& bucket, std::uint64_t end, std::uint64_t physical_size) {
  return make_error(errc::inexact_cover, "bucket " + bucket + ": slots end at " + std::to_string(end) +
                                             ", the arena has " + std::to_string(physical_size) + " bytes");
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

namespace {

// detail::sort_by_offset, mostly without the sort: a binding pool is
// conservative, so compile packed it in conservative_order (a counting sort
// by alignment) and offsets strictly increase along that order. Where they
// do, that order is the only one by offset and no comparison sort is needed;
// where they do not (a caller's own layouts), sort_by_offset decides.
void order_by_offset(std::vector<detail::binding_placement>& placements, const plan& p, const pool_domain& domain) {
  if (!std::all_of(placements.begin(), placements.end(),
                   [](const detail::binding_placement& s) { return is_valid_alignment(s.alignment); })) {
    detail::sort_by_offset(placements, p, domain);
    return;
  }
  const std::vector<std::size_t> order = detail::conservative_order(
      placements.size(), [&](std::size_t i) { return detail::alignment_class(placements[i].alignment); });
  for (std::size_t i = 1; i < order.size(); ++i)
    if (placements[order[i - 1]].offset >= placements[order[i]].offset) {
      detail::sort_by_offset(placements, p, domain);
      return;
    }
  std::vector<detail::binding_placement> sorted;
  detail::reserve_huge(sorted, placements.size());
  for (std::size_t i : order) sorted.push_back(placements[i]);
  placements = std::move(sorted);
}

}  // namespace

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

  auto found = detail::find_binding_domain(p, domains);
  if (!found) return found.error();
  std::map<bucket_id, program_binding_layout> out;
  if (!*found) return out;
  const std::size_t binding_domain = **found;

  const pool_domain& domain = domains[binding_domain];
  if (auto ok = detail::check_binding_domain(p, domain); !ok) return ok.error();
  const auto& base = layouts[binding_domain];
  if (!base) return make_error(errc::missing_domain_layout, "pool " + pool_id::quote(domain.pool.view()));
  if (auto ok = detail::check_binding_wave_layout(domain, *base); !ok) return ok.error();

  for (const auto& [bucket, bucket_layouts] : capacities) {
    const auto& capacity = bucket_layouts[binding_domain];
    if (!capacity) return make_error(errc::missing_capacity_layout, "bucket " + bucket.str());
    if (auto ok = detail::check_binding_capacity_layout(bucket, domain, *capacity); !ok) return ok.error();

    std::vector<detail::binding_placement> placements;
    reserve_huge(placements, domain.members.size());
    for (std::size_t j = 0; j < domain.members.size(); ++j) {
      const std::size_t r = domain.members[j];
      const resource_descriptor& descriptor = p.resources[r];
      const std::size_t node_index = index.owner(r);
      if (node_index == plan_index::none)
        return make_error(errc::missing_binding_node,
                          "resource " + resource_id::quote(descriptor.id.view()) + " names node " +
                              node_id::quote(descriptor.node.value_or(node_id{}).view()),
                          detail::resource_path(r) + "/node");
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

    order_by_offset(placements, p, domain);
    if (auto covered = detail::check_binding_cover(placements, capacity->physical_size_bytes, bucket.str(), p, domain);
        !covered)
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
      const detail::binding_placement& s = placements[i];
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
