// ferrum/gpu/async_wait.hpp — awaiting a timeline value with any Asio
// completion token.
//
//   // in a coroutine
//   co_await ferrum::gpu::async_wait(queue.timeline(), value, asio::use_awaitable);
//   // with a future or a callback
//   std::future<void> f = ferrum::gpu::async_wait(queue.timeline(), value, asio::use_future);
//   ferrum::gpu::async_wait(queue.timeline(), value, [](boost::system::error_code ec) { ... });
//
// Completion signature: void(boost::system::error_code). The code is success
// once the timeline reached `value`; the timeline's failure (device_lost,
// device_shut_down) when it failed first; operation_aborted when cancelled.
// The handler runs on its associated executor (asio::system_executor when it
// has none), never inline inside async_wait, even when the value was already
// reached. While pending, the wait keeps that executor's work count.
//
// Cancellation: terminal, partial and total, through the handler's associated
// cancellation slot. Cancelling a wait removes only the wait; the GPU work
// behind the value runs on.
//
// Allocation: the operation's state comes from the handler's associated
// allocator (Asio's recycling allocator by default); the hand-off to the
// executor uses a buffer inside that state, so a wait allocates nothing more.
#pragma once

#include "ferrum/detail/post_buffer.hpp"
#include "ferrum/gpu/timeline.hpp"

#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/recycling_allocator.hpp>
#include <boost/asio/system_executor.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace ferrum::gpu {
namespace detail {

template <class Handler>
class wait_op_impl final : public wait_op {
  using handler_allocator =
      boost::asio::associated_allocator_t<Handler, boost::asio::recycling_allocator<void>>;
  using op_allocator = typename std::allocator_traits<handler_allocator>::template rebind_alloc<wait_op_impl>;
  using work_executor = std::decay_t<decltype(boost::asio::prefer(
      std::declval<boost::asio::associated_executor_t<Handler, boost::asio::system_executor>>(),
      boost::asio::execution::outstanding_work.tracked))>;

 public:
  static void start(Handler handler, timeline& target, std::uint64_t wait_value) {
    op_allocator allocator(boost::asio::get_associated_allocator(handler, boost::asio::recycling_allocator<void>()));
    wait_op_impl* op = allocator.allocate(1);
    ::new (static_cast<void*>(op)) wait_op_impl(std::move(handler), target, wait_value);
    auto slot = boost::asio::get_associated_cancellation_slot(op->handler_);
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

  wait_op_impl(Handler&& handler, timeline& target, std::uint64_t wait_value)
      : wait_op(wait_value, &complete),
        handler_(std::move(handler)),
        executor_(boost::asio::prefer(boost::asio::get_associated_executor(handler_, boost::asio::system_executor()),
                                      boost::asio::execution::outstanding_work.tracked)),
        timeline_(&target) {}

  // Called by the timeline (from a device thread or the initiating thread):
  // hands the upcall to the waiter's executor.
  static void complete(wait_op* base, boost::system::error_code ec) noexcept {
    auto* op = static_cast<wait_op_impl*>(base);
    op->result_ = ec;
    boost::asio::post(op->executor_,
                      boost::asio::bind_allocator(ferrum::detail::post_allocator<void>(&op->post_buffer_), [op] { op->finish(); }));
  }

  // Runs on the waiter's executor: frees the op, then calls the handler.
  void finish() noexcept {
    auto slot = boost::asio::get_associated_cancellation_slot(handler_);
    if (slot.is_connected()) slot.clear();
    Handler handler(std::move(handler_));
    const boost::system::error_code ec = result_;
    // The executor's work count is held until the handler has run.
    work_executor work(std::move(executor_));
    op_allocator allocator(boost::asio::get_associated_allocator(handler, boost::asio::recycling_allocator<void>()));
    this->~wait_op_impl();
    allocator.deallocate(this, 1);
    std::move(handler)(ec);
  }

  Handler handler_;
  work_executor executor_;
  timeline* timeline_;
  boost::system::error_code result_;
  ferrum::detail::post_buffer post_buffer_;
};

struct initiate_wait {
  template <class Handler>
  void operator()(Handler&& handler, timeline* target, std::uint64_t wait_value) const {
    wait_op_impl<std::decay_t<Handler>>::start(std::forward<Handler>(handler), *target, wait_value);
  }
};

}  // namespace detail

// Waits until `target` reaches `value`; see the top of this file.
template <class CompletionToken>
auto async_wait(timeline& target, std::uint64_t value, CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(detail::initiate_wait{},
                                                                                       token, &target, value);
}

}  // namespace ferrum::gpu
