#include "ferrum/binding/capacity_layout.hpp"

#include "conservative_packing.hpp"
#include "ferrum/binding/demand.hpp"
#include "huge_pages.hpp"
#include "interval_packing.hpp"

#include <algorithm>

namespace ferrum {
namespace {

// Packs members with no aliasing (conservative_packing.hpp).
result<std::uint64_t> pack_conservative(std::vector<projection>& projections, const std::vector<std::size_t>& members) {
  const auto order = detail::conservative_order(
      projections.size(), [&](std::size_t i) { return detail::alignment_class(projections[i].alignment); });
  return detail::pack_in_order(projections, order, members,
                               [&](std::size_t i, std::uint64_t offset) { projections[i].offset = offset; });
}

}  // namespace

result<capacity_layout> compile_capacity_layout(const plan& p, std::size_t bucket_index, const pool_domain& domain,
                                                const wave_domain_layout& layout, std::size_t budget_index,
                                                const std::vector<bool>& unused) {
  const bucket_spec& bucket = p.buckets[bucket_index];
  capacity_layout out{domain.pool, domain.liveness, {}, 0, 0};
  detail::reserve_huge(out.projections, domain.members.size());
  for (std::size_t index : domain.members) {
    const resource_descriptor& r = p.resources[index];
    auto bytes = detail::resource_capacity(r, index, bucket.dims);
    if (!bytes) return bytes.error();
    out.projections.push_back({r.id, 0, index < unused.size() && unused[index] ? 0 : *bytes, r.alignment});
  }

  auto packed = pack_conservative(out.projections, domain.members);
  if (!packed) return packed.error();
  out.unaliased_size_bytes = out.physical_size_bytes = *packed;
  if (domain.liveness == liveness_mode::interval) {
    std::vector<projection> aliased = out.projections;
    const auto size = detail::pack_interval(aliased, layout.intervals);
    if (size && *size <= out.physical_size_bytes) {
      out.projections = std::move(aliased);
      out.physical_size_bytes = *size;
    }
  }

  if (auto fits = detail::check_budget_fit(domain.pool, out.physical_size_bytes, bucket.budgets[budget_index],
                                           bucket_index, budget_index);
      !fits)
    return fits.error();
  return out;
}

}  // namespace ferrum
