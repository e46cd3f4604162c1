// wave_state.hpp (private) — everything one wave needs while it runs, kept in
// a recycled object so that a wave in steady state allocates nothing.
#pragma once

#include "ferrum/scheduler/detail/wave_completion.hpp"
#include "ferrum/scheduler/lane_pool.hpp"
#include "ferrum/scheduler/scheduler.hpp"
#include "ferrum/scheduler/trace.hpp"
#include "recycling.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <coroutine>
#include <mutex>
#include <optional>
#include <vector>

namespace ferrum::detail {

class scheduler_impl;

// Where a wave is, as far as a cancellation needs to know.
enum class wave_step : std::uint8_t { prepared, acquiring, encoding, submitted };

class wave {
 public:
  // `traced`: the scheduler has a trace recorder (room for node spans).
  wave(scheduler_impl& scheduler, const boost::asio::any_io_executor& executor, std::size_t slab_slots,
       std::size_t nodes, bool traced)
      : owner(scheduler),
        fence_op(this),
        timer(executor),
        slab(slab_slots),
        waiter(this),
        node_bindings(nodes),
        contexts(nodes),
        node_spans(traced ? nodes : 0) {}
  wave(const wave&) = delete;
  wave& operator=(const wave&) = delete;

  // Clears what the last use left, for the next.
  void reset() noexcept;

  // Completes the wave's operation with `ec` (the first call wins): posts the
  // handler with the report to the handler's executor. Any thread.
  void finish(boost::system::error_code ec) noexcept;

  // Resumes the wave's coroutine on the scheduler's executor.
  void resume_later() noexcept;

  [[nodiscard]] slab_allocator<void> allocator() noexcept { return slab_allocator<void>(&slab); }

  scheduler_impl& owner;
  std::uint64_t id = 0;
  lane_pool* pool = nullptr;
  encoder_ref encode{};
  // An error found before the wave started (no bucket fits, shut down).
  boost::system::error_code early_error;

  wave_completion completion;
  wave_outcome outcome;
  // The coroutine and the delivery of the completion each hold one; the last
  // to let go recycles the wave.
  std::atomic<int> refs{0};

  // A cancellation of any type (honoured while the wave waits for a lane),
  // and one of type terminal or partial (honoured at every step).
  std::atomic<bool> cancel_queued{false};
  std::atomic<bool> cancel_started{false};
  std::atomic<wave_step> step{wave_step::prepared};

  // Guards `completed` and `report` once the wave may complete from another
  // thread (a cancellation, a fence timeout).
  std::mutex mutex;
  bool completed = false;
  wave_report report;

  std::coroutine_handle<> continuation;

  // The fence: the wave's wait on the timeline, a timer for the timeout,
  // and which of the two came first.
  struct fence_wait : gpu::detail::wait_op {
    explicit fence_wait(wave* w) noexcept : gpu::detail::wait_op(0, &wave::fence_reached), self(w) {}
    wave* self;
  };
  fence_wait fence_op;
  boost::asio::steady_timer timer;
  std::atomic<int> fence_pending{0};
  std::atomic<int> fence_first{0};  // 0: none yet, 1: the fence, 2: the timeout
  boost::system::error_code fence_ec;

  handler_slab slab;

  // Acquisition: the pool grants `held` (or an error) through the waiter.
  struct wave_waiter : lane_pool::waiter {
    explicit wave_waiter(wave* w) noexcept : lane_pool::waiter(&wave::granted), self(w) {}
    wave* self;
  };
  wave_waiter waiter;
  lane* held = nullptr;
  boost::system::error_code grant_ec;

  // Binding and encoding.
  std::optional<execution_binding> binding;
  // The lane's lists are submitted as recorded before (no begin/end).
  bool replay = false;
  std::size_t chunk_count = 0;
  std::atomic<std::size_t> chunks_left{0};
  std::atomic<bool> encode_failed{false};
  boost::system::error_code encode_ec;
  // Per node, what its encoder is given; kept here because a coroutine
  // encoder may outlive the chunk that started it.
  std::vector<std::optional<node_binding>> node_bindings;
  std::vector<std::optional<encode_context>> contexts;
  // When tracing: each node's span, written by its encoder's task and
  // recorded with the wave's phases at its end (an entry of another wave id
  // is a node this wave did not run).
  std::vector<trace_span> node_spans;

 private:
  static void granted(lane_pool::waiter* w, boost::system::error_code ec, lane* l) noexcept;
  // The fence wait's completion (on the device's thread, or inline when the
  // value was reached already): hands over to the executor.
  static void fence_reached(gpu::detail::wait_op* op, boost::system::error_code ec) noexcept;
};

}  // namespace ferrum::detail
