// plan_encoding — the plan hash with the resources' id order given by the
// caller, for load_compiled_program, which has that order (checked) from the
// program file and so skips sorting a million ids; and the form of a storage
// contract digest, which both the plan checks and the program file's check.
#pragma once

#include "ferrum/binding/plan.hpp"

#include <algorithm>
#include <cstddef>
#include <span>
#include <string_view>

namespace ferrum::detail {

// hash_plan, with `resources_by_id` the indices of p.resources in id order
// (every index once; the caller checks that).
[[nodiscard]] result<plan_hash> hash_plan(const plan& p, std::span<const std::size_t> resources_by_id);

// A storage contract digest: 64 lowercase hex digits.
[[nodiscard]] inline bool is_contract_digest(std::string_view text) noexcept {
  return text.size() == 64 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace ferrum::detail
