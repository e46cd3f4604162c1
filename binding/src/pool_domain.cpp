#include "ferrum/binding/pool_domain.hpp"

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
  std::vector<std::size_t> order(p.resources.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const resource_descriptor& ra = p.resources[a];
    const resource_descriptor& rb = p.resources[b];
    return std::tie(ra.pool, ra.id) < std::tie(rb.pool, rb.id);
  });

  std::vector<pool_option> options = p.pools;
  std::sort(options.begin(), options.end(), [](const auto& a, const auto& b) { return a.pool < b.pool; });

  std::vector<pool_domain> domains;
  for (std::size_t index : order) {
    const resource_descriptor& r = p.resources[index];
    if (domains.empty() || domains.back().pool != r.pool) {
      pool_domain domain{r.pool, liveness_mode::conservative, {}};
      auto option = std::lower_bound(options.begin(), options.end(), r.pool,
                                     [](const pool_option& o, const pool_id& id) { return o.pool < id; });
      if (option != options.end() && option->pool == r.pool) domain.liveness = option->liveness;
      domains.push_back(std::move(domain));
    }
    pool_domain& domain = domains.back();
    if (!domain.members.empty()) {
      const resource_descriptor& first = p.resources[domain.members.front()];
      if (compatibility(first) != compatibility(r))
        return make_error(errc::incompatible_pool_member,
                          "pool " + pool_id::quote(r.pool.view()) + ": resource " + resource_id::quote(r.id.view()) +
                              " differs from resource " + resource_id::quote(first.id.view()),
                          where(index));
    }
    if (domain.liveness == liveness_mode::interval && r.lifetime != allocation_lifetime::invocation)
      return make_error(errc::invalid_liveness,
                        "pool " + pool_id::quote(r.pool.view()) + " is interval but resource " +
                            resource_id::quote(r.id.view()) + " is persistent",
                        where(index) + "/lifetime");
    domain.members.push_back(index);
  }
  return domains;
}

}  // namespace ferrum
