// plan_hash_tails — the trailing parts of a v2 plan's hash
// (docs/canonical-encoding.md): declared accesses, memory classes, images,
// accesses to part of an image and history pairs, each written only where it
// or a later part is present, so that a plan without them hashes as before.
#pragma once

#include "ferrum/binding/plan.hpp"
#include "sha256_writer.hpp"

#include <boost/unordered/unordered_flat_set.hpp>

#include <cstddef>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace ferrum::detail {

// The pools holding binding resources.
[[nodiscard]] boost::unordered_flat_set<std::string_view, std::hash<std::string_view>> binding_pools(const plan& p);

// Writes a v2 plan's trailing parts after its `budget_bytes`; `pools` are
// its pool options in pool id order, `resources_by_id` its resources' indices
// in id order. invalid_access where a node's `access` is not one valid entry
// per resource (check_access).
[[nodiscard]] result<void> hash_v2_tails(sha256_writer& w, const plan& p, std::span<const std::size_t> resources_by_id,
                                         const std::vector<const pool_option*>& pools);

}  // namespace ferrum::detail
