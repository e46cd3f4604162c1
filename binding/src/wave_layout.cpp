#include "ferrum/binding/wave_layout.hpp"

#include "dependency_graph_build.hpp"
#include "huge_pages.hpp"
#include "plan_index.hpp"
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
  const detail::plan_index index(p);
  std::vector<live_interval> intervals = detail::live_intervals(p, index);
  if (p.format == plan_format::v2)
    if (auto graph = detail::compile_dependency_graph(p, [&index](std::string_view id) { return index.node(id); }))
      detail::extend_for_dependencies(intervals, *graph, p, index.all_uses());
  return intervals;
}

std::vector<live_interval> detail::live_intervals(const plan& p, const plan_index& index) {
  constexpr std::size_t unset = plan_index::none;
  std::vector<live_interval> intervals(p.resources.size(), live_interval{unset, 0});
  auto use = [&](std::size_t r, std::size_t node) {
    if (r == plan_index::none) return;
    live_interval& interval = intervals[r];
    if (interval.first == unset) interval.first = node;
    interval.last = node;
  };
  // Nodes are visited in plan order, so the first use is the interval's start.
  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    for (std::size_t r : index.uses(n)) use(r, n);
    use(index.binding(n), n);
  }
  for (live_interval& interval : intervals)
    if (interval.first == unset) interval = {0, p.nodes.empty() ? 0 : p.nodes.size() - 1};
  return intervals;
}

result<wave_domain_layout> compile_wave_domain_layout(const plan& p, const pool_domain& domain,
                                                      std::span<const live_interval> intervals) {
  std::vector<resource_id> ids;
  detail::reserve_huge(ids, domain.members.size());
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
