// culling.hpp (private) — which nodes a compiled program culls
// (ferrum/binding/culling.hpp), and the plan its lane recipes are made from.
#pragma once

#include "ferrum/binding/culling.hpp"
#include "ferrum/binding/pool_domain.hpp"
#include "plan_index.hpp"

#include <vector>

namespace ferrum::detail {

// Per node of `p` (a checked plan indexed by `index`, `domains` its pools):
// whether it is culled and why. All live for a v1 plan or `p.cull` false.
// O(uses).
[[nodiscard]] std::vector<cull_reason> derive_culling(const plan& p, const plan_index& index,
                                                      const std::vector<pool_domain>& domains);

// Per resource of `p`: whether it takes no bytes, because only culled nodes
// use it — a buffer of device memory, of lifetime invocation, not a binding
// resource nor kept (what the host, the engine or a later wave sees keeps
// its place). Empty where no node is culled. O(uses).
[[nodiscard]] std::vector<bool> unused_resources(const plan& p, const plan_index& index,
                                                 const std::vector<cull_reason>& culling,
                                                 const std::vector<pool_domain>& domains);

// `p` with each culled node's uses dropped but those of binding resources:
// what the lane recipes (uses, images, transitions, barriers) are made from.
[[nodiscard]] plan without_culled_uses(const plan& p, const plan_index& index, const std::vector<cull_reason>& culling);

}  // namespace ferrum::detail
