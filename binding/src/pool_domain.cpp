#include "ferrum/binding/pool_domain.hpp"

#include "plan_index.hpp"
#include "plan_rules.hpp"

#include <boost/unordered/unordered_flat_map.hpp>

#include <algorithm>

namespace ferrum {

result<std::vector<pool_domain>> derive_pool_domains(const plan& p) {
  return detail::derive_pool_domains(p, detail::plan_index(p));
}

result<std::vector<pool_domain>> detail::derive_pool_domains(const plan& p, const plan_index& index) {
  // Pools are few: number them in id order, then deal the resources, already
  // in id order, into their pools.
  boost::unordered_flat_map<std::string_view, std::size_t, std::hash<std::string_view>> pool_of;
  for (const resource_descriptor& r : p.resources) pool_of.emplace(r.pool.view(), 0);
  std::vector<std::string_view> names;
  for (const auto& entry : pool_of) names.push_back(entry.first);
  std::sort(names.begin(), names.end());

  std::vector<pool_domain> domains;
  domains.reserve(names.size());
  for (std::size_t d = 0; d < names.size(); ++d) {
    pool_of[names[d]] = d;
    domains.push_back({pool_id::make(names[d]).value(), liveness_mode::conservative, {}});
  }
  for (const pool_option& option : p.pools)
    if (auto it = pool_of.find(option.pool.view()); it != pool_of.end()) domains[it->second].liveness = option.liveness;

  for (std::size_t r : index.resources_by_id()) {
    pool_domain& domain = domains[pool_of.at(p.resources[r].pool.view())];
    if (auto ok = detail::check_pool_member(p, domain, r); !ok) return ok.error();
    domain.members.push_back(r);
  }
  return domains;
}

}  // namespace ferrum
