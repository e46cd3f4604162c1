// program_binding_checks — the pieces of compile_program_binding_layouts that
// load_compiled_program re-runs on a program file: the binding domain's
// member requirements, the slots' cover of the arena and the layout
// fingerprint.
#pragma once

#include "ferrum/binding/program_binding.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ferrum::detail {

// Why a binding domain member breaks the domain's requirements (kind, usage,
// element, view, lifetime), or nullptr.
[[nodiscard]] const char* binding_domain_violation(const resource_descriptor& r) noexcept;

// Where a binding descriptor landed in one bucket: small enough to sort by
// offset and by node for a million slots before any slot (with its two ids)
// is built.
struct binding_placement {
  std::uint64_t offset;
  std::uint64_t capacity;
  std::uint64_t alignment;
  std::size_t node_index;
  std::size_t member;  // index into the domain's members
};

// Sorts placements of `domain`'s members by offset. Slots sharing an offset
// (only in broken input) are checked in a fixed order, so that the same
// slots give the same error however they are listed: by resource id, which
// is member order for domains that derive_pool_domains made but not for a
// caller's own, then by member index (ids repeat only in a plan
// validate_plan refuses). std::sort alone leaves ties in an unspecified
// order.
void sort_by_offset(std::vector<binding_placement>& placements, const plan& p, const pool_domain& domain);

// Checks placements sorted by offset: non-empty (empty_slot), aligned
// (misaligned_slot), contiguous from 0 (non_contiguous_slots), covering
// exactly `physical_size` bytes (inexact_cover).
[[nodiscard]] result<void> check_binding_cover(const std::vector<binding_placement>& by_offset,
                                               std::uint64_t physical_size, const std::string& bucket, const plan& p,
                                               const pool_domain& domain);

// Slots of `bucket` that end at `end` in an arena of another size.
[[nodiscard]] error inexact_cover(const std::string& bucket, std::uint64_t end, std::uint64_t physical_size);

// The layout's fingerprint: SHA-256 of its canonical encoding
// (docs/canonical-encoding.md). Error: digest_failed.
[[nodiscard]] result<sha256_digest> binding_fingerprint(const bucket_id& bucket, const claim_identity& claim,
                                                        std::uint64_t physical_size,
                                                        const std::vector<binding_slot>& slots);

}  // namespace ferrum::detail
