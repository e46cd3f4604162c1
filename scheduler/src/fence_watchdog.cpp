// The fence watchdog: one thread per scheduler, asleep until the earliest
// fence deadline (or until a first fence is armed).
#include "fence_watchdog.hpp"

#include <algorithm>
#include <limits>

namespace ferrum::detail {
namespace {

using clock_type = std::chrono::steady_clock;

std::uint64_t now_ms() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now().time_since_epoch()).count());
}

}  // namespace

fence_watchdog::fence_watchdog(std::chrono::milliseconds timeout) : timeout_(timeout), thread_([this] { run(); }) {}

fence_watchdog::~fence_watchdog() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void fence_watchdog::add(entry& e) {
  const std::lock_guard lock(mutex_);
  entries_.push_back(&e);
}

void fence_watchdog::start(entry& e, gpu::timeline& timeline) noexcept {
  e.timeline.store(&timeline, std::memory_order_relaxed);
  // Rounded up: a wait never expires before its full timeout.
  const std::uint64_t deadline = now_ms() + static_cast<std::uint64_t>(timeout_.count()) + 1;
  ++e.uses;
  e.armed.store(deadline << use_bits | (e.uses & ((std::uint64_t{1} << use_bits) - 1)), std::memory_order_release);
  if (armed_count_.fetch_add(1, std::memory_order_acq_rel) == 0) {
    // The thread may be asleep with nothing armed: under the lock, so that
    // it either sees the count or gets the notification.
    { const std::lock_guard lock(mutex_); }
    wake_.notify_one();
  }
  // May complete at once (and disarm) when the value is reached already.
  // Never pending: a wave arms its wait once per fence, after the last completed.
  (void)timeline.start_wait(e.wait);
}

void fence_watchdog::disarm(entry& e) noexcept {
  e.armed.store(0, std::memory_order_release);
  armed_count_.fetch_sub(1, std::memory_order_acq_rel);
}

std::uint64_t fence_watchdog::expire_locked(std::uint64_t now) {
  std::uint64_t next = 0;
  for (entry* e : entries_) {
    const std::uint64_t armed = e->armed.load(std::memory_order_acquire);
    if (armed == 0) continue;
    const std::uint64_t deadline = armed >> use_bits;
    if (deadline > now) {
      next = next == 0 ? deadline : std::min(next, deadline);
      continue;
    }
    // Off the timeline, or completing right now (then left alone). A wait
    // re-armed meanwhile on another timeline is not on this one: left alone.
    gpu::timeline& timeline = *e->timeline.load(std::memory_order_relaxed);
    if (!timeline.cancel_wait(e->wait)) continue;
    if (e->armed.load(std::memory_order_acquire) != armed) {
      // The expired wait completed meanwhile and its wave awaits a later
      // fence with the same record: that wait was taken off by mistake.
      (void)timeline.start_wait(e->wait);  // just taken off: not pending
      continue;
    }
    disarm(*e);
    e->expired(*e);
  }
  return next;
}

void fence_watchdog::run() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    if (armed_count_.load(std::memory_order_acquire) == 0) {
      wake_.wait(lock, [&] { return stop_ || armed_count_.load(std::memory_order_acquire) != 0; });
      continue;
    }
    const std::uint64_t next = expire_locked(now_ms());
    // Later arms have later deadlines (the timeout is fixed), so the earliest
    // one found is the next to look at; none left armed: a full timeout.
    const auto until =
        next != 0 ? clock_type::time_point(std::chrono::milliseconds(next)) : clock_type::now() + timeout_;
    wake_.wait_until(lock, until, [&] { return stop_; });
  }
}

}  // namespace ferrum::detail
