// The trace recorder: a ring of spans reserved up front.
#include "ferrum/scheduler/trace.hpp"

#include <algorithm>
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
