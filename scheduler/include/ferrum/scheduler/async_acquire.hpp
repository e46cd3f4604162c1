// ferrum/scheduler/async_acquire.hpp — awaiting a lane of a lane pool with any
// Asio completion token, for code that drives lanes itself.
//
//   auto [ec, lease] = co_await ferrum::async_acquire(pool, asio::as_tuple(asio::use_awaitable));
//   ... record into lease->list(n), lease.submit(), await the value it returns ...
//   // the lease gives the lane back when it goes (ferrum/scheduler/lane_lease.hpp)
//
// Completion signature: void(boost::system::error_code, ferrum::lane_lease).
// At once (posted, never inline) when a lane is free; otherwise the caller
// queues behind earlier waiters (first come, first served). Errors:
// all_lanes_quarantined, the code the pool was closed with, operation_aborted.
//
// Executor: the handler runs on its associated executor, or on the pool's
// (lane_pool::get_executor), whose outstanding work it keeps while pending.
// The initiation object carries the pool's executor.
//
// Cancellation: terminal, partial and total while queued — a cancelled
// waiter is removed and never handed a lane, so it has no side effect. A
// lane handed over is the handler's: a lease it drops gives the lane back.
//
// Allocation: the operation comes from the handler's associated allocator
// (Asio's recycling allocator by default); its completion is posted from a
// buffer inside it. Arguments are copied at initiation (a lazy token such as
// asio::deferred queues later, on the same pool).
#pragma once

#include "ferrum/async/operation.hpp"
#include "ferrum/scheduler/lane_lease.hpp"
#include "ferrum/scheduler/lane_pool.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/error.hpp>

#include <atomic>
#include <type_traits>
#include <utility>

namespace ferrum {
namespace detail {

// A lane pool waiter with an Asio handler.
template <class Handler>
class acquire_op final : public lane_waiter {
 public:
  acquire_op(Handler&& handler, lane_pool& pool)
      : lane_waiter(&handed), op_(std::move(handler), pool.get_executor()), pool_(&pool) {}

  static void start(Handler handler, lane_pool& pool) {
    auto* self = async::make<acquire_op>(handler, std::move(handler), pool);
    // Before the waiter is queued: from then on another thread may hand it a lane
    // and free it at any moment.
    self->op_.template on_cancel<canceller>(self);
    boost::system::error_code ec;
    if (held_lane l = acquire_lane(pool, *self, ec, &self->cancelled_); l || ec) handed(self, ec, std::move(l));
  }

  static void finish(acquire_op* self) {
    auto upcall = self->op_.take();
    const boost::system::error_code ec = self->result_;
    lane_lease lease = std::move(self->lease_);
    async::destroy(self, upcall.handler);
    std::move(upcall.handler)(ec, std::move(lease));
  }

  // The executor went with the completion queued: the lease gives the lane
  // back as the op goes.
  static void abandon(acquire_op* self) noexcept { async::destroy(self, self->op_.handler()); }

 private:
  struct canceller {
    explicit canceller(acquire_op* op) noexcept : self(op) {}
    acquire_op* self;
    void operator()(boost::asio::cancellation_type_t type) const noexcept {
      if (!async::requested(type)) return;
      // Either acquire_lane() sees the flag under the pool's lock, or the
      // waiter is queued and cancel_acquire() removes it; an op handed a lane is left alone.
      self->cancelled_.store(true);
      if (cancel_acquire(*self->pool_, *self)) handed(self, boost::asio::error::operation_aborted, {});
    }
  };

  // The lane pool's hand-over (any thread): the lane is leased at once, so
  // that it goes back to the lane pool whatever becomes of the completion.
  static void handed(lane_waiter* w, boost::system::error_code ec, held_lane l) noexcept {
    auto* self = static_cast<acquire_op*>(w);
    self->result_ = ec;
    if (l) self->lease_ = lane_lease(std::move(l));
    self->op_.post(async::upcall_fn<acquire_op>(self));
  }

  async::operation<Handler, lane_pool::executor_type> op_;
  lane_pool* pool_;
  std::atomic<bool> cancelled_{false};
  boost::system::error_code result_;
  lane_lease lease_;
};

// The initiation: carries the pool's executor, as Asio's initiations do.
class initiate_acquire {
 public:
  using executor_type = lane_pool::executor_type;

  explicit initiate_acquire(lane_pool& pool) noexcept : pool_(&pool) {}
  [[nodiscard]] executor_type get_executor() const noexcept { return pool_->get_executor(); }

  template <class Handler>
  void operator()(Handler&& handler) const {
    acquire_op<std::decay_t<Handler>>::start(std::forward<Handler>(handler), *pool_);
  }

 private:
  lane_pool* pool_;
};

}  // namespace detail

// Awaits a lane of `pool`; see the top of this file.
template <class CompletionToken = boost::asio::default_completion_token_t<lane_pool::executor_type>>
auto async_acquire(lane_pool& pool,
                   CompletionToken&& token = boost::asio::default_completion_token_t<lane_pool::executor_type>()) {
  return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code, lane_lease)>(
      detail::initiate_acquire(pool), token);
}

}  // namespace ferrum
