// wave_trace.hpp (private) — what a wave records into a trace_recorder:
// nothing, not even a clock read, when the scheduler has none.
#pragma once

#include "ferrum/scheduler/trace.hpp"
#include "ferrum/scheduler/wave.hpp"
#include "node_barriers.hpp"

#include <chrono>
#include <cstdint>
#include <span>

namespace ferrum::detail {

// When and on which thread a node's encoder started (empty without a trace).
struct trace_clock {
  std::chrono::steady_clock::time_point at;
  std::uint32_t thread = 0;
};

[[nodiscard]] inline trace_clock trace_start(const trace_recorder* trace) noexcept {
  if (trace == nullptr) return {};
  return {std::chrono::steady_clock::now(), trace_recorder::this_thread_number()};
}

// Records a finished wave: its phases on its lane, each from the end of the
// one before (none when it never held a lane); then `nodes`, in runs of
// consecutive spans of this wave (an entry of another wave id is a node the
// wave did not run); then one GPU span per node of report.gpu_nodes, on
// the queue `queues[node]` names, marked where `barriers` opened the node's
// list with a barrier — but for the nodes `culling` says are culled, which
// never ran.
void record_wave(trace_recorder& trace, const wave_report& report, std::span<const trace_span> nodes,
                 std::span<const queue_kind> queues, node_barriers barriers,
                 std::span<const cull_reason> culling = {}) noexcept;

}  // namespace ferrum::detail
