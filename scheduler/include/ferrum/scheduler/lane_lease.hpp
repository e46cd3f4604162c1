// ferrum/scheduler/lane_lease.hpp — a lane held by code that drives lanes
// itself: move-only, and it gives the lane back only once the GPU is done
// with it.
//
//   auto [ec, lease] = co_await ferrum::async_acquire(pool, asio::as_tuple(asio::use_awaitable));
//   ... record into lease->list(n) ...
//   const std::uint64_t value = lease.submit().value();
//   co_await ferrum::gpu::async_wait(executor, pool.device().queue().timeline(), value, asio::use_awaitable);
//   lease.reset();   // or let it go out of scope
//
// Giving a lease up (reset(), destruction, move-assignment over it) gives
// its lane back as lane_return::after_fence: to the pool at once when the
// timeline value of the lane's last submission is reached, otherwise
// through the pool's fence watch once it is (never, after a device failure)
// — never straight to a waiter while the GPU may still write it. A lane
// acquired through a lease records afresh: a replaying scheduler does not
// replay what a lease's holder recorded.
//
// Thread safety: one thread at a time uses a lease.
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/scheduler/held_lane.hpp"

#include <cstdint>
#include <span>
#include <utility>

namespace ferrum {

class lane_lease {
 public:
  // Holds nothing.
  lane_lease() noexcept = default;
  // Holds `held`, just handed over (from async_acquire).
  explicit lane_lease(held_lane held) noexcept : held_(std::move(held)) { (void)held_.take_recording(false); }

  [[nodiscard]] explicit operator bool() const noexcept { return static_cast<bool>(held_); }
  // What the lane holds (a non-empty lease's), the holder's to write.
  [[nodiscard]] lane_contents& operator*() const noexcept { return *held_; }
  [[nodiscard]] lane_contents* operator->() const noexcept { return held_.operator->(); }
  // The lane's number in its pool, the pool, and the hand-out it is held under.
  [[nodiscard]] std::uint32_t index() const noexcept { return held_.index(); }
  [[nodiscard]] lane_pool* pool() const noexcept { return held_.pool(); }
  [[nodiscard]] std::uint64_t hold() const noexcept { return held_.hold(); }
  // The timeline value of the lane's last submission (held_lane::last_submitted).
  [[nodiscard]] std::uint64_t last_submitted() const noexcept { return held_.last_submitted(); }

  // Submits `lists` — each one of this lane's — on the pool's device with the
  // queue's next timeline value, records that value as the lane's last and
  // returns it. Every list goes to the device's compute queue: the list of a
  // transfer node (a v2 plan under queue_placement::plan) on a device whose
  // transfer queue is its own is refused with queue_mismatch; waves submit
  // such lists to their queue. Errors: lane_not_held (an empty lease, or one
  // whose hand-out is over), foreign_object (a list that is not one of this
  // lane's all_lists()), and those of queue::submit_next.
  [[nodiscard]] result<std::uint64_t> submit(std::span<gpu::command_list* const> lists);
  // Submits every list of the lane, its staging lists around its nodes'
  // (lane_contents::all_lists).
  [[nodiscard]] result<std::uint64_t> submit();

  // Gives the lane up (see the top of this file); the lease is then empty.
  void reset() noexcept { (void)held_.give_back(lane_return::after_fence); }

 private:
  held_lane held_;
};

}  // namespace ferrum
