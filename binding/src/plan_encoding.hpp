// plan_encoding — the plan hash with the resources' id order given by the
// caller, for load_compiled_program, which has that order (checked) from the
// program file and so skips sorting a million ids.
#pragma once

#include "ferrum/binding/plan.hpp"

#include <cstddef>
#include <span>

namespace ferrum::detail {

// hash_plan, with `resources_by_id` the indices of p.resources in id order
// (every index once; the caller checks that).
[[nodiscard]] result<plan_hash> hash_plan(const plan& p, std::span<const std::size_t> resources_by_id);

}  // namespace ferrum::detail
