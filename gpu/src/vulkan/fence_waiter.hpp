// fence_waiter.hpp — the one thread per Vulkan device that watches the
// device's timeline semaphore and advances ferrum's timeline, completing the
// waits whose values the GPU reached.
//
// Why a wake-up semaphore rather than polling: the thread blocks in
// vkWaitSemaphores on the lowest value a wait is pending on, so a completion
// wakes it as soon as the driver signals it (no polling latency, no CPU burnt
// while the GPU works). A wait registered later on a *lower* value must not
// sit behind the thread's current, higher target, and a host thread cannot
// interrupt vkWaitSemaphores except by signalling one of the semaphores it
// waits on — so the thread waits with VK_SEMAPHORE_WAIT_ANY_BIT on the
// timeline *and* a second, host-signalled timeline semaphore, which
// on_new_lowest() signals (vkSignalSemaphore) to make it pick the new target.
// Each wait is still bounded (100 ms), so device loss and shutdown never
// depend on a signal that may not come.
//
// While no wait is pending the thread watches the next value of outstanding
// submissions, so that timeline::completed() (which command_list::begin
// consults before reusing a list) keeps up even when nobody awaits; with
// nothing submitted and nothing awaited it sleeps on a condition variable.
//
//   fence_waiter waiter(device, timeline_semaphore, wake_semaphore, timeline);
//   waiter.start();
//   waiter.submitted(value);   // after each vkQueueSubmit
//   waiter.stop();             // before the semaphores are destroyed
#pragma once

#include "ferrum/gpu/timeline.hpp"

#include <vulkan/vulkan_core.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>

namespace ferrum::gpu {

class vulkan_timeline;

class fence_waiter {
 public:
  // `timeline_semaphore` is what submissions signal; `wake_semaphore` a
  // timeline semaphore only this object signals; `target` ferrum's timeline.
  fence_waiter(VkDevice device, VkSemaphore timeline_semaphore, VkSemaphore wake_semaphore,
               vulkan_timeline& target) noexcept
      : device_(device), timeline_semaphore_(timeline_semaphore), wake_semaphore_(wake_semaphore), timeline_(target) {}
  fence_waiter(const fence_waiter&) = delete;
  fence_waiter& operator=(const fence_waiter&) = delete;
  // Stops the thread if it still runs.
  ~fence_waiter() { stop(); }

  // Starts the thread. Throws std::system_error when it cannot.
  void start();

  // Stops and joins the thread; it completes no wait afterwards.
  void stop() noexcept;

  // A new wait became the lowest pending one, on `value`: retarget the thread
  // if it watches a higher value or sleeps. Any thread.
  void wake(std::uint64_t value) noexcept;

  // A submission signalling `value` was made. Any thread.
  void submitted(std::uint64_t value) noexcept;

 private:
  // The value to watch next, or none when nothing is pending or outstanding.
  [[nodiscard]] std::optional<std::uint64_t> next_target() const noexcept;
  void run() noexcept;
  // Ends the thread's current vkWaitSemaphores by host-signalling the wake-up
  // semaphore. mutex_ must be held.
  void interrupt_locked() noexcept;
  // After a wait returned `wait_result`: reads the semaphore's counter into
  // the timeline, or fails the timeline on a device loss.
  void observe(VkResult wait_result) noexcept;

  VkDevice device_;
  VkSemaphore timeline_semaphore_;
  VkSemaphore wake_semaphore_;
  vulkan_timeline& timeline_;

  std::mutex mutex_;
  std::condition_variable changed_;
  // Bumped under mutex_ by every event the sleeping thread must see, so a
  // notification between its check and its sleep is not lost.
  std::uint64_t generation_ = 0;
  std::uint64_t submitted_ = 0;
  // The last value host-signalled on wake_semaphore_ (host signals must
  // increase strictly); the thread waits for wake_value_ + 1.
  std::uint64_t wake_value_ = 0;
  // The value the thread is blocked on in vkWaitSemaphores, if it is.
  std::optional<std::uint64_t> waiting_for_;
  bool stopping_ = false;
  std::thread thread_;
};

// The Vulkan device's timeline: ferrum's timeline, whose new lowest waits
// retarget the device's fence waiter. Only the device moves it: the fence
// waiter and the device's shutdown advance it, a device loss fails it.
class vulkan_timeline final : public timeline {
 public:
  using timeline::advance;
  using timeline::fail;

  // Sets the waiter to notify (nullptr: none).
  void attach(fence_waiter* waiter) noexcept { waiter_.store(waiter, std::memory_order_release); }

 protected:
  void on_new_lowest(std::uint64_t value) noexcept override {
    if (fence_waiter* w = waiter_.load(std::memory_order_acquire)) w->wake(value);
  }

 private:
  std::atomic<fence_waiter*> waiter_{nullptr};
};

}  // namespace ferrum::gpu
