// ferrum/async/operation.hpp — what every asynchronous operation of ferrum
// keeps while it is pending: its handler, the outstanding work of the
// executor the handler will run on, its cancellation hook, and the buffer its
// completion is posted from. gpu::async_wait, async_acquire and a wave's
// completion are each an intrusive record (a timeline wait, a lane waiter, a
// wave) plus one of these.
//
//   struct my_op : some_intrusive_record {
//     ferrum::async::operation<Handler, IoExecutor> op;
//     static void completed(my_op* self) {              // any thread
//       self->op.post(ferrum::async::upcall_fn<my_op>(self));
//     }
//     static void finish(my_op* self) {                 // on the handler's executor
//       auto upcall = self->op.take();
//       ferrum::async::destroy(self, upcall.handler);   // memory back before the upcall
//       std::move(upcall.handler)(result);
//     }
//     static void abandon(my_op* self) { ... }          // the executor went first
//   };
//
// The rules are Asio's: the handler runs on its associated executor, or the
// I/O object's (`IoExecutor`) when it has none, never inside the initiating
// function; that executor's outstanding work is held until the handler has
// returned; the operation's memory comes from the handler's associated
// allocator (Asio's recycling allocator by default) and is freed before the
// upcall; the handler's cancellation slot is cleared at the upcall.
#pragma once

#include "ferrum/async/post_buffer.hpp"

#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/recycling_allocator.hpp>

#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace ferrum::async {

// Whether a cancellation of `type` asks for anything ferrum honours
// (terminal, partial or total; none and unknown bits are ignored).
[[nodiscard]] constexpr bool requested(boost::asio::cancellation_type_t type) noexcept {
  using boost::asio::cancellation_type;
  return (type & (cancellation_type::terminal | cancellation_type::partial | cancellation_type::total)) !=
         cancellation_type::none;
}

// Whether `type` allows an operation that already had side effects to stop
// (terminal or partial; total promises none).
[[nodiscard]] constexpr bool allows_side_effects(boost::asio::cancellation_type_t type) noexcept {
  using boost::asio::cancellation_type;
  return (type & (cancellation_type::terminal | cancellation_type::partial)) != cancellation_type::none;
}

// Room for one posted completion: the function object Asio wraps, with the
// executor's bookkeeping.
inline constexpr std::size_t post_entry_bytes = 192;

template <class Handler, class IoExecutor>
class operation {
 public:
  using work_executor =
      std::decay_t<decltype(boost::asio::prefer(std::declval<boost::asio::associated_executor_t<Handler, IoExecutor>>(),
                                                boost::asio::execution::outstanding_work.tracked))>;

  // What the upcall needs: the handler, and the work, held until the handler
  // has returned.
  struct upcall {
    Handler handler;
    work_executor work;
  };

  operation(Handler&& handler, const IoExecutor& io_executor)
      : handler_(std::move(handler)),
        executor_(boost::asio::prefer(boost::asio::get_associated_executor(handler_, io_executor),
                                      boost::asio::execution::outstanding_work.tracked)) {}

  [[nodiscard]] Handler& handler() noexcept { return handler_; }

  // Installs `Canceller(args...)` in the handler's cancellation slot, if one
  // is connected. Do it before the operation can complete on another thread.
  template <class Canceller, class... Args>
  void on_cancel(Args&&... args) {
    auto slot = boost::asio::get_associated_cancellation_slot(handler_);
    if (slot.is_connected()) slot.template emplace<Canceller>(std::forward<Args>(args)...);
  }

  // Posts `f` to the handler's executor, its memory from this operation.
  template <class Function>
  void post(Function&& f) noexcept {
    boost::asio::post(executor_, boost::asio::bind_allocator(post_allocator<void, post_entry_bytes>(&buffer_),
                                                             std::forward<Function>(f)));
  }

  // At the upcall, on the handler's executor: clears the cancellation slot
  // and moves the handler and the work out.
  [[nodiscard]] upcall take() noexcept {
    auto slot = boost::asio::get_associated_cancellation_slot(handler_);
    if (slot.is_connected()) slot.clear();
    return {std::move(handler_), std::move(executor_)};
  }

 private:
  Handler handler_;
  work_executor executor_;
  post_buffer<post_entry_bytes> buffer_;
};

// A posted completion that owns its operation: calling it runs
// `Op::finish(op)`; destroying it uncalled — an executor shut down with the
// post still queued — runs `Op::abandon(op)`, so that nothing the operation
// holds (a lane, a wave) is lost. `finish` lets what the handler throws go
// on out of the executor's run(), as from any Asio handler.
template <class Op>
class upcall_fn {
 public:
  explicit upcall_fn(Op* op) noexcept : op_(op) {}
  upcall_fn(upcall_fn&& other) noexcept : op_(std::exchange(other.op_, nullptr)) {}
  upcall_fn(const upcall_fn&) = delete;
  upcall_fn& operator=(const upcall_fn&) = delete;
  upcall_fn& operator=(upcall_fn&&) = delete;
  ~upcall_fn() {
    if (op_ != nullptr) Op::abandon(op_);
  }
  void operator()() { Op::finish(std::exchange(op_, nullptr)); }

 private:
  Op* op_;
};

template <class Op, class Handler>
using op_allocator_t = typename std::allocator_traits<
    boost::asio::associated_allocator_t<Handler, boost::asio::recycling_allocator<void>>>::template rebind_alloc<Op>;

// Makes an `Op` from `args` in memory from `handler`'s associated allocator.
template <class Op, class Handler, class... Args>
[[nodiscard]] Op* make(const Handler& handler, Args&&... args) {
  op_allocator_t<Op, Handler> allocator(
      boost::asio::get_associated_allocator(handler, boost::asio::recycling_allocator<void>()));
  Op* op = std::allocator_traits<op_allocator_t<Op, Handler>>::allocate(allocator, 1);
  try {
    ::new (static_cast<void*>(op)) Op(std::forward<Args>(args)...);
  } catch (...) {
    std::allocator_traits<op_allocator_t<Op, Handler>>::deallocate(allocator, op, 1);
    throw;
  }
  return op;
}

// Destroys `op` and frees its memory with `handler`'s associated allocator
// (`handler` moved out of the op already, or still in it).
template <class Op, class Handler>
void destroy(Op* op, const Handler& handler) noexcept {
  op_allocator_t<Op, Handler> allocator(
      boost::asio::get_associated_allocator(handler, boost::asio::recycling_allocator<void>()));
  op->~Op();
  std::allocator_traits<op_allocator_t<Op, Handler>>::deallocate(allocator, op, 1);
}

}  // namespace ferrum::async
