// ferrum/scheduler/lane_lease.hpp — a lane held by code that drives lanes
// itself: move-only, and it gives the lane back only once the GPU is done
// with it.
//
//   auto [ec, lease] = co_await ferrum::async_acquire(pool, asio::as_tuple(asio::use_awaitable));
//   ... record into lease->lists ...
//   const std::uint64_t value = lease.submit().value();
//   co_await ferrum::gpu::async_wait(executor, pool.device().queue().timeline(), value, asio::use_awaitable);
//   lease.reset();   // or let it go out of scope
//
// Giving a lease up (reset(), destruction, move-assignment over it) returns
// its lane to the pool at once when the timeline value of the lane's last
// submission is reached; otherwise it hands the lane to the pool's fence
// watch, which returns it to service once that value is reached (never, after
// a device failure) — never straight to a waiter while the GPU may still
// write it. A lane acquired through a lease records afresh: a replaying
// scheduler does not replay what a lease's holder recorded.
//
// Thread safety: one thread at a time uses a lease.
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/scheduler/lane_pool.hpp"

#include <cstdint>
#include <span>

namespace ferrum {

class lane_lease {
 public:
  // Holds nothing.
  lane_lease() noexcept = default;
  // Holds `held` of `pool`, just handed over (from async_acquire): the lease
  // keeps the hand-out it holds the lane under (lane::hold).
  lane_lease(lane_pool& pool, lane& held) noexcept
      : pool_(&pool), lane_(&held), hold_(held.hold.load(std::memory_order_relaxed)) {
    held.recorded = false;
  }
  lane_lease(lane_lease&& other) noexcept : pool_(other.pool_), lane_(other.lane_), hold_(other.hold_) {
    other.forget();
  }
  lane_lease& operator=(lane_lease&& other) noexcept {
    if (this != &other) {
      reset();
      pool_ = other.pool_;
      lane_ = other.lane_;
      hold_ = other.hold_;
      other.forget();
    }
    return *this;
  }
  lane_lease(const lane_lease&) = delete;
  lane_lease& operator=(const lane_lease&) = delete;
  ~lane_lease() { reset(); }

  [[nodiscard]] explicit operator bool() const noexcept { return lane_ != nullptr; }
  [[nodiscard]] lane& operator*() const noexcept { return *lane_; }
  [[nodiscard]] lane* operator->() const noexcept { return lane_; }
  [[nodiscard]] lane* get() const noexcept { return lane_; }
  [[nodiscard]] lane_pool* pool() const noexcept { return pool_; }
  // The hand-out the lease holds its lane under (lane::hold at the hand-over).
  [[nodiscard]] std::uint64_t hold() const noexcept { return hold_; }

  // Submits `lists` — each one of this lane's — on the pool's device with the
  // queue's next timeline value, records that value as the lane's submitted value and
  // returns it. Every list goes to the device's compute queue: the list of a
  // transfer node (a v2 plan under queue_placement::plan) on a device whose
  // transfer queue is its own is refused with queue_mismatch; waves submit
  // such lists to their queue. Errors: lane_not_held (an empty lease, or one
  // whose hand-out is over: its lane was given back through the pool),
  // foreign_object (a list that is not one of this lane's all_lists), and those of
  // queue::submit_next.
  [[nodiscard]] result<std::uint64_t> submit(std::span<gpu::command_list* const> lists);
  // Submits every list of the lane, its staging lists around its nodes'
  // (lane::all_lists).
  [[nodiscard]] result<std::uint64_t> submit() { return submit(lane_ != nullptr ? lane_->all_lists : empty_); }

  // Gives the lane up (see the top of this file); the lease is then empty.
  // A lease whose hand-out is over (its lane was given back through
  // lane_pool::release under its hold) gives nothing back: the lane is a
  // later holder's, or free.
  void reset() noexcept;

 private:
  void forget() noexcept {
    pool_ = nullptr;
    lane_ = nullptr;
  }

  static constexpr std::span<gpu::command_list* const> empty_{};
  lane_pool* pool_ = nullptr;
  lane* lane_ = nullptr;
  std::uint64_t hold_ = 0;
};

}  // namespace ferrum
