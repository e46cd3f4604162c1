#include "ferrum/binding/admission.hpp"

#include "ferrum/binding/demand.hpp"

#include <string>

namespace ferrum {

result<std::uint64_t> check_admission(std::uint32_t lanes, std::uint64_t budget_bytes,
                                      std::span<const std::uint64_t> bucket_bytes) {
  std::uint64_t per_lane = 0;
  for (std::uint64_t bytes : bucket_bytes) {
    auto sum = checked_add(per_lane, bytes);
    if (!sum) return make_error(errc::size_overflow, "the arenas of one lane", "/buckets");
    per_lane = *sum;
  }
  auto total = checked_mul(per_lane, lanes);
  if (!total)
    return make_error(errc::size_overflow, std::to_string(lanes) + " lanes of " + std::to_string(per_lane) + " bytes",
                      "/lanes");
  if (*total > budget_bytes)
    return make_error(errc::admission_exceeded,
                      std::to_string(lanes) + " lanes x " + std::to_string(per_lane) +
                          " bytes = " + std::to_string(*total) + " > budget " + std::to_string(budget_bytes),
                      "/budget_bytes");
  return *total;
}

}  // namespace ferrum
