// The trace recorder: a ring of spans reserved up front; what a wave records.
#include "ferrum/scheduler/trace.hpp"

#include "wave_trace.hpp"

#include <algorithm>
#include <array>
#include <atomic>

namespace ferrum {

trace_recorder::trace_recorder(std::size_t capacity)
    : ring_(std::max<std::size_t>(capacity, 1)), epoch_(std::chrono::steady_clock::now()) {}

void trace_recorder::record(const trace_span& span) noexcept { record(std::span(&span, 1)); }

void trace_recorder::record(std::span<const trace_span> spans) noexcept {
  const std::lock_guard lock(mutex_);
  for (const trace_span& span : spans) {
    ring_[recorded_ % ring_.size()] = span;
    ++recorded_;
  }
}

std::vector<trace_span> trace_recorder::spans() const {
  const std::lock_guard lock(mutex_);
  std::vector<trace_span> out;
  const std::size_t count = kept_locked();
  out.reserve(count);
  // Oldest first: once the ring has wrapped, the oldest sits at the cursor.
  const std::size_t start = recorded_ > ring_.size() ? static_cast<std::size_t>(recorded_ % ring_.size()) : 0;
  for (std::size_t i = 0; i < count; ++i) out.push_back(ring_[(start + i) % ring_.size()]);
  return out;
}

std::size_t trace_recorder::kept() const noexcept {
  const std::lock_guard lock(mutex_);
  return kept_locked();
}

std::size_t trace_recorder::kept_locked() const noexcept {
  return static_cast<std::size_t>(std::min<std::uint64_t>(recorded_, ring_.size()));
}

std::uint64_t trace_recorder::recorded() const noexcept {
  const std::lock_guard lock(mutex_);
  return recorded_;
}

std::uint64_t trace_recorder::dropped() const noexcept {
  const std::lock_guard lock(mutex_);
  return recorded_ > ring_.size() ? recorded_ - ring_.size() : 0;
}

std::uint32_t trace_recorder::this_thread_number() noexcept {
  static std::atomic<std::uint32_t> next{1};
  thread_local const std::uint32_t number = next.fetch_add(1, std::memory_order_relaxed);
  return number;
}

}  // namespace ferrum

namespace ferrum::detail {

void record_wave(trace_recorder& trace, const wave_report& report, std::span<const trace_span> nodes,
                 std::span<const queue_kind> queues, node_barriers barriers,
                 std::span<const cull_reason> culling) noexcept {
  std::array<trace_span, wave_phase_count> phases;
  std::size_t reached = 0;
  std::chrono::steady_clock::time_point begin = report.started;
  for (; reached < wave_phase_count && report.ended[reached]; ++reached) {
    trace_span& span = phases[reached];
    span.phase = static_cast<wave_phase>(reached);
    span.wave = report.wave;
    span.bucket = report.bucket;
    span.device = static_cast<std::uint32_t>(report.device);
    span.lane = report.lane;
    span.begin = begin;
    span.end = *report.ended[reached];
    begin = span.end;
  }
  trace.record(std::span(phases).first(reached));
  for (std::size_t first = 0; first < nodes.size();) {
    std::size_t last = first;
    while (last < nodes.size() && nodes[last].wave == report.wave) ++last;
    if (last > first) trace.record(nodes.subspan(first, last - first));
    first = last + (last == first ? 1 : 0);
  }
  // GPU spans in chunks through the stack: a wave allocates nothing for them.
  std::array<trace_span, 64> chunk;
  std::size_t used = 0;
  for (std::size_t n = 0; n < report.gpu_nodes.size(); ++n) {
    if (n < culling.size() && culling[n].culled) continue;
    trace_span& span = chunk[used++];
    span.phase = wave_phase::fence;
    span.node = static_cast<std::uint32_t>(n);
    span.gpu = true;
    span.barrier = barriers.opens(n);
    span.queue = queues[n];
    span.wave = report.wave;
    span.bucket = report.bucket;
    span.device = static_cast<std::uint32_t>(report.device);
    span.lane = report.lane;
    span.begin = report.gpu_nodes[n].begin;
    span.end = report.gpu_nodes[n].end;
    if (used == chunk.size()) {
      trace.record(chunk);
      used = 0;
    }
  }
  if (used != 0) trace.record(std::span(chunk).first(used));
}

}  // namespace ferrum::detail
