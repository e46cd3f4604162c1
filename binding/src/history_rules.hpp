// history_rules — the rules of a plan's history resources (docs/plan-format.md,
// "History"), each with its error: code, detail and JSON pointer.
// validate_plan checks them on a plan it indexes, load_compiled_program on the
// plan it checks a program file against.
#pragma once

#include "ferrum/binding/plan.hpp"

#include <cstddef>
#include <span>

namespace ferrum::detail {

// The history pairs of `p`: lifetime `history` and `history_of` only in a v2
// plan (unknown_value at the lifetime, unknown_field at `history_of`), and
// `history_of` only on a history resource; each previous names a current
// (dangling_reference), a history resource that names none itself, once
// (invalid_history), with the same description (invalid_history, naming
// the field); each current has a previous, and neither is a binding
// resource (invalid_history); no block-compressed history image
// (invalid_image); a history pool holds history resources only
// (incompatible_pool_member), is not interval (invalid_liveness) and its
// memory is `device` (invalid_memory_class); no node writes a previous or
// reaches part of a history image, and a history buffer's current is
// written (`write`) by its first use (invalid_access, invalid_image_access).
// `uses`: the resource index of every node's resources, side by side in plan
// order (plan_index::all_uses), each resolved.
[[nodiscard]] result<void> check_history(const plan& p, std::span<const std::size_t> uses);

// Whether `r` holds what an earlier wave left: persistent, or a history
// pair's previous (the rules of reading first, image_rules.cpp).
[[nodiscard]] constexpr bool holds_earlier_contents(const resource_descriptor& r) noexcept {
  return r.lifetime == allocation_lifetime::persistent ||
         (r.lifetime == allocation_lifetime::history && r.history_of.has_value());
}

}  // namespace ferrum::detail
