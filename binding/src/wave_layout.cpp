#include "ferrum/binding/wave_layout.hpp"

#include "sha256_writer.hpp"

#include <algorithm>

namespace ferrum {

result<claim_identity> claim_identity::make(std::vector<resource_id> ids) {
  detail::sha256_writer w;
  w.str("ferrum.claim-identity.v1");
  w.u64(ids.size());
  for (const resource_id& id : ids) w.str(id.view());
  auto digest = w.finish();
  if (!digest) return digest.error();
  claim_identity claim;
  claim.ids_ = std::make_shared<const std::vector<resource_id>>(std::move(ids));
  claim.digest_ = *digest;
  return claim;
}

const std::vector<resource_id>& claim_identity::ids() const noexcept {
  static const std::vector<resource_id> none;
  return ids_ ? *ids_ : none;
}

std::vector<live_interval> live_intervals(const plan& p) {
  std::vector<std::pair<const resource_id*, std::size_t>> by_id;
  by_id.reserve(p.resources.size());
  for (std::size_t i = 0; i < p.resources.size(); ++i) by_id.emplace_back(&p.resources[i].id, i);
  std::sort(by_id.begin(), by_id.end(), [](const auto& a, const auto& b) { return *a.first < *b.first; });
  auto index_of = [&](const resource_id& id) -> std::optional<std::size_t> {
    auto it = std::lower_bound(by_id.begin(), by_id.end(), id, [](const auto& e, const resource_id& k) { return *e.first < k; });
    if (it == by_id.end() || *it->first != id) return std::nullopt;
    return it->second;
  };

  constexpr std::size_t unset = static_cast<std::size_t>(-1);
  std::vector<live_interval> intervals(p.resources.size(), live_interval{unset, 0});
  auto use = [&](const resource_id& id, std::size_t node) {
    auto r = index_of(id);
    if (!r) return;
    live_interval& interval = intervals[*r];
    if (interval.first == unset) interval.first = node;
    interval.last = node;
  };
  // Nodes are visited in plan order, so the first use is the interval's start.
  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    for (const resource_id& id : p.nodes[n].resources) use(id, n);
    if (p.nodes[n].binding) use(*p.nodes[n].binding, n);
  }
  for (live_interval& interval : intervals)
    if (interval.first == unset) interval = {0, p.nodes.empty() ? 0 : p.nodes.size() - 1};
  return intervals;
}

result<wave_domain_layout> compile_wave_domain_layout(const plan& p, const pool_domain& domain,
                                                      std::span<const live_interval> intervals) {
  std::vector<resource_id> ids;
  ids.reserve(domain.members.size());
  for (std::size_t index : domain.members) ids.push_back(p.resources[index].id);
  auto claim = claim_identity::make(std::move(ids));
  if (!claim) return claim.error();
  wave_domain_layout layout{domain.members.size(), std::move(*claim), {}};
  if (domain.liveness == liveness_mode::interval) {
    layout.intervals.reserve(domain.members.size());
    for (std::size_t index : domain.members) layout.intervals.push_back(intervals[index]);
  }
  return layout;
}

}  // namespace ferrum
