// ferrum/detail/pending_handler.hpp — the completion handler of a pending
// asynchronous operation, as every ferrum operation keeps it (internal).
//
// It holds the handler and the outstanding work of the handler's associated
// executor — or, for a handler with none, of the I/O object's executor
// (`IoExecutor`: the scheduler's, the lane pool's, the one given to
// gpu::async_wait), as Asio's own operations do — posts the upcall there,
// never inline, with memory from a post_buffer, and at the upcall clears the
// handler's cancellation slot and hands the handler and the work over.
// allocate_op / free_op make and free an operation with the allocator
// associated with its handler (Asio's recycling allocator by default).
//
//   auto* op = allocate_op<my_op>(handler, std::move(handler), io_executor, args...);
//   op->pending.post(op->buffer, [op] { op->finish(); });
//   // in finish(): auto upcall = pending.take(); free_op(this, upcall.handler); ...
#pragma once

#include "ferrum/detail/post_buffer.hpp"

#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/recycling_allocator.hpp>
#include <boost/asio/system_executor.hpp>

#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace ferrum::detail {

template <class Handler, class IoExecutor = boost::asio::system_executor>
class pending_handler {
 public:
  using work_executor = std::decay_t<decltype(boost::asio::prefer(
      std::declval<boost::asio::associated_executor_t<Handler, IoExecutor>>(),
      boost::asio::execution::outstanding_work.tracked))>;

  // What the upcall needs: the handler, and the executor's work, held until
  // the handler has returned.
  struct upcall {
    Handler handler;
    work_executor work;
  };

  pending_handler(Handler&& handler, const IoExecutor& io_executor)
      : handler_(std::move(handler)),
        executor_(boost::asio::prefer(boost::asio::get_associated_executor(handler_, io_executor),
                                      boost::asio::execution::outstanding_work.tracked)) {}

  [[nodiscard]] Handler& handler() noexcept { return handler_; }

  // Posts `f` to the handler's executor, its memory from `buffer`.
  template <class Function>
  void post(post_buffer& buffer, Function&& f) noexcept {
    boost::asio::post(executor_, boost::asio::bind_allocator(post_allocator<void>(&buffer), std::forward<Function>(f)));
  }

  // On the handler's executor, at the upcall: clears the cancellation slot
  // and moves the handler and the work out.
  [[nodiscard]] upcall take() noexcept {
    auto slot = boost::asio::get_associated_cancellation_slot(handler_);
    if (slot.is_connected()) slot.clear();
    return {std::move(handler_), std::move(executor_)};
  }

 private:
  Handler handler_;
  work_executor executor_;
};

template <class Op, class Handler>
using op_allocator_t = typename std::allocator_traits<
    boost::asio::associated_allocator_t<Handler, boost::asio::recycling_allocator<void>>>::template rebind_alloc<Op>;

// Makes an `Op` from `args` in memory from `handler`'s associated allocator.
template <class Op, class Handler, class... Args>
Op* allocate_op(const Handler& handler, Args&&... args) {
  op_allocator_t<Op, Handler> allocator(
      boost::asio::get_associated_allocator(handler, boost::asio::recycling_allocator<void>()));
  Op* op = allocator.allocate(1);
  ::new (static_cast<void*>(op)) Op(std::forward<Args>(args)...);
  return op;
}

// Destroys `op` and frees its memory with `handler`'s associated allocator
// (the handler already moved out of the op).
template <class Op, class Handler>
void free_op(Op* op, const Handler& handler) noexcept {
  op_allocator_t<Op, Handler> allocator(
      boost::asio::get_associated_allocator(handler, boost::asio::recycling_allocator<void>()));
  op->~Op();
  allocator.deallocate(op, 1);
}

}  // namespace ferrum::detail
