// null_faults.cpp — the seeded fault decisions of the null device
// (decide_fault, ferrum/gpu/null_device.hpp): a hash of (seed, queue index,
// submission) alone.
#include "ferrum/gpu/null_device.hpp"

#include "ferrum/seeded.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace ferrum::gpu {

std::optional<fault_decision> decide_fault(const null_fault_options& options, std::uint64_t submission) noexcept {
  return decide_fault(options, 0, submission);
}

std::optional<fault_decision> decide_fault(const null_fault_options& options, std::size_t queue_index,
                                           std::uint64_t submission) noexcept {
  // Queue 0 hashes the seed itself (the decisions of a device with one
  // queue); every other queue a seed derived from it and its index.
  const std::uint64_t seed =
      queue_index == 0 ? options.seed : splitmix64(options.seed ^ splitmix64(~std::uint64_t{queue_index}));
  const std::uint64_t bits = splitmix64(seed ^ splitmix64(submission));
  const double u = unit_interval(bits);
  double band = options.lost;
  if (u < band) return fault_decision{fault_kind::lost};
  band += options.hang;
  if (u < band) return fault_decision{fault_kind::hang};
  band += options.delay;
  if (u < band) {
    const auto span = static_cast<std::uint64_t>(std::max<std::int64_t>(options.max_delay.count(), 0)) + 1;
    return fault_decision{fault_kind::delay,
                          std::chrono::microseconds(static_cast<std::int64_t>(splitmix64(bits) % span))};
  }
  return std::nullopt;
}

}  // namespace ferrum::gpu
