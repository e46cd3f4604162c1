// null_semaphore.hpp (private) — a semaphore of the null device, kept on the
// host: a counter on a null_timeline, which the queues' workers wait on as on
// each other's timelines.
//
// A timeline semaphore's counter is its value. A binary semaphore's counts
// its signals: the k-th wait to start (in the order the workers reach
// their waits) ends once k signals were made, and is then consumed.
#pragma once

#include "ferrum/gpu/semaphore.hpp"

#include "null/null_timeline.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

namespace ferrum::gpu::null_detail {

class null_semaphore final : public semaphore {
 public:
  null_semaphore(const gpu::device& owner, semaphore_kind kind) noexcept : semaphore(owner, kind, 0) {}

  [[nodiscard]] null_timeline& counter() noexcept { return counter_; }

  // A worker's wait: the counter value it waits for (a binary semaphore's
  // next signal not taken by an earlier wait).
  [[nodiscard]] std::uint64_t start_wait(std::uint64_t value) noexcept {
    if (kind() == semaphore_kind::timeline) return value;
    const std::lock_guard lock(mutex_);
    return ++taken_;
  }
  // A worker's wait on a binary semaphore ended: its signal is consumed.
  void wait_ended() noexcept {
    // Notified under the lock: a host waiter that sees the change may
    // destroy the semaphore once it has the lock back.
    const std::lock_guard lock(mutex_);
    ++consumed_;
    changed_.notify_all();
  }
  // Whether a wait started now, after `ahead` more waits on a binary
  // semaphore took their signals, would end at once (inline completion).
  [[nodiscard]] bool ready(std::uint64_t value, std::uint64_t ahead = 0) const noexcept {
    if (kind() == semaphore_kind::timeline) return counter_.reached(value);
    const std::lock_guard lock(mutex_);
    return counter_.completed() > taken_ + ahead;
  }
  // A worker's signal.
  void signal(std::uint64_t value) noexcept {
    const std::lock_guard lock(mutex_);
    signal_locked(value);
    changed_.notify_all();
  }

 protected:
  result<void> do_signal_from_host(std::uint64_t value) override {
    {
      // Checked and signalled under one lock: of two racing host signals,
      // the lower one is refused rather than dropped.
      const std::lock_guard lock(mutex_);
      if (kind() == semaphore_kind::timeline && value <= counter_.completed())
        return make_error(errc::invalid_semaphore_op, "host signal: value " + std::to_string(value) +
                                                          " is not above the current " +
                                                          std::to_string(counter_.completed()));
      signal_locked(value);
      changed_.notify_all();
    }
    return {};
  }
  result<std::uint64_t> do_value() const override {
    const std::lock_guard lock(mutex_);
    return value_locked();
  }
  result<bool> do_wait_from_host(std::uint64_t value, std::chrono::nanoseconds timeout) const override {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return value_locked() >= value; });
  }

 private:
  void signal_locked(std::uint64_t value) noexcept {
    counter_.advance(kind() == semaphore_kind::binary ? counter_.completed() + 1 : value);
  }
  [[nodiscard]] std::uint64_t value_locked() const noexcept {
    const std::uint64_t signals = counter_.completed();
    return kind() == semaphore_kind::timeline ? signals : signals - std::min(signals, consumed_);
  }

  null_timeline counter_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::uint64_t taken_ = 0;     // binary: waits started
  std::uint64_t consumed_ = 0;  // binary: waits ended
};

}  // namespace ferrum::gpu::null_detail
