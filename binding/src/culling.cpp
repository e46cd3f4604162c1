// culling.cpp — which nodes a compiled program culls (ferrum/binding/culling.hpp).
#include "culling.hpp"

#include "ferrum/binding/image_access.hpp"

#include <algorithm>

namespace ferrum {

std::string cull_reason::text() const {
  if (!culled) return "live";
  std::string out = "writes ";
  for (std::size_t i = 0; i < writes.size(); ++i) {
    if (i > 0) out += i + 1 == writes.size() ? " and " : ", ";
    out += writes[i].view();
  }
  return out + (writes.size() == 1 ? ", which nothing live reads" : ", none of which anything live reads");
}

namespace detail {

std::vector<cull_reason> derive_culling(const plan& p, const plan_index& index,
                                        const std::vector<pool_domain>& domains) {
  std::vector<cull_reason> culling(p.nodes.size());
  if (p.format != plan_format::v2 || !p.cull) return culling;
  // What is read after the wave, or by a live node later in it: the sinks
  // first (imported, host-touched, persistent, history, kept), then, walking
  // the nodes backwards, what each live node reads.
  std::vector<bool> read(p.resources.size(), false);
  for (const pool_domain& d : domains)
    for (std::size_t r : d.members) read[r] = d.memory == memory_class::imported || host_touches(d.memory) || d.history;
  for (std::size_t r = 0; r < p.resources.size(); ++r) {
    const resource_descriptor& desc = p.resources[r];
    read[r] = desc.kind != allocation_kind::binding &&
              (read[r] || desc.kept || desc.lifetime != allocation_lifetime::invocation);
  }
  for (std::size_t n = p.nodes.size(); n-- > 0;) {
    const plan_node& node = p.nodes[n];
    const auto uses = index.uses(n);
    bool writes = false;
    bool live = false;
    for (std::size_t k = 0; k < uses.size(); ++k) {
      const resource_access a = node.access_of(k);
      if (a == resource_access::present) live = true;
      if (!access_writes(a)) continue;
      writes = true;
      if (uses[k] != plan_index::none && read[uses[k]]) live = true;
    }
    // A node that declares no access at all is read-write throughout, as in
    // a v1 plan: nothing says what it outputs, so it is live.
    if (live || !writes || node.access.empty()) {
      for (std::size_t k = 0; k < uses.size(); ++k)
        if (uses[k] != plan_index::none && access_reads(node.access_of(k)) &&
            p.resources[uses[k]].kind != allocation_kind::binding)
          read[uses[k]] = true;
      continue;
    }
    cull_reason& reason = culling[n];
    reason.culled = true;
    for (std::size_t k = 0; k < uses.size(); ++k) {
      if (uses[k] == plan_index::none || !access_writes(node.access_of(k))) continue;
      const resource_descriptor& r = p.resources[uses[k]];
      if (r.kind == allocation_kind::binding) continue;
      if (std::find(reason.writes.begin(), reason.writes.end(), r.id) == reason.writes.end())
        reason.writes.push_back(r.id);
    }
  }
  return culling;
}

std::vector<bool> unused_resources(const plan& p, const plan_index& index, const std::vector<cull_reason>& culling,
                                   const std::vector<pool_domain>& domains) {
  if (std::none_of(culling.begin(), culling.end(), [](const cull_reason& c) { return c.culled; })) return {};
  std::vector<bool> used(p.resources.size(), false);
  std::vector<bool> used_live(p.resources.size(), false);
  for (std::size_t n = 0; n < p.nodes.size(); ++n)
    for (std::size_t r : index.uses(n)) {
      if (r == plan_index::none) continue;
      used[r] = true;
      used_live[r] = used_live[r] || !culling[n].culled;
    }
  std::vector<bool> unused(p.resources.size(), false);
  for (const pool_domain& d : domains) {
    if (d.images || d.history || d.memory != memory_class::device) continue;
    for (std::size_t r : d.members) {
      const resource_descriptor& desc = p.resources[r];
      unused[r] = used[r] && !used_live[r] && desc.kind != allocation_kind::binding && !desc.kept &&
                  desc.lifetime == allocation_lifetime::invocation;
    }
  }
  return unused;
}

plan without_culled_uses(const plan& p, const plan_index& index, const std::vector<cull_reason>& culling) {
  plan out = p;
  for (std::size_t n = 0; n < out.nodes.size(); ++n) {
    if (!culling[n].culled) continue;
    plan_node& node = out.nodes[n];
    plan_node kept{node.id, {}, node.binding, node.queue, node.after, {}, {}};
    const auto uses = index.uses(n);
    for (std::size_t k = 0; k < node.resources.size(); ++k) {
      if (uses[k] == plan_index::none || p.resources[uses[k]].kind != allocation_kind::binding) continue;
      kept.resources.push_back(node.resources[k]);
      if (!node.access.empty()) kept.access.push_back(node.access[k]);
      if (!node.ranges.empty()) kept.ranges.push_back(node.ranges[k]);
    }
    node = std::move(kept);
  }
  return out;
}

}  // namespace detail
}  // namespace ferrum
