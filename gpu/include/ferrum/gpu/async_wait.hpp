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

#include "ferrum/detail/pending_handler.hpp"
#include "ferrum/gpu/timeline.hpp"

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/error.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace ferrum::gpu {
namespace detail {

template <class Handler>
class wait_op_impl final : public wait_op {
 public:
  wait_op_impl(Handler&& handler, timeline& target, std::uint64_t wait_value)
      : wait_op(wait_value, &complete), pending_(std::move(handler)), timeline_(&target) {}

  static void start(Handler handler, timeline& target, std::uint64_t wait_value) {
    auto* op = ferrum::detail::allocate_op<wait_op_impl>(handler, std::move(handler), target, wait_value);
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

  ferrum::detail::pending_handler<Handler> pending_;
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
