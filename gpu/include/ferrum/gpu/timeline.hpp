// ferrum/gpu/timeline.hpp — a monotonic 64-bit timeline (a Vulkan timeline
// semaphore, or the null device's counter) and the waits pending on it.
//
// The device advances the timeline as submissions complete; every pending wait
// whose value is reached is completed then, on its own executor. Only the
// device moves it: advance() and fail() are protected, reached through the
// device's own subclass, so that no user can complete a wait on GPU work that
// has not finished. Awaiting a value is `ferrum::gpu::async_wait`
// (ferrum/gpu/async_wait.hpp), kept in its own header so that only code that
// awaits includes Asio.
//
//   co_await ferrum::gpu::async_wait(device.queue().timeline(), 42, asio::use_awaitable);
//
// Thread safety: every member may be called from any thread.
#pragma once

#include <boost/system/error_code.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>

namespace ferrum::gpu {

// One pending wait on a timeline: an intrusive record that its owner keeps
// alive until `complete` has been called. The timeline links it into its
// list (ordered by value) and calls `complete` exactly once, from any thread,
// after unlinking it — or never, when the owner took it back with
// cancel_wait(). A wait is pending on one timeline at a time: starting it
// again before then is refused. `complete` must hand the waiter's code to an executor and
// never run it inline: it may be called under the device's own progress.
// gpu::async_wait is built on it; so are the scheduler's fence waits.
struct timeline_wait {
  using complete_fn = void (*)(timeline_wait* wait, boost::system::error_code ec) noexcept;

  timeline_wait(std::uint64_t wait_value, complete_fn on_complete) noexcept
      : value(wait_value), complete(on_complete) {}

  std::uint64_t value;
  complete_fn complete;
  timeline_wait* next = nullptr;
  // Linked into a timeline's list (guarded by that timeline's lock).
  bool pending = false;
};

class timeline {
 public:
  timeline(const timeline&) = delete;
  timeline& operator=(const timeline&) = delete;
  // Pending waits must have been completed (the device fails them on shutdown).
  virtual ~timeline() = default;

  // The highest value known to be reached.
  [[nodiscard]] std::uint64_t completed() const noexcept { return completed_.load(std::memory_order_acquire); }

  // Whether `value` is known to be reached.
  [[nodiscard]] bool reached(std::uint64_t value) const noexcept { return completed() >= value; }

  // The error that ended the timeline (device_lost, device_shut_down), or none.
  [[nodiscard]] boost::system::error_code failure() const noexcept;

  // The lowest value a wait is pending on, if any wait is pending.
  [[nodiscard]] std::optional<std::uint64_t> lowest_pending() const noexcept;

  // How many waits are pending.
  [[nodiscard]] std::size_t pending() const noexcept;

  // --- waits (async_wait, the scheduler's fences) -----------------------------

  // Registers `wait`. Completes it at once (through wait->complete) when its
  // value is reached or the timeline failed. Refused with
  // wait_already_pending (and nothing changed; a debug build asserts) when
  // `wait` is pending already, on this timeline or another: linked twice,
  // the list would loop on itself.
  [[nodiscard]] boost::system::error_code start_wait(timeline_wait* wait) noexcept;

  // Removes `wait` if it is still pending and returns whether it was: its
  // owner then completes it itself (with operation_aborted, or a timeout).
  // False when it has been completed or is being completed.
  [[nodiscard]] bool cancel_wait(timeline_wait* wait) noexcept;

 protected:
  // A timeline is always a device's: a device makes its own subclass.
  timeline() = default;

  // --- for devices, through their own subclass -----------------------------

  // Records that `value` was reached and completes the waits it satisfies.
  // Values never go backwards: a lower value than completed() is ignored.
  void advance(std::uint64_t value) noexcept;

  // Ends the timeline with `ec`: every pending wait and every later one
  // completes with it. The first failure wins.
  void fail(boost::system::error_code ec) noexcept;

  // Called, outside the timeline's lock, when a new wait becomes the lowest
  // pending one: a device whose waiter thread sleeps on a higher value wakes it.
  virtual void on_new_lowest(std::uint64_t value) noexcept { (void)value; }

 private:
  static void complete_all(timeline_wait* list, boost::system::error_code ec) noexcept;

  mutable std::mutex mutex_;
  std::atomic<std::uint64_t> completed_{0};
  boost::system::error_code failure_;
  // Set once failure_ is: failure() reads it without the lock, so that the
  // question every command list asks per wave ("is the device lost?") costs
  // one load, not the lock the device's thread takes.
  std::atomic<bool> failed_{false};
  timeline_wait* head_ = nullptr;  // ordered by value, ascending
  std::size_t pending_ = 0;
};

}  // namespace ferrum::gpu
