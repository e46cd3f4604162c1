// ferrum/gpu/queue.hpp — where command lists are submitted, each submission
// signalling the next value of the queue's timeline.
//
//   std::uint64_t value = queue.last_submitted() + 1;
//   if (auto r = queue.submit(std::array{&list}, value); !r) return r.error();
//   co_await ferrum::gpu::async_wait(queue.timeline(), value, asio::use_awaitable);
//
// Thread safety: submit may be called from any thread; submissions are
// serialized in the order they take the queue's lock.
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/timeline.hpp"

#include <cstdint>
#include <mutex>
#include <span>

namespace ferrum::gpu {

class command_list;
class device;

class queue {
 public:
  queue(const queue&) = delete;
  queue& operator=(const queue&) = delete;
  virtual ~queue() = default;

  // Submits `lists` (each ended, of this device, none in flight) to run in
  // order, then signals `signal_value` on the timeline. An empty span only
  // signals. Errors: timeline_not_monotonic (not above last_submitted()),
  // command_list_state, command_list_in_flight, foreign_object, device_lost,
  // device_shut_down, or the device's submission error. Nothing is submitted
  // on an error.
  [[nodiscard]] result<void> submit(std::span<command_list* const> lists, std::uint64_t signal_value);

  // Submits `lists` signalling the next value (last_submitted() + 1), taken
  // under the same lock, so concurrent callers never race for a value.
  // Returns that value. Errors: as submit, except timeline_not_monotonic.
  [[nodiscard]] result<std::uint64_t> submit_next(std::span<command_list* const> lists);

  // The highest value submitted so far.
  [[nodiscard]] std::uint64_t last_submitted() const noexcept;

  [[nodiscard]] gpu::timeline& timeline() noexcept { return timeline_; }
  [[nodiscard]] const gpu::timeline& timeline() const noexcept { return timeline_; }
  [[nodiscard]] const gpu::device& device() const noexcept { return *device_; }

 protected:
  queue(const gpu::device& owner, gpu::timeline& t) noexcept : device_(&owner), timeline_(t) {}

  // The device part, called under the queue's lock after the checks passed.
  virtual result<void> do_submit(std::span<command_list* const> lists, std::uint64_t signal_value) = 0;

 private:
  [[nodiscard]] result<void> submit_locked(std::span<command_list* const> lists, std::uint64_t signal_value);

  const gpu::device* device_;
  gpu::timeline& timeline_;
  mutable std::mutex mutex_;
  std::uint64_t last_submitted_ = 0;
};

}  // namespace ferrum::gpu
