// wave_trace.hpp (private) — what a wave records into a trace_recorder:
// nothing, not even a clock read, when the scheduler has none.
#pragma once

#include "ferrum/scheduler/trace.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

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
// the queue `queues[node]` names, marked where the node's list opened
// with a barrier: every node's when `every_node`, else where `before` says
// (a node past its end: opened with one).
void record_wave(trace_recorder& trace, const wave_report& report, std::span<const trace_span> nodes,
                 std::span<const queue_kind> queues, const std::vector<bool>& before, bool every_node) noexcept;

// Whether node `n`'s list opens with a barrier (wave.cpp, record_wave).
[[nodiscard]] inline bool opens_with_barrier(const std::vector<bool>& before, bool every_node, std::size_t n) noexcept {
  return every_node || n >= before.size() || before[n];
}

}  // namespace ferrum::detail
