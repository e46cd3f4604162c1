#include "wave_faults.hpp"

#include "ferrum/seeded.hpp"

namespace ferrum::tools {
namespace {

using ferrum::splitmix64;
using ferrum::unit_interval;

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
