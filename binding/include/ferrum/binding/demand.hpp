// ferrum/binding/demand.hpp — how many bytes a resource takes in a bucket.
//
//   ferrum::result<std::uint64_t> bytes = ferrum::resolve_demand(descriptor, {1, 64, 1});
//   // base + per_unit * 64, rounded up to the alignment
#pragma once

#include "ferrum/binding/plan.hpp"

#include <cstdint>
#include <optional>

namespace ferrum {

// True when `alignment` is a power of two (1, 2, 4, ...).
[[nodiscard]] constexpr bool is_valid_alignment(std::uint64_t alignment) noexcept {
  return alignment != 0 && (alignment & (alignment - 1)) == 0;
}

// a + b, a * b, and `value` rounded up to `alignment` (a power of two);
// nullopt on u64 overflow.
[[nodiscard]] std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) noexcept;
[[nodiscard]] std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) noexcept;
[[nodiscard]] std::optional<std::uint64_t> checked_align_up(std::uint64_t value, std::uint64_t alignment) noexcept;

// The capacity of `descriptor` in a bucket of dimensions `dims`: its demand,
// rounded up to its alignment. Errors: invalid_alignment, size_overflow,
// empty_demand, number_out_of_range (a dimension outside 0..2). The error's
// detail names the resource; its path is left to the caller.
[[nodiscard]] result<std::uint64_t> resolve_demand(const resource_descriptor& descriptor, const bucket_capacity& dims);

}  // namespace ferrum
