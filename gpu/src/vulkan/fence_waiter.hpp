// fence_waiter.hpp — the one thread per Vulkan device that watches the
// timeline semaphores of the device's queues and advances ferrum's timelines,
// completing the waits whose values the GPU reached.
//
// Why a wake-up semaphore rather than polling: the thread blocks in
// vkWaitSemaphores, with VK_SEMAPHORE_WAIT_ANY_BIT, on the lowest value a
// wait is pending on of each queue's timeline, so a completion on any queue
// wakes it as soon as the driver signals it (no polling latency, no CPU burnt
// while the GPU works). A wait registered later on a *lower* value must not
// sit behind the thread's current, higher target, and a host thread cannot
// interrupt vkWaitSemaphores except by signalling one of the semaphores it
// waits on — so the thread also waits on a host-signalled timeline semaphore,
// which wake() and submitted() signal (vkSignalSemaphore) to make it pick new
// targets. Each wait is still bounded (100 ms), so device loss and shutdown
// never depend on a signal that may not come.
//
// A device with one queue (lavapipe's) is watched without the wake-up
// semaphore: one timeline semaphore, no WAIT_ANY. Mesa's common runtime
// (22.3, lavapipe) has no native wait for *any* of several semaphores and
// polls instead — clock_gettime in a loop, a whole core while the GPU works
// (bench/fft_convolution: 2.5 ms of CPU per wave, and the wall time with
// it) — while a wait on one semaphore sleeps in every driver. Alone, the
// thread is never retargeted: it waits only for values that submissions
// on its queue signal (the lowest at or above what is awaited), which the
// queue completes in order, so a wait on a lower value registered
// meanwhile is reached first and seen when the thread wakes, and a wait on
// a value not submitted yet is picked up once it is. Only submitted
// values: lavapipe's wait on a value the timeline skips (one submission
// signalling 3 after 0, a wait for 1) was seen to outlast its timeout until
// the device went.
//
// While no wait is pending on a queue, the thread watches the next value of
// that queue's outstanding submissions, so that timeline::completed() (which
// command_list::begin consults before reusing a list) keeps up even when
// nobody awaits; with nothing submitted and nothing awaited it sleeps on a
// condition variable.
//
//   fence_waiter waiter(device, wake_semaphore);
//   std::size_t q = waiter.watch(timeline_semaphore, timeline);  // per queue
//   waiter.start();
//   waiter.submitted(q, value);   // after each vkQueueSubmit to queue q
//   waiter.stop();                // before the semaphores are destroyed
#pragma once

#include "ferrum/gpu/timeline.hpp"

#include <vulkan/vulkan_core.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace ferrum::gpu {

class host_wait_fences;
class vulkan_timeline;

class fence_waiter {
 public:
  // `wake_semaphore`: a timeline semaphore only this object signals.
  // `wait_any`: wait as for several queues even with one.
  fence_waiter(VkDevice device, VkSemaphore wake_semaphore, bool wait_any = false) noexcept
      : device_(device), wake_semaphore_(wake_semaphore), wait_any_(wait_any) {}
  fence_waiter(const fence_waiter&) = delete;
  fence_waiter& operator=(const fence_waiter&) = delete;
  // Stops the thread if it still runs.
  ~fence_waiter() { stop(); }

  // Watches `timeline_semaphore` (what one queue's submissions signal) for
  // `target` (ferrum's timeline of that queue); returns its index for
  // wake() and submitted(). Before start() only.
  // With `host_waits`, each value read is first shown to the validation
  // layers as a host wait (host_wait_fences.hpp).
  std::size_t watch(VkSemaphore timeline_semaphore, vulkan_timeline& target, host_wait_fences* host_waits = nullptr);

  // Starts the thread. Throws std::system_error when it cannot.
  void start();

  // Stops and joins the thread; it completes no wait afterwards.
  void stop() noexcept;

  // A new wait became the lowest pending one of timeline `which`, on
  // `value`: retarget the thread if it watches a higher value there, or none.
  // Any thread.
  void wake(std::size_t which, std::uint64_t value) noexcept;

  // A submission signalling `value` was made on the queue of timeline
  // `which`. Any thread.
  void submitted(std::size_t which, std::uint64_t value) noexcept;

  // Fails every watched timeline with `ec` (a device loss). Any thread.
  void fail_all(boost::system::error_code ec) noexcept;

 private:
  struct watched {
    VkSemaphore semaphore;
    vulkan_timeline* timeline;
    host_wait_fences* host_waits;
    // Under mutex_: the last value submitted, and the value the thread's
    // current vkWaitSemaphores waits for on this semaphore (none: it does
    // not wait on it).
    std::uint64_t submitted = 0;
    // Under mutex_: the values of the submissions not seen complete, in
    // order (what the thread waits for when alone).
    std::vector<std::uint64_t> outstanding;
    std::optional<std::uint64_t> waiting_for;
  };

  // The value of timeline `w` to watch next, or none when nothing is pending
  // or outstanding there; forgets the outstanding values reached. mutex_
  // must be held.
  [[nodiscard]] std::optional<std::uint64_t> next_target(watched& w) const noexcept;
  // Whether it watches one queue only (waits without the wake-up semaphore).
  [[nodiscard]] bool alone() const noexcept { return watched_.size() == 1 && !wait_any_; }
  void run() noexcept;
  // Ends the thread's current vkWaitSemaphores by host-signalling the wake-up
  // semaphore. mutex_ must be held.
  void interrupt_locked() noexcept;
  // After a wait returned `wait_result`: reads every semaphore's counter into
  // its timeline, or fails them all on a device loss.
  void observe(VkResult wait_result) noexcept;

  VkDevice device_;
  VkSemaphore wake_semaphore_;
  bool wait_any_;
  // Fixed once the thread starts (watch() comes before start()).
  std::vector<watched> watched_;

  std::mutex mutex_;
  std::condition_variable changed_;
  // Bumped under mutex_ by every event the sleeping thread must see, so a
  // notification between its check and its sleep is not lost.
  std::uint64_t generation_ = 0;
  // The last value host-signalled on wake_semaphore_ (host signals must
  // increase strictly); the thread waits for wake_value_ + 1.
  std::uint64_t wake_value_ = 0;
  // Whether the thread is blocked in vkWaitSemaphores.
  bool blocked_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

// A Vulkan queue's timeline: ferrum's timeline, whose new lowest waits
// retarget the device's fence waiter. Only the device moves it: the fence
// waiter and the device's shutdown advance it, a device loss fails it.
class vulkan_timeline final : public timeline {
 public:
  using timeline::advance;
  using timeline::fail;

  // Sets the waiter to notify (nullptr: none) and this timeline's index there.
  void attach(fence_waiter* waiter, std::size_t index = 0) noexcept {
    index_.store(index, std::memory_order_relaxed);
    waiter_.store(waiter, std::memory_order_release);
  }

 protected:
  void on_new_lowest(std::uint64_t value) noexcept override {
    if (fence_waiter* w = waiter_.load(std::memory_order_acquire))
      w->wake(index_.load(std::memory_order_relaxed), value);
  }

 private:
  std::atomic<fence_waiter*> waiter_{nullptr};
  std::atomic<std::size_t> index_{0};
};

}  // namespace ferrum::gpu
