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

#include "ferrum/async/operation.hpp"
#include "ferrum/gpu/timeline.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution/executor.hpp>
#include <boost/asio/is_executor.hpp>
#include <boost/asio/system_executor.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace ferrum::gpu {
namespace detail {

// A timeline wait with an Asio handler.
template <class Handler, class IoExecutor>
class wait_op final : public timeline_wait {
 public:
  wait_op(Handler&& handler, const IoExecutor& io_executor, timeline& target, std::uint64_t wait_value)
      : timeline_wait(wait_value, &completed), op_(std::move(handler), io_executor), timeline_(&target) {}

  static void start(Handler handler, const IoExecutor& io_executor, timeline& target, std::uint64_t wait_value) {
    auto* self = async::make<wait_op>(handler, std::move(handler), io_executor, target, wait_value);
    self->op_.template on_cancel<canceller>(self);
    (void)target.start_wait(self);  // a new wait: not pending anywhere
  }

  static void finish(wait_op* self) {
    auto upcall = self->op_.take();
    const boost::system::error_code ec = self->result_;
    async::destroy(self, upcall.handler);
    std::move(upcall.handler)(ec);
  }

  static void abandon(wait_op* self) noexcept { async::destroy(self, self->op_.handler()); }

 private:
  // (Constructors, not aggregates: a cancellation slot makes its handler
  // with parentheses, which clang 14 does not accept for an aggregate.)
  struct canceller {
    explicit canceller(wait_op* op) noexcept : self(op) {}
    wait_op* self;
    void operator()(boost::asio::cancellation_type_t type) const noexcept {
      // The timeline's lock decides between this cancellation and the device
      // completing the wait: only the one that unlinks it completes it.
      if (async::requested(type) && self->timeline_->cancel_wait(self))
        completed(self, boost::asio::error::operation_aborted);
    }
  };

  // From a device thread, the initiating thread or a canceller: hands the
  // upcall to the waiter's executor.
  static void completed(timeline_wait* base, boost::system::error_code ec) noexcept {
    auto* self = static_cast<wait_op*>(base);
    self->result_ = ec;
    self->op_.post(async::upcall_fn<wait_op>(self));
  }

  async::operation<Handler, IoExecutor> op_;
  timeline* timeline_;
  boost::system::error_code result_;
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
    wait_op<std::decay_t<Handler>, IoExecutor>::start(std::forward<Handler>(handler), executor_, *target, wait_value);
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
    (boost::asio::execution::executor<Executor> || boost::asio::is_executor<Executor>::value) auto async_wait(
        const Executor& executor, timeline& target, std::uint64_t value,
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
