// ferrum/binding/execution_binding.hpp — the checked binding of a compiled
// layout to a live lane's arena, and the per-node handles it hands out.
//
// The compiler records where each binding resource lives in a lane: its
// backing slices (compiled_bucket::lane). A lane pool binds the compiled
// layout against them once per lane, when it makes the
// lane's arena (cold; the arena never moves, so every wave on the lane uses
// that binding); only when plan, layout, lane and every slice agree does it
// get node handles.
//
//   auto slices = ferrum::record_backing_slices(plan, bucket, claim, capacity);  // once per bucket
//   auto exec = ferrum::execution_binding::bind(hash, node_count, layout, lane, slices);
//   if (!exec) return exec.error();                  // touches nothing
//   ferrum::node_binding n = *exec->node(0);         // cheap, copyable
//   std::span<std::byte> bytes = n.bytes();          // exactly its slot
#pragma once

#include "ferrum/binding/program_binding.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace ferrum {

// One lane of a bucket's pool: an arena whose address is stable across waves.
struct lane_binding_target {
  bucket_id bucket;
  std::uint32_t lane = 0;
  allocation_lifetime lifetime = allocation_lifetime::invocation;
  std::span<std::byte> arena;  // the lane's binding arena, mapped
};

// The pool's record of where one resource lives in a lane's arena.
struct backing_slice {
  resource_id resource;
  sha256_digest claim;  // the claim identity's digest
  std::optional<bucket_id> bucket;
  std::uint64_t offset = 0;
  std::uint64_t capacity = 0;
  std::uint64_t physical_size_bytes = 0;
  std::uint64_t alignment = 1;
  buffer_usage usage = buffer_usage::binding;
  element_type element = element_type::u8;
};

// Records the backing slices of a pool's arena in a bucket, from its capacity
// layout and the plan's descriptors (usage, element); in resource id order, as
// bind's lookup needs. Evidence is only what the plan says: a projection whose
// resource `p` lacks is refused (dangling_reference, naming it), never given
// a made-up usage and element. Made once per lane, on the cold path.
[[nodiscard]] result<std::vector<backing_slice>> record_backing_slices(const plan& p, const bucket_id& bucket,
                                                                       const claim_identity& claim,
                                                                       const capacity_layout& capacity);

class node_binding;

// A layout bound to a lane binding target. Holds the layout alive and refers
// to the target, which must outlive it (the lane pool owns its lanes). Node
// handles point into it: it must outlive them and stay in place while they
// are used (the wave owns all of them).
class execution_binding {
 public:
  // The original module's bind, plus checks of every slot, since a layout may be built
  // by hand. Errors: binding_plan_mismatch (no nodes, an empty layout, a
  // slot's node outside the plan, a layout compiled for another plan),
  // binding_lane_mismatch (lane of another bucket or lifetime, an arena
  // smaller than the layout), unordered_binding_slots (slots not in strictly
  // ascending node order), slot_outside_arena (a slot reaching past the
  // layout's physical size), missing_backing_slice, backing_slice_mismatch;
  // each names the slot, its node and resource. `slices` must be in resource
  // id order. O(slots log slices); allocates nothing unless it fails.
  [[nodiscard]] static result<execution_binding> bind(const plan_hash& hash, std::size_t node_count,
                                                      std::shared_ptr<const program_binding_layout> layout,
                                                      const lane_binding_target& lane,
                                                      std::span<const backing_slice> slices);

  [[nodiscard]] const plan_hash& plan() const noexcept { return plan_; }
  [[nodiscard]] const program_binding_layout& layout() const noexcept { return *layout_; }
  [[nodiscard]] const lane_binding_target& lane() const noexcept { return *lane_; }

  // The handle of node `node_index`; nullopt when the node owns no slot.
  [[nodiscard]] std::optional<node_binding> node(std::size_t node_index) const noexcept;

 private:
  execution_binding(const plan_hash& hash, std::shared_ptr<const program_binding_layout> layout,
                    const lane_binding_target& lane)
      : plan_(hash), layout_(std::move(layout)), lane_(&lane) {}

  plan_hash plan_;
  std::shared_ptr<const program_binding_layout> layout_;
  const lane_binding_target* lane_;
};

// A node's handle on exactly its own slot's bytes. Copying never allocates;
// nothing in it reaches another slot's bytes. Valid while its execution
// binding lives.
class node_binding {
 public:
  [[nodiscard]] std::size_t node_index() const noexcept { return slot_->node_index; }
  [[nodiscard]] const binding_slot& slot() const noexcept { return *slot_; }
  [[nodiscard]] std::span<std::byte> bytes() const noexcept { return bytes_; }
  [[nodiscard]] const plan_hash& plan() const noexcept { return execution_->plan(); }
  [[nodiscard]] const program_binding_layout& layout() const noexcept { return execution_->layout(); }
  [[nodiscard]] std::uint32_t lane() const noexcept { return execution_->lane().lane; }

 private:
  friend class execution_binding;
  node_binding(const execution_binding* execution, const binding_slot* slot, std::span<std::byte> bytes) noexcept
      : execution_(execution), slot_(slot), bytes_(bytes) {}

  const execution_binding* execution_;
  const binding_slot* slot_;
  std::span<std::byte> bytes_;
};

}  // namespace ferrum
