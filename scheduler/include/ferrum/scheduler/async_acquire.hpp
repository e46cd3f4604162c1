// ferrum/scheduler/async_acquire.hpp — awaiting a lane of a lane pool with any
// Asio completion token, for code that drives lanes itself.
//
//   auto [ec, lease] = co_await ferrum::async_acquire(pool, asio::as_tuple(asio::use_awaitable));
//   ... record into lease->lists, lease.submit(), await the value it returns ...
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
// granted lane is the handler's: a lease it drops gives the lane back.
//
// Allocation: the operation comes from the handler's associated allocator
// (Asio's recycling allocator by default); its completion is posted from a
// buffer inside it. Arguments are copied at initiation (a lazy token such as
// asio::deferred queues later, on the same pool).
#pragma once

#include "ferrum/detail/pending_handler.hpp"
#include "ferrum/scheduler/lane_lease.hpp"
#include "ferrum/scheduler/lane_pool.hpp"

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/error.hpp>

#include <atomic>
#include <type_traits>
#include <utility>

namespace ferrum {
namespace detail {

template <class Handler>
class acquire_op final : public lane_pool::waiter {
 public:
  acquire_op(Handler&& handler, lane_pool& pool)
      : lane_pool::waiter(&granted), pending_(std::move(handler), pool.get_executor()), pool_(&pool) {}

  static void start(Handler handler, lane_pool& pool) {
    auto* op = allocate_op<acquire_op>(handler, std::move(handler), pool);
    // The canceller goes in before the op is queued: once queued, another
    // thread may grant it and free it at any moment.
    auto slot = boost::asio::get_associated_cancellation_slot(op->pending_.handler());
    if (slot.is_connected()) slot.template emplace<canceller>(op);
    boost::system::error_code ec;
    if (lane* l = pool.acquire(*op, ec, &op->cancelled_); l != nullptr || ec) granted(op, ec, l);
  }

 private:
  struct canceller {
    acquire_op* op;
    void operator()(boost::asio::cancellation_type_t type) const noexcept {
      using boost::asio::cancellation_type;
      if ((type & (cancellation_type::terminal | cancellation_type::partial | cancellation_type::total)) ==
          cancellation_type::none)
        return;
      // Either acquire() sees the flag under the pool's lock, or the waiter
      // is queued and cancel() removes it; a granted op is left alone.
      op->cancelled_.store(true);
      if (op->pool_->cancel(*op)) granted(op, boost::asio::error::operation_aborted, nullptr);
    }
  };

  // Hands the upcall to the handler's executor.
  static void granted(lane_pool::waiter* w, boost::system::error_code ec, lane* l) noexcept {
    auto* op = static_cast<acquire_op*>(w);
    op->result_ = ec;
    op->lane_ = l;
    op->pending_.post(op->post_buffer_, [op] { op->finish(); });
  }

  void finish() noexcept {
    auto upcall = pending_.take();
    const boost::system::error_code ec = result_;
    lane_lease lease = lane_ != nullptr ? lane_lease(*pool_, *lane_) : lane_lease();
    free_op(this, upcall.handler);
    std::move(upcall.handler)(ec, std::move(lease));
  }

  pending_handler<Handler, lane_pool::executor_type> pending_;
  lane_pool* pool_;
  std::atomic<bool> cancelled_{false};
  boost::system::error_code result_;
  lane* lane_ = nullptr;
  post_buffer post_buffer_;
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
