// ferrum/gpu/async_wait.hpp — awaiting a timeline value with any Asio
// completion token.
//
//   // in a coroutine
//   co_await ferrum::gpu::async_wait(executor, queue.timeline(), value, asio::use_awaitable);
//   // with a future or a callback
//   std::future<void> f = ferrum::gpu::async_wait(pool.get_executor(), queue.timeline(), value, asio::use_future);
//   ferrum::gpu::async_wait(ctx.get_executor(), queue.timeline(), value, [](boost::system::error_code ec) { ... });
//
// Completion signature: void(boost::system::error_code). The code is success
// once the timeline reached `value`; the timeline's failure (device_lost,
// device_shut_down) when it failed first; operation_aborted when cancelled.
//
// Executor: the handler runs on its associated executor, or on `executor`
// when it has none — never inline inside async_wait, even when the value was
// already reached. The form without an executor uses asio::system_executor
// there, as asio::post(token) does. While pending, the wait keeps that
// executor's outstanding work, so an io_context::run() waiting for it does
// not return. The initiation object carries `executor` (for tokens such as
// experimental::use_promise that complete on it).
//
// Cancellation: terminal, partial and total, through the handler's associated
// cancellation slot. Cancelling a wait removes only the wait; the GPU work
// behind the value runs on, so a cancelled wait has no side effect.
//
// Allocation: the operation's state comes from the handler's associated
// allocator (Asio's recycling allocator by default); the hand-off to the
// executor uses a buffer inside that state, so a wait allocates nothing more.
//
// Arguments are copied when the operation is initiated (a lazy token such as
// asio::deferred starts the wait later, with the same timeline and value);
// the timeline must outlive the wait, as the device that owns it does.
#pragma once

#include "ferrum/detail/pending_handler.hpp"
#include "ferrum/gpu/timeline.hpp"

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution/executor.hpp>
#include <boost/asio/is_executor.hpp>
#include <boost/asio/system_executor.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace ferrum::gpu {
namespace detail {

template <class Handler, class IoExecutor>
class wait_op_impl final : public wait_op {
 public:
  wait_op_impl(Handler&& handler, const IoExecutor& io_executor, timeline& target, std::uint64_t wait_value)
      : wait_op(wait_value, &complete), pending_(std::move(handler), io_executor), timeline_(&target) {}

  static void start(Handler handler, const IoExecutor& io_executor, timeline& target, std::uint64_t wait_value) {
    auto* op =
        ferrum::detail::allocate_op<wait_op_impl>(handler, std::move(handler), io_executor, target, wait_value);
    auto slot = boost::asio::get_associated_cancellation_slot(op->pending_.handler());
    if (slot.is_connected()) slot.template emplace<cancel_handler>(op);
    target.start_wait(op);
  }

 private:
  struct cancel_handler {
    wait_op_impl* op;
    void operator()(boost::asio::cancellation_type_t type) const noexcept {
      using boost::asio::cancellation_type;
      if ((type & (cancellation_type::terminal | cancellation_type::partial | cancellation_type::total)) ==
          cancellation_type::none)
        return;
      // The timeline's lock decides between this cancellation and the device
      // completing the wait: only the one that unlinks the op completes it.
      if (op->timeline_->cancel_wait(op)) complete(op, boost::asio::error::operation_aborted);
    }
  };

  // Called by the timeline (from a device thread or the initiating thread):
  // hands the upcall to the waiter's executor.
  static void complete(wait_op* base, boost::system::error_code ec) noexcept {
    auto* op = static_cast<wait_op_impl*>(base);
    op->result_ = ec;
    op->pending_.post(op->post_buffer_, [op] { op->finish(); });
  }

  // Runs on the waiter's executor: frees the op, then calls the handler.
  void finish() noexcept {
    auto upcall = pending_.take();
    const boost::system::error_code ec = result_;
    ferrum::detail::free_op(this, upcall.handler);
    std::move(upcall.handler)(ec);
  }

  ferrum::detail::pending_handler<Handler, IoExecutor> pending_;
  timeline* timeline_;
  boost::system::error_code result_;
  ferrum::detail::post_buffer post_buffer_;
};

// The initiation: carries the I/O executor, as Asio's initiations do.
template <class IoExecutor>
class initiate_wait {
 public:
  using executor_type = IoExecutor;

  explicit initiate_wait(const IoExecutor& executor) noexcept : executor_(executor) {}
  [[nodiscard]] executor_type get_executor() const noexcept { return executor_; }

  template <class Handler>
  void operator()(Handler&& handler, timeline* target, std::uint64_t wait_value) const {
    wait_op_impl<std::decay_t<Handler>, IoExecutor>::start(std::forward<Handler>(handler), executor_, *target,
                                                           wait_value);
  }

 private:
  IoExecutor executor_;
};

}  // namespace detail

// Waits until `target` reaches `value`, completing on `executor` unless the
// handler has an executor of its own; see the top of this file.
template <class Executor, class CompletionToken = boost::asio::default_completion_token_t<Executor>>
  // The timeline check first: the executor traits do not compile for every
  // class (a `final` timeline), and a conjunction stops at its first failure.
  requires(!std::is_base_of_v<timeline, Executor>) &&
          (boost::asio::execution::executor<Executor> || boost::asio::is_executor<Executor>::value)
auto async_wait(const Executor& executor, timeline& target, std::uint64_t value,
                CompletionToken&& token = boost::asio::default_completion_token_t<Executor>()) {
  return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
      detail::initiate_wait<Executor>(executor), token, &target, value);
}

// Waits until `target` reaches `value`, completing on the handler's
// associated executor (asio::system_executor when it has none).
template <class CompletionToken>
auto async_wait(timeline& target, std::uint64_t value, CompletionToken&& token) {
  return async_wait(boost::asio::system_executor(), target, value, std::forward<CompletionToken>(token));
}

}  // namespace ferrum::gpu
