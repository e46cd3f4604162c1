// conservative_packing — a pool's layout with no aliasing (docs/design.md,
// "Cold path: compile"): members by decreasing alignment, ties in member (id)
// order, each at the next multiple of its alignment. compile_capacity_layout
// packs a pool so; load_compiled_program confirms a file's offsets are that
// packing.
#pragma once

#include "ferrum/binding/capacity_layout.hpp"
#include "ferrum/binding/demand.hpp"
#include "plan_rules.hpp"

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ferrum::detail {

// 63 - log2 `alignment` (a power of two): smaller for larger alignments.
[[nodiscard]] inline std::size_t alignment_class(std::uint64_t alignment) noexcept {
  return static_cast<std::size_t>(63 - std::countr_zero(alignment));
}

// The indices 0..count-1 in packing order, `class_of(i)` member i's
// alignment class. Alignments are powers of two, so a counting sort by their
// exponent orders a million members in two passes; it is stable, and
// members are in id order.
template <class ClassOf>
[[nodiscard]] std::vector<std::size_t> conservative_order(std::size_t count, ClassOf class_of) {
  std::array<std::size_t, 65> starts{};
  for (std::size_t m = 0; m < count; ++m) ++starts[class_of(m) + 1];
  for (std::size_t i = 1; i < starts.size(); ++i) starts[i] += starts[i - 1];
  std::vector<std::size_t> order(count);
  for (std::size_t m = 0; m < count; ++m) order[starts[class_of(m)]++] = m;
  return order;
}

// Packs `projections` (a domain's, `members` its resource indices) in
// `order`: `place(m, offset)` for each member; the end of the last.
// Error: size_overflow, at the member that would end past u64.
template <class Place>
[[nodiscard]] result<std::uint64_t> pack_in_order(const std::vector<projection>& projections,
                                                  const std::vector<std::size_t>& order,
                                                  const std::vector<std::size_t>& members, Place place) {
  std::uint64_t end = 0;
  for (std::size_t m : order) {
    const projection& proj = projections[m];
    const auto offset = checked_align_up(end, proj.alignment);
    const auto next = offset ? checked_add(*offset, proj.capacity) : std::nullopt;
    if (!next) return arena_offset_overflow(proj.resource, members[m]);
    place(m, *offset);
    end = *next;
  }
  return end;
}

}  // namespace ferrum::detail
