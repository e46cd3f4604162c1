// tools/wave_faults.hpp — the faults `ferrum run` injects itself, per wave:
// an encoder that throws, or a cancellation at some step of the wave.
//
//   ferrum::tools::wave_fault f = ferrum::tools::decide_wave_fault(spec, seed, wave, nodes);
//   if (f.kind == ferrum::tools::wave_fault_kind::encoder && node == f.node) throw ...;
//
// Like the null device's own faults (ferrum/gpu/null_device.hpp) the decision
// is a hash of (seed, wave id) alone, so a run's faults do not depend on
// timing. The hash is salted so that wave k's decision is independent of the
// device's decision for submission k.
#pragma once

#include "run_options.hpp"

#include <cstddef>
#include <cstdint>

namespace ferrum::tools {

enum class wave_fault_kind : std::uint8_t {
  none,
  // The encoder of `node` throws.
  encoder,
  // The wave is cancelled before it starts (`before_start`), else from
  // inside the encoder of `node`, before that node records anything.
  cancel,
};

struct wave_fault {
  wave_fault_kind kind = wave_fault_kind::none;
  bool before_start = false;
  std::size_t node = 0;
};

// The tool fault of wave `wave` (1 for the first) of a plan of `nodes`
// nodes: encoder with probability spec.encoder, else cancel with probability
// spec.cancel (a wave gets at most one), the node or step uniform.
[[nodiscard]] wave_fault decide_wave_fault(const fault_spec& spec, std::uint64_t seed, std::uint64_t wave,
                                           std::size_t nodes) noexcept;

}  // namespace ferrum::tools
