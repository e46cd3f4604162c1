#include "ferrum/binding/demand.hpp"

#include "image_rules.hpp"
#include "plan_rules.hpp"

#include <limits>

namespace ferrum {

std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

std::optional<std::uint64_t> checked_align_up(std::uint64_t value, std::uint64_t alignment) noexcept {
  auto bumped = checked_add(value, alignment - 1);
  if (!bumped) return std::nullopt;
  return *bumped & ~(alignment - 1);
}

result<std::uint64_t> resolve_demand(const resource_descriptor& d, const bucket_capacity& dims) {
  // Built only on an error: this runs once per resource and bucket.
  auto who = [&] { return "resource " + resource_id::quote(d.id.view()); };
  if (d.image) {
    auto extent = detail::resolve_image_extent(d, dims);
    if (!extent) return extent.error();
    return detail::image_bytes(*d.image, *extent);
  }
  if (!is_valid_alignment(d.alignment)) return detail::invalid_alignment(d);
  std::uint64_t scaled = 0;
  if (d.demand.dimension) {
    if (*d.demand.dimension >= dims.size())
      return make_error(errc::number_out_of_range, who() + ": dimension " + std::to_string(*d.demand.dimension));
    auto product = checked_mul(d.demand.per_unit, dims[*d.demand.dimension]);
    if (!product)
      return make_error(errc::size_overflow, who() + ": per_unit " + std::to_string(d.demand.per_unit) +
                                                 " * capacity " + std::to_string(dims[*d.demand.dimension]));
    scaled = *product;
  }
  auto bytes = checked_add(d.demand.base, scaled);
  if (!bytes) return make_error(errc::size_overflow, who() + ": base + per_unit * capacity");
  if (*bytes == 0) return make_error(errc::empty_demand, who());
  auto aligned = checked_align_up(*bytes, d.alignment);
  if (!aligned)
    return make_error(errc::size_overflow, who() + ": " + std::to_string(*bytes) + " bytes rounded up to alignment " +
                                               std::to_string(d.alignment));
  return *aligned;
}

}  // namespace ferrum
