#include "wave_faults.hpp"

namespace ferrum::tools {
namespace {

std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double unit_interval(std::uint64_t bits) noexcept { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// Keeps the tool's decisions apart from the device's, which hash the same
// small integers (submission numbers) with the same seed.
constexpr std::uint64_t tool_salt = 0x746f6f6c2d666c74ull;  // "tool-flt"

}  // namespace

wave_fault decide_wave_fault(const fault_spec& spec, std::uint64_t seed, std::uint64_t wave,
                             std::size_t nodes) noexcept {
  if (nodes == 0 || (spec.encoder <= 0 && spec.cancel <= 0)) return {};
  const std::uint64_t bits = splitmix64(seed ^ tool_salt ^ splitmix64(wave));
  const double u = unit_interval(bits);
  const std::uint64_t pick = splitmix64(bits);
  if (u < spec.encoder) return {wave_fault_kind::encoder, false, static_cast<std::size_t>(pick % nodes)};
  if (u < spec.encoder + spec.cancel) {
    // Step 0 is before the wave starts; step k + 1 is node k's encoder.
    const auto step = static_cast<std::size_t>(pick % (nodes + 1));
    return {wave_fault_kind::cancel, step == 0, step == 0 ? 0 : step - 1};
  }
  return {};
}

}  // namespace ferrum::tools
