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
  // in id order, into their pools. A pool's resources usually come together:
  // the map is consulted only where the pool changes from the resource before.
  boost::unordered_flat_map<std::string_view, std::size_t, std::hash<std::string_view>> pool_of;
  std::string_view previous;
  for (std::size_t i = 0; i < p.resources.size(); ++i)
    if (const std::string_view pool = p.resources[i].pool.view(); i == 0 || pool != previous) {
      pool_of.emplace(pool, 0);
      previous = pool;
    }
  std::vector<std::string_view> names;
  for (const auto& entry : pool_of) names.push_back(entry.first);
  std::sort(names.begin(), names.end());

  std::vector<pool_domain> domains;
  domains.reserve(names.size());
  for (std::size_t d = 0; d < names.size(); ++d) {
    pool_of[names[d]] = d;
    domains.push_back({pool_id::make(names[d]).value(), liveness_mode::conservative, memory_class::device, false, {}});
  }
  std::vector<std::optional<memory_class>> declared(domains.size());
  for (const pool_option& option : p.pools)
    if (auto it = pool_of.find(option.pool.view()); it != pool_of.end()) {
      domains[it->second].liveness = option.liveness;
      declared[it->second] = option.memory;
    }

  std::size_t current = 0;
  bool first = true;
  for (std::size_t r : index.resources_by_id()) {
    if (const std::string_view pool = p.resources[r].pool.view(); first || pool != previous) {
      current = pool_of.at(pool);
      previous = pool;
      first = false;
    }
    pool_domain& domain = domains[current];
    if (auto ok = detail::check_pool_member(p, domain, r); !ok) return ok.error();
    domain.members.push_back(r);
    domain.images = p.resources[r].image.has_value();
    domain.history = p.resources[r].lifetime == allocation_lifetime::history;
  }
  for (std::size_t d = 0; d < domains.size(); ++d) {
    auto memory = detail::pool_memory_class(p, domains[d], declared[d]);
    if (!memory) return memory.error();
    domains[d].memory = *memory;
  }
  return domains;
}

}  // namespace ferrum
