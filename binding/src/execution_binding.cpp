#include "ferrum/binding/execution_binding.hpp"

#include <algorithm>

namespace ferrum {

result<std::vector<backing_slice>> record_backing_slices(const plan& p, const bucket_id& bucket,
                                                         const claim_identity& claim, const capacity_layout& capacity) {
  std::vector<const resource_descriptor*> by_id;
  by_id.reserve(p.resources.size());
  for (const resource_descriptor& r : p.resources) by_id.push_back(&r);
  std::sort(by_id.begin(), by_id.end(), [](const auto* a, const auto* b) { return a->id < b->id; });

  std::vector<backing_slice> slices;
  slices.reserve(capacity.projections.size());
  for (const projection& proj : capacity.projections) {
    auto it = std::lower_bound(by_id.begin(), by_id.end(), proj.resource,
                               [](const auto* r, const resource_id& id) { return r->id < id; });
    if (it == by_id.end() || (*it)->id != proj.resource)
      return make_error(errc::dangling_reference, "bucket " + quote_text(bucket.str()) +
                                                      ": the capacity layout places " +
                                                      quote_text(proj.resource.str()) + ", which the plan lacks");
    slices.push_back({proj.resource, claim.digest(), bucket, proj.offset, proj.capacity, capacity.physical_size_bytes,
                      proj.alignment, (*it)->usage, (*it)->element});
  }
  std::sort(slices.begin(), slices.end(), [](const auto& a, const auto& b) { return a.resource < b.resource; });
  return slices;
}

result<execution_binding> execution_binding::bind(const plan_hash& hash, std::size_t node_count,
                                                  std::shared_ptr<const program_binding_layout> layout,
                                                  const lane_binding_target& lane,
                                                  std::span<const backing_slice> slices) {
  if (!layout) return make_error(errc::binding_plan_mismatch, "no layout");
  const std::vector<binding_slot>& slots = layout->slots();
  if (node_count == 0 || slots.empty())
    return make_error(errc::binding_plan_mismatch,
                      node_count == 0 ? "the plan has no nodes" : "the layout has no slots");
  if (layout->plan() != hash)
    return make_error(errc::binding_plan_mismatch,
                      "layout compiled for plan " + layout->plan().str() + ", bound for " + hash.str());
  if (lane.lifetime != allocation_lifetime::invocation)
    return make_error(errc::binding_lane_mismatch, "lane " + std::to_string(lane.lane) + " is not invocation-lived");
  if (lane.bucket != layout->bucket())
    return make_error(errc::binding_lane_mismatch,
                      "lane of bucket " + lane.bucket.str() + " for a layout of bucket " + layout->bucket().str());
  const std::uint64_t arena_bytes = layout->physical_size_bytes();
  if (lane.arena.size() < arena_bytes)
    return make_error(errc::binding_lane_mismatch, "lane arena of " + std::to_string(lane.arena.size()) +
                                                       " bytes for a layout of " + std::to_string(arena_bytes));

  // The layout's constructor is public, so nothing about its slots is taken
  // on trust: node() hands out subspans of the arena and slot_for_node
  // searches by node index, so every slot is checked here, not just the
  // compiler's output. Strings are built on the error paths only.
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const binding_slot& slot = slots[i];
    auto where = [&] {
      return "slot " + std::to_string(i) + " (node " + std::to_string(slot.node_index) + ", resource " +
             resource_id::quote(slot.resource.view()) + ")";
    };
    if (slot.node_index >= node_count)
      return make_error(errc::binding_plan_mismatch,
                        where() + " in a plan of " + std::to_string(node_count) + " nodes");
    if (i > 0 && slot.node_index <= slots[i - 1].node_index)
      return make_error(errc::unordered_binding_slots,
                        where() + " follows a slot of node " + std::to_string(slots[i - 1].node_index));
    // Written as offset <= size and capacity <= size - offset so that no sum
    // can wrap past the arena.
    if (slot.offset > arena_bytes || slot.capacity > arena_bytes - slot.offset)
      return make_error(errc::slot_outside_arena, where() + ": offset " + std::to_string(slot.offset) + ", capacity " +
                                                      std::to_string(slot.capacity) + " in an arena of " +
                                                      std::to_string(arena_bytes) + " bytes");

    auto it = std::lower_bound(slices.begin(), slices.end(), slot.resource,
                               [](const backing_slice& s, const resource_id& id) { return s.resource < id; });
    if (it == slices.end() || it->resource != slot.resource) return make_error(errc::missing_backing_slice, where());
    const backing_slice& slice = *it;
    if (slice.claim != layout->claim().digest() || slice.bucket != layout->bucket() || slice.offset != slot.offset ||
        slice.capacity != slot.capacity || slice.physical_size_bytes != arena_bytes ||
        slice.alignment != slot.alignment || slice.usage != buffer_usage::binding || slice.element != element_type::u8)
      return make_error(errc::backing_slice_mismatch, where());
  }
  return execution_binding(hash, std::move(layout), lane);
}

std::optional<node_binding> execution_binding::node(std::size_t node_index) const noexcept {
  const binding_slot* slot = layout_->slot_for_node(node_index);
  if (!slot) return std::nullopt;
  // bind checked that the arena holds the whole layout and every slot lies
  // inside it.
  return node_binding(
      this, slot,
      lane_->arena.subspan(static_cast<std::size_t>(slot->offset), static_cast<std::size_t>(slot->capacity)));
}

}  // namespace ferrum
