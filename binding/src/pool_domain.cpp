#include "ferrum/binding/pool_domain.hpp"

#include "plan_index.hpp"

#include <boost/unordered/unordered_flat_map.hpp>

#include <algorithm>
#include <tuple>

namespace ferrum {
namespace {

auto compatibility(const resource_descriptor& r) {
  return std::tie(r.usage, r.element, r.storage.allocator, r.storage.view, r.storage.digest);
}

std::string where(std::size_t index) { return "/resources/" + std::to_string(index); }

}  // namespace

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
    const resource_descriptor& resource = p.resources[r];
    pool_domain& domain = domains[pool_of.at(resource.pool.view())];
    if (!domain.members.empty()) {
      const resource_descriptor& first = p.resources[domain.members.front()];
      if (compatibility(first) != compatibility(resource))
        return make_error(errc::incompatible_pool_member,
                          "pool " + pool_id::quote(resource.pool.view()) + ": resource " +
                              resource_id::quote(resource.id.view()) + " differs from resource " +
                              resource_id::quote(first.id.view()),
                          where(r));
    }
    if (domain.liveness == liveness_mode::interval && resource.lifetime != allocation_lifetime::invocation)
      return make_error(errc::invalid_liveness,
                        "pool " + pool_id::quote(resource.pool.view()) + " is interval but resource " +
                            resource_id::quote(resource.id.view()) + " is persistent",
                        where(r) + "/lifetime");
    domain.members.push_back(r);
  }
  return domains;
}

}  // namespace ferrum
