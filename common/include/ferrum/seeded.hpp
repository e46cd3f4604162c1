// ferrum/seeded.hpp — deterministic randomness from a seed:
// the null device's faults and `ferrum run`'s injected faults are decided by
// hashing (seed, number), never by a stateful generator, so the same seed
// gives the same decisions whatever the timing.
#pragma once

#include <cstdint>

namespace ferrum {

// SplitMix64's finalizer: a well-mixed 64-bit hash of `x`.
[[nodiscard]] constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A double in [0, 1) from the top 53 bits of `bits`.
[[nodiscard]] constexpr double unit_interval(std::uint64_t bits) noexcept {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

}  // namespace ferrum
