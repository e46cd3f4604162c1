// ferrum/gpu/queue.hpp — where command lists are submitted, each submission
// signalling the next value of the queue's timeline and optionally waiting
// for values of other queues' timelines first.
//
// A device has one queue per kind of work it runs apart (device::queue(kind)):
// compute and transfer may share one queue or have one each. Submissions on
// one queue run in order; submissions on different queues are ordered only by
// their waits.
//
//   std::uint64_t value = queue.last_submitted() + 1;
//   if (auto r = queue.submit(std::array{&list}, value); !r) return r.error();
//   co_await ferrum::gpu::async_wait(queue.timeline(), value, asio::use_awaitable);
//
//   // A copy on the transfer queue that starts once the compute queue's
//   // submission `produced` completed:
//   const ferrum::gpu::queue_wait after[] = {{&device.queue(ferrum::queue_kind::compute), produced}};
//   auto copied = device.queue(ferrum::queue_kind::transfer).submit_next(std::array{&copy_list}, after);
//
// Thread safety: submit may be called from any thread; submissions to one
// queue are serialized in the order they take the queue's lock. A submission
// never takes another queue's lock, so two threads submitting to two queues,
// each waiting on the other, cannot deadlock.
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/semaphore.hpp"
#include "ferrum/gpu/timeline.hpp"
#include "ferrum/queue_kind.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

namespace ferrum::gpu {

class command_list;
class device;
class queue;

// A submission's wait: its commands start only once `on`'s timeline reached
// `value`. Value 0 is always reached (no wait).
struct queue_wait {
  const queue* on = nullptr;
  std::uint64_t value = 0;
};

class queue {
 public:
  queue(const queue&) = delete;
  queue& operator=(const queue&) = delete;
  virtual ~queue() = default;

  // Submits `lists` (each ended, of this device, made for this queue's kinds
  // (device::create_command_list), none in flight) to run in order once every
  // wait of `waits` is reached, then signals `signal_value` on the timeline.
  // An empty span of lists only waits and signals. A wait on this queue's own
  // timeline is allowed. The device's memory writes before each waited value
  // are visible to the submission's commands. Errors:
  // timeline_not_monotonic (not above last_submitted()),
  // command_list_state, command_list_in_flight, queue_mismatch (a list made
  // for a kind another queue runs), foreign_object (a list, or a waited
  // queue, of another device), wait_not_submitted (a wait on a value above
  // its queue's last_submitted(): it would stall this queue forever),
  // device_lost, device_shut_down, or the device's submission error. Nothing
  // is submitted on an error.
  //
  // `external`: semaphores (ferrum/gpu/semaphore.hpp) the submission also
  // waits on, holding back the commands of each wait's stage, and signals
  // once its commands completed. More errors: invalid_semaphore_op,
  // foreign_object (a semaphore of another device); on the null device with
  // inline_completion, wait_not_submitted for a wait not signalled yet (it
  // cannot wait).
  [[nodiscard]] result<void> submit(std::span<command_list* const> lists, std::uint64_t signal_value,
                                    std::span<const queue_wait> waits = {}, const external_sync& external = {});

  // Submits `lists` signalling the next value (last_submitted() + 1), taken
  // under the same lock, so concurrent callers never race for a value.
  // Returns that value. Errors: as submit, except timeline_not_monotonic.
  [[nodiscard]] result<std::uint64_t> submit_next(std::span<command_list* const> lists,
                                                  std::span<const queue_wait> waits = {},
                                                  const external_sync& external = {});

  // The highest value submitted so far. Lock-free: a submission to another
  // queue reads it to check its waits.
  [[nodiscard]] std::uint64_t last_submitted() const noexcept {
    return last_submitted_.load(std::memory_order_acquire);
  }

  // The first kind (in queue_kinds order) the device runs on this queue.
  [[nodiscard]] queue_kind kind() const noexcept { return kind_; }
  // The queue's position among the device's distinct queues
  // (device::queue_at(index()) is this queue).
  [[nodiscard]] std::size_t index() const noexcept { return index_; }

  [[nodiscard]] gpu::timeline& timeline() noexcept { return timeline_; }
  [[nodiscard]] const gpu::timeline& timeline() const noexcept { return timeline_; }
  [[nodiscard]] const gpu::device& device() const noexcept { return *device_; }

  // Holds the lock every submission to this queue takes, for the engine's
  // own use of the native queue while waves run (a library's set-up
  // submission, vkQueueWaitIdle on vulkan_native_handles::queue): ferrum
  // submits nothing to the queue meanwhile, so the queue's external
  // synchronization holds. Hold it briefly and never submit through ferrum
  // while holding it (that would wait for itself), nor wait for a value of
  // its timeline (where the validation layers check submissions, the
  // device takes it to show them its host waits: host_wait_fences.hpp). An adopted device takes
  // the engine's own mutex as well (vulkan_adopt_info::queue_mutex).
  [[nodiscard]] std::unique_lock<std::mutex> lock() const { return std::unique_lock<std::mutex>(mutex_); }

 protected:
  queue(const gpu::device& owner, gpu::timeline& t, std::size_t index = 0,
        queue_kind kind = queue_kind::compute) noexcept
      : device_(&owner), timeline_(t), index_(index), kind_(kind) {}

  // The device part, called under the queue's lock after the checks passed.
  // `waits` are checked (this device's queues, submitted values), at most one
  // per queue, none on value 0; so is every semaphore of `external`.
  virtual result<void> do_submit(std::span<command_list* const> lists, std::uint64_t signal_value,
                                 std::span<const queue_wait> waits, const external_sync& external) = 0;

  // The lock submissions take, for a device's other uses of its queue that
  // must be serialized with them (a swapchain's presentation).
  [[nodiscard]] std::mutex& submission_mutex() const noexcept { return mutex_; }

 private:
  [[nodiscard]] result<void> submit_locked(std::span<command_list* const> lists, std::uint64_t signal_value,
                                           std::span<const queue_wait> waits, const external_sync& external);
  // Checks `waits` into waits_ (merged per queue, value 0 dropped).
  [[nodiscard]] result<void> check_waits(std::span<const queue_wait> waits);

  const gpu::device* device_;
  gpu::timeline& timeline_;
  std::size_t index_;
  queue_kind kind_;
  mutable std::mutex mutex_;
  // Written under mutex_ once a submission was handed to the device; read
  // without it (release/acquire) by submissions to other queues.
  std::atomic<std::uint64_t> last_submitted_{0};
  // The checked waits of the submission being made, under mutex_; its
  // capacity is kept, so steady-state submissions allocate nothing.
  std::vector<queue_wait> waits_;
};

}  // namespace ferrum::gpu
