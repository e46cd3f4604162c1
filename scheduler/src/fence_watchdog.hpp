// fence_watchdog.hpp (private) — the fence timeout of every wave of one
// scheduler, kept by one thread instead of a timer per wave.
//
// A wave that awaits its fence arms its entry for its lane's timeline (one atomic store; the first
// armed entry wakes the thread) and starts its timeline wait. The thread
// sleeps until the earliest deadline; a wait still pending then is taken off
// the timeline (timeline::cancel_wait) and its entry's `expired` called. The
// timeline's lock decides between the watchdog and the device completing the
// wait, so exactly one of them completes it. Timeouts fire between the
// deadline and a millisecond after it.
#pragma once

#include "ferrum/gpu/timeline.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace ferrum::detail {

class fence_watchdog {
 public:
  struct entry {
    entry(gpu::timeline_wait& w, void (*on_expired)(entry& e) noexcept) noexcept : wait(&w), expired(on_expired) {}

    gpu::timeline_wait* wait;
    // The timeline the wait is on for its current use (a scheduler over
    // several devices watches several); written before `armed`.
    std::atomic<gpu::timeline*> timeline{nullptr};
    // Called on the watchdog's thread once the wait is off the timeline.
    void (*expired)(entry& e) noexcept;
    // Deadline in milliseconds << use_bits | the use's number; 0 when not
    // armed. The use's number tells the watchdog whether the wait it took
    // off the timeline is still the one it found expired.
    std::atomic<std::uint64_t> armed{0};
    std::uint64_t uses = 0;
  };

  explicit fence_watchdog(std::chrono::milliseconds timeout);
  fence_watchdog(const fence_watchdog&) = delete;
  fence_watchdog& operator=(const fence_watchdog&) = delete;
  // Stops the thread. No entry may be armed.
  ~fence_watchdog();

  // Watches `e` from now on (cold: when its wave is made).
  void add(entry& e);
  // Arms `e` for the wait's value (set by the caller) and starts the wait on
  // `timeline`.
  void start(entry& e, gpu::timeline& timeline) noexcept;
  // From the wait's completion by the timeline: `e` is no longer armed.
  void disarm(entry& e) noexcept;

 private:
  static constexpr int use_bits = 20;
  void run();
  // With mutex_ held: takes expired waits off the timeline; returns the
  // earliest deadline still ahead (ms), or 0 when none is armed.
  std::uint64_t expire_locked(std::uint64_t now_ms);

  std::chrono::milliseconds timeout_;
  std::atomic<std::size_t> armed_count_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::vector<entry*> entries_;
  std::thread thread_;
};

}  // namespace ferrum::detail
