// ferrum/binding/program_binding.hpp — the program binding layout of a bucket:
// one slot per binding node, at a fixed offset of one lane-stable arena.
//
// A layout covers its arena exactly (slots sorted by offset start at 0, are
// contiguous and end at the physical size), every slot is non-empty and
// aligned, every slot has exactly one owning node, and the layout is
// fingerprinted: SHA-256 over a canonical encoding of its material (the
// bucket id, claim identity, physical size and slots; docs/canonical-encoding.md).
//
//   auto layouts = ferrum::compile_program_binding_layouts(plan, domains, wave_layouts, capacities);
//   const ferrum::binding_slot* slot = layouts->at(bucket).slot_for_node(0);
#pragma once

#include "ferrum/binding/capacity_layout.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace ferrum {

// A node's slot in the binding arena.
struct binding_slot {
  std::size_t node_index = 0;
  node_id node;
  resource_id resource;
  std::uint64_t offset = 0;
  std::uint64_t capacity = 0;
  std::uint64_t alignment = 1;
  friend bool operator==(const binding_slot&, const binding_slot&) = default;
};

class program_binding_layout {
 public:
  program_binding_layout(bucket_id bucket, claim_identity claim, std::uint64_t physical_size_bytes,
                         std::vector<binding_slot> slots, sha256_digest fingerprint, plan_hash plan)
      : bucket_(std::move(bucket)),
        claim_(std::move(claim)),
        physical_size_bytes_(physical_size_bytes),
        slots_(std::move(slots)),
        fingerprint_(fingerprint),
        plan_(plan) {}

  [[nodiscard]] const bucket_id& bucket() const noexcept { return bucket_; }
  [[nodiscard]] const claim_identity& claim() const noexcept { return claim_; }
  [[nodiscard]] std::uint64_t physical_size_bytes() const noexcept { return physical_size_bytes_; }
  // The slots, in node index order.
  [[nodiscard]] const std::vector<binding_slot>& slots() const noexcept { return slots_; }
  [[nodiscard]] const sha256_digest& fingerprint() const noexcept { return fingerprint_; }
  // The plan this layout was compiled from; not part of the fingerprint (the
  // same layout compiled from two plans has one fingerprint).
  [[nodiscard]] const plan_hash& plan() const noexcept { return plan_; }

  // The slot of node `node_index`, or nullptr when the node owns none.
  [[nodiscard]] const binding_slot* slot_for_node(std::size_t node_index) const noexcept;

  friend bool operator==(const program_binding_layout&, const program_binding_layout&) = default;

 private:
  bucket_id bucket_;
  claim_identity claim_;
  std::uint64_t physical_size_bytes_;
  std::vector<binding_slot> slots_;
  sha256_digest fingerprint_;
  plan_hash plan_;
};

// Per bucket: each pool's capacity layout, index-aligned with the domains
// (nullopt: the pool has none in that bucket).
using bucket_capacity_layouts = std::map<bucket_id, std::vector<std::optional<capacity_layout>>>;

// The original module's compile_program_binding_layouts: finds the program's binding
// domain (the pool holding binding resources) and, per bucket, builds and
// checks its layout. No binding domain gives an empty map. Errors:
// inconsistent_domain_layouts, multiple_binding_domains,
// invalid_binding_domain, missing_domain_layout, incomplete_domain_layout,
// missing_capacity_layout, incomplete_capacity_layout, missing_binding_node,
// binding_not_owned, empty_slot, misaligned_slot, non_contiguous_slots,
// size_overflow, inexact_cover, duplicate_slot_owner, digest_failed.
// O(n log n) in nodes + binding resources.
[[nodiscard]] result<std::map<bucket_id, program_binding_layout>> compile_program_binding_layouts(
    const plan& p, const plan_hash& hash, const std::vector<pool_domain>& domains,
    const std::vector<std::optional<wave_domain_layout>>& layouts, const bucket_capacity_layouts& capacities);

}  // namespace ferrum
