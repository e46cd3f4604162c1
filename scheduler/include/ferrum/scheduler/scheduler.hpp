// ferrum/scheduler/scheduler.hpp — submission waves: the hot path.
//
// A scheduler owns one lane pool per bucket of a compiled program and runs
// each wave as a coroutine:
//   1. pick the bucket: the smallest of the request's class covering its extent;
//   2. await a lane of that bucket (backpressure: at most `lanes` in flight);
//   3. bind the compiled layout to the lane (execution_binding, every check);
//   4. fan the nodes out to the encoder, in chunks on the scheduler's
//      executor; fan in when all are done;
//   5. submit the nodes' command lists, signalling the next timeline value;
//   6. await that terminal fence (with a timeout);
//   7. release the lane — only now — and complete.
//
//   auto s = ferrum::scheduler::create(plan, program, device, pool.get_executor(), {}).value();
//   auto encode = [](const ferrum::encode_context& c) { c.commands.fill(c.slot, 0u).value(); };
//   s->async_submit({"step", {1, 64, 1}}, encode, [](boost::system::error_code ec, ferrum::wave_report r) {});
//
// Failures: an encoder that throws fails the wave with encoder_failed (the
// node and message in the report) and submits nothing; a wave cancelled
// before submit completes with operation_aborted and releases its lane at
// once, one cancelled after submit completes with operation_aborted at once
// but keeps its lane until the fence is reached; a fence timeout fails the
// wave with fence_timeout and quarantines the lane until the fence is
// reached; a lost device fails every wave in flight and later with
// device_lost. In steady state a wave allocates nothing.
#pragma once

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/error.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/detail/wave_completion.hpp"
#include "ferrum/scheduler/lane_pool.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_type.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>

namespace ferrum {

class trace_recorder;

struct scheduler_options {
  // How long a wave awaits its terminal fence before it fails with
  // fence_timeout and its lane is quarantined.
  std::chrono::milliseconds fence_timeout{5000};
  // Encoder tasks per wave: nodes are split into at most this many
  // contiguous chunks, one posted per chunk and the last run by the wave
  // itself. Match it to the executor's threads; 1 encodes inline.
  std::size_t encoder_tasks = 1;
  // Replay: each lane's command lists are recorded by the first wave that
  // succeeds on it and submitted again, unchanged, by the lane's later waves
  // (encode_context::replay), so that a wave's CPU cost no longer grows with
  // the commands it records. Any failure before submit makes the lane's next
  // wave record afresh.
  bool replay = false;
  // Where the waves' spans go (ferrum/scheduler/trace.hpp); none when null.
  // Must outlive the scheduler.
  trace_recorder* trace = nullptr;
};

// Counters over the scheduler's life.
struct scheduler_stats {
  std::uint64_t started = 0;
  std::uint64_t completed = 0;  // completed successfully
  std::uint64_t failed = 0;     // completed with an error other than operation_aborted
  std::uint64_t cancelled = 0;  // completed with operation_aborted
  std::uint32_t max_in_flight = 0;  // most waves holding a lane at once, over all buckets
  std::uint32_t in_flight = 0;      // waves holding a lane now
  std::uint64_t live = 0;           // waves accepted and not yet completed and delivered
};

namespace detail {
class scheduler_impl;
class wave;
// An encoder by reference: the object and how to call it.
struct encoder_ref {
  void* object;
  // Exactly one is set: a plain encoder, or a coroutine encoder.
  void (*call)(void* object, const encode_context& context);
  boost::asio::awaitable<void> (*spawn)(void* object, const encode_context& context);

  template <class Encoder>
  static encoder_ref of(Encoder& encode) noexcept {
    encoder_ref ref{static_cast<void*>(std::addressof(encode)), nullptr, nullptr};
    if constexpr (std::is_same_v<std::invoke_result_t<Encoder&, const encode_context&>, boost::asio::awaitable<void>>) {
      ref.spawn = [](void* object, const encode_context& c) { return (*static_cast<Encoder*>(object))(c); };
    } else {
      ref.call = [](void* object, const encode_context& c) { (*static_cast<Encoder*>(object))(c); };
    }
    return ref;
  }
};
// Installed in a wave's cancellation slot: forwards a cancellation request.
struct wave_canceller {
  wave* target;
  void operator()(boost::asio::cancellation_type_t type) const noexcept;
};
}  // namespace detail

class scheduler {
 public:
  // Makes a lane pool per bucket of `program` (compiled from `p`) on
  // `device`, waves running on `executor`. Errors: no_binding_layout,
  // invalid_device_option (encoder_tasks 0, a fence timeout not above 0), and
  // the device's allocation errors.
  [[nodiscard]] static result<std::unique_ptr<scheduler>> create(const plan& p,
                                                                 std::shared_ptr<const compiled_program> program,
                                                                 gpu::device& device,
                                                                 boost::asio::any_io_executor executor,
                                                                 const scheduler_options& options = {});

  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;
  // Stops accepting waves, fails those still queued for a lane with
  // scheduler_shut_down, and blocks until every wave has completed and its
  // completion was delivered (a wave ends within the fence timeout after its
  // submit, plus its encoders' time); lanes still in quarantine then go to
  // the device, which frees them once their fence is reached. Do not destroy
  // a scheduler from a thread its waves or their handlers need (an
  // executor's only thread): await async_shutdown first there.
  ~scheduler();

  // Runs one wave; see the top of this file. `encode` is called for every
  // node and must stay alive until the wave completes. It is a plain callable
  // `void(const encode_context&)` or a coroutine
  // `asio::awaitable<void>(const encode_context&)`; a coroutine encoder may
  // suspend (its node's context stays valid until it returns), and its frame
  // comes from Asio's per-thread recycling rather than the wave's own memory. Completion signature:
  // void(boost::system::error_code, wave_report), on the handler's associated
  // executor. Errors: no_bucket_fits, all_lanes_quarantined,
  // scheduler_shut_down, the bind checks' codes, encoder_failed,
  // fence_timeout, device_lost, device_shut_down, operation_aborted.
  // Cancellation: terminal, partial and total, through the handler's
  // associated cancellation slot.
  template <class Encoder, class CompletionToken>
  auto async_submit(const wave_request& request, Encoder& encode, CompletionToken&& token) {
    const detail::encoder_ref ref = detail::encoder_ref::of(encode);
    return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code, wave_report)>(
        [](auto handler, scheduler* self, const wave_request* r, detail::encoder_ref e) {
          auto slot = boost::asio::get_associated_cancellation_slot(handler);
          detail::wave* w = self->prepare(*r, e);
          completion_of(w).emplace(std::move(handler));
          if (slot.is_connected()) slot.template emplace<detail::wave_canceller>(w);
          self->launch(w);
        },
        token, this, &request, ref);
  }
  // An encoder passed as a temporary would be gone before the wave ran.
  template <class Encoder, class CompletionToken>
  auto async_submit(const wave_request&, const Encoder&&, CompletionToken&&) = delete;

  // Stops accepting waves (later ones fail with scheduler_shut_down), lets
  // every wave accepted before run to its end, and completes once all of
  // them have completed and every quarantined lane's fence was reached (or
  // its device failed): the GPU then holds no lane. A fence that never
  // comes (a hung GPU that is never declared lost) keeps it waiting. Completion signature: void(boost::system::error_code),
  // on the handler's associated executor.
  template <class CompletionToken>
  auto async_shutdown(CompletionToken&& token) {
    return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
        [](auto handler, scheduler* self) {
          self->shutdown(boost::asio::any_completion_handler<void(boost::system::error_code)>(std::move(handler)));
        },
        token, this);
  }

  [[nodiscard]] std::span<const std::unique_ptr<lane_pool>> pools() const noexcept;
  [[nodiscard]] scheduler_stats stats() const noexcept;
  [[nodiscard]] const compiled_program& program() const noexcept;
  [[nodiscard]] gpu::device& device() const noexcept;

 private:
  explicit scheduler(std::unique_ptr<detail::scheduler_impl> impl) noexcept;

  // Makes the next wave (its frame recycled), not started yet.
  detail::wave* prepare(const wave_request& request, detail::encoder_ref encode);
  static detail::wave_completion& completion_of(detail::wave* w) noexcept;
  // Starts a prepared wave; it runs on this thread up to its first
  // suspension (a lane to wait for, or encoders posted to the executor).
  void launch(detail::wave* w) noexcept;
  void shutdown(boost::asio::any_completion_handler<void(boost::system::error_code)> handler);

  std::unique_ptr<detail::scheduler_impl> impl_;
};

}  // namespace ferrum
