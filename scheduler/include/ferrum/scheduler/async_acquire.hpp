// ferrum/scheduler/async_acquire.hpp — awaiting a lane of a lane pool with any
// Asio completion token, for code that drives lanes itself (the scheduler's
// waves use the pool's waiter directly).
//
//   auto [ec, lane] = co_await ferrum::async_acquire(pool, asio::as_tuple(asio::use_awaitable));
//   ... record into lane->lists, submit, await lane->fence ...
//   pool.release(*lane).value();   // only once lane->fence is reached
//
// Completion signature: void(boost::system::error_code, ferrum::lane*). At
// once (posted, never inline) when a lane is free; otherwise the caller
// queues behind earlier waiters (first come, first served). Errors:
// all_lanes_quarantined, the code the pool was closed with, operation_aborted.
// The lane is the caller's until it gives it back with release() (after its
// last fence) or quarantine(). The handler runs on its associated executor.
//
// Cancellation: terminal, partial and total while queued; a cancelled
// waiter is removed and never handed a lane.
#pragma once

#include "ferrum/detail/pending_handler.hpp"
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
      : lane_pool::waiter(&granted), pending_(std::move(handler)), pool_(&pool) {}

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
    lane* l = lane_;
    free_op(this, upcall.handler);
    std::move(upcall.handler)(ec, l);
  }

  pending_handler<Handler> pending_;
  lane_pool* pool_;
  std::atomic<bool> cancelled_{false};
  boost::system::error_code result_;
  lane* lane_ = nullptr;
  post_buffer post_buffer_;
};

struct initiate_acquire {
  template <class Handler>
  void operator()(Handler&& handler, lane_pool* pool) const {
    acquire_op<std::decay_t<Handler>>::start(std::forward<Handler>(handler), *pool);
  }
};

}  // namespace detail

// Awaits a lane of `pool`; see the top of this file.
template <class CompletionToken>
auto async_acquire(lane_pool& pool, CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code, lane*)>(
      detail::initiate_acquire{}, token, &pool);
}

}  // namespace ferrum
