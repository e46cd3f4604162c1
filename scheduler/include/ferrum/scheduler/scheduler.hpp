// ferrum/scheduler/scheduler.hpp — submission waves: the hot path.
//
// A scheduler owns one lane pool per bucket of a compiled program and runs
// each wave as a coroutine:
//   1. pick the bucket: the smallest of the request's class covering its extent;
//   2. await a lane of that bucket (backpressure: at most `lanes` in flight);
//   3. take the lane's binding: the layout bound to the lane's arena with
//      every check of execution_binding::bind, once, when the lane was made;
//   4. fan the nodes out to the encoder, in chunks on the scheduler's
//      executor; fan in when all are done;
//   5. submit the nodes' command lists, signalling the next timeline value;
//   6. await that value: the wave's fence (with a timeout);
//   7. release the lane — only now — and complete.
//
//   auto program = std::make_shared<const ferrum::compiled_program>(ferrum::compile(plan).value());
//   auto s = ferrum::scheduler::create(program, device, pool.get_executor(), {}).value();
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
//
// Several devices: made over K devices, the scheduler has a lane pool per
// (device, bucket), and the pools of a bucket serve one queue of waves: a
// wave takes the lane free longest, on any device, or waits for the first
// lane of its bucket that frees on any of them. Each wave runs on one device
// (wave_report::device); encoders that need device objects (kernels) pick
// them by the list's device (encode_context::commands.device()). A lost
// device fails the waves on it with device_lost and takes its lanes out of
// service for good; later waves run on the others, and fail with
// device_lost only once every device is lost.
#pragma once

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/error.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/detail/completion_waiter.hpp"
#include "ferrum/scheduler/detail/wave_submission.hpp"
#include "ferrum/scheduler/lane_pool.hpp"
#include "ferrum/scheduler/scheduler_options.hpp"
#include "ferrum/scheduler/wave.hpp"
#include "ferrum/scheduler/wave_readback.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/prefer.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <type_traits>

namespace ferrum {

namespace detail {
class scheduler_impl;
}  // namespace detail

class scheduler {
 public:
  // The executor waves run on, and the one a completion handler without an
  // associated executor of its own is invoked on.
  using executor_type = boost::asio::any_io_executor;

  // Makes a lane pool per bucket of `program` on `device` from the
  // program alone (each bucket's lane recipe), waves running on `executor`.
  // Errors: invalid_scheduler_option (no program, encoder_tasks 0, a fence
  // timeout not above 0), timestamps_unsupported (gpu_timestamps on a
  // device without them), and the device's allocation errors.
  [[nodiscard]] static result<std::unique_ptr<scheduler>> create(std::shared_ptr<const compiled_program> program,
                                                                 gpu::device& device, executor_type executor,
                                                                 const scheduler_options& options = {});
  // The same over several devices (see the top of this file): a lane pool
  // per (device, bucket). More errors: invalid_scheduler_option (no device,
  // a null one, one given twice).
  [[nodiscard]] static result<std::unique_ptr<scheduler>> create(std::shared_ptr<const compiled_program> program,
                                                                 std::span<gpu::device* const> devices,
                                                                 executor_type executor,
                                                                 const scheduler_options& options = {});

  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;
  // Stops accepting waves, fails those still queued for a lane with
  // scheduler_shut_down, and blocks until every wave has completed and its
  // completion was delivered (a wave ends within the fence timeout after its
  // submit, plus its encoders' time); lanes still in quarantine then go to
  // the device, which frees them once their fence is reached, and a pending
  // async_shutdown completes with operation_aborted. Do not destroy a
  // scheduler from a thread its waves or their handlers need (an executor's
  // only thread): await async_shutdown first there. What encoders recorded
  // into quarantined lanes' lists (kernels, other arenas) may still run on
  // the device after this returns: keep those alive until async_shutdown
  // has completed, which waits for every fence.
  ~scheduler();

  [[nodiscard]] executor_type get_executor() const noexcept;

  // Runs one wave; see the top of this file and README "Asynchronous
  // operations".
  //
  // `encode` is called for every node: a callable
  // `void(const encode_context&)` or a coroutine
  // `asio::awaitable<void>(const encode_context&)` — a lambda (const or
  // not), a function or function pointer, a std::function, a member of a
  // longer-lived object. It is held by reference (a function by pointer) and
  // must outlive the wave; a temporary is refused at compile time. A
  // coroutine encoder may suspend (its node's context stays valid until it
  // returns); its frame comes from Asio's per-thread recycling.
  //
  // Arguments: the request is copied when async_submit is called (nothing of
  // it is read later, so a lazy token may start the wave after the request
  // is gone), and resolved to its bucket when the wave is initiated — on the
  // program current then (async_replace).
  //
  // Completion signature: void(boost::system::error_code, wave_report). The
  // handler runs on its associated executor, or this scheduler's; the wave
  // keeps that executor's outstanding work until the handler has run. Errors:
  // invalid_wave_request, no_bucket_fits, all_lanes_quarantined,
  // scheduler_shut_down, the bind checks' codes, encoder_failed,
  // fence_timeout, device_lost, device_shut_down, operation_aborted.
  //
  // Cancellation, through the handler's associated cancellation slot:
  // terminal, partial and total while the wave waits for a lane (nothing has
  // happened yet: the wave leaves the queue); terminal and partial while its
  // nodes are encoded (the rest are skipped, nothing is submitted, the lane
  // goes back) and after submit (the wave completes at once; its lane stays
  // out of the pool until the fence is reached). A request of type total
  // alone is ignored once encoding began: the wave then has side effects.
  //
  // Allocation: none in steady state. The wave's state, its handler (when it
  // fits, as every Asio token's does) and the posts that complete it live in
  // the scheduler's recycled waves, so the handler's associated allocator is
  // not used. A larger handler's memory comes from that allocator and goes
  // back to it before the handler runs, as Asio's rule is.
  template <class Encoder, class CompletionToken = boost::asio::default_completion_token_t<executor_type>>
  auto async_submit(const wave_request& request, Encoder&& encode,
                    CompletionToken&& token = boost::asio::default_completion_token_t<executor_type>()) {
    static_assert(std::is_lvalue_reference_v<Encoder> || std::is_pointer_v<std::remove_cvref_t<Encoder>>,
                  "an encoder must outlive its wave: pass an lvalue (or a function pointer), not a temporary");
    return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code, wave_report)>(
        initiate_submit(this), token, detail::copied_request(request),
        detail::encoder_ref::of(std::forward<Encoder>(encode)));
  }

  // Replaces the program waves run on, while waves run: waves initiated
  // after this operation's initiation run on `program`; those initiated
  // before finish on the program they were accepted on. `program`'s lane
  // pools are made at initiation, as create makes them (every lane, or none
  // with lane_making::when_needed); the replaced program's lanes go once
  // nothing of it runs any more — its waves recycled, its lanes back from
  // their fences (quarantined ones when they come back; those of a lost
  // device for good), leases taken through its lane pools given back — and
  // the operation completes then, its lanes' memory given back to the
  // device. Replay recordings, timestamp pools and persistent resources
  // belong to their lanes and go with them: a persistent resource starts
  // fresh on the new program (encode_context::lane_previous_wave is 0 on a
  // lane's first wave). Replacements may overlap; each completes when the
  // program it replaced has gone. pools() and program() say the current
  // program's from the initiation on.
  //
  // Completion signature: void(boost::system::error_code), on the handler's
  // associated executor or this scheduler's, whose outstanding work it
  // keeps while pending; its associated allocator holds the pending
  // handler. Errors (nothing replaced): invalid_scheduler_option (no
  // program), scheduler_shut_down (after async_shutdown or during the
  // destruction), and those of create's lane pools (missing_domain_layout,
  // timestamps_unsupported, the device's allocation errors). A scheduler
  // destroyed first completes it with operation_aborted. Cancellation:
  // none — the replacement is made at initiation; what remains is waiting
  // for the old program to go, which nothing would stop.
  template <class CompletionToken = boost::asio::default_completion_token_t<executor_type>>
  auto async_replace(std::shared_ptr<const compiled_program> program,
                     CompletionToken&& token = boost::asio::default_completion_token_t<executor_type>()) {
    return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(initiate_replace(this), token,
                                                                                         std::move(program));
  }

  // Stops accepting waves (later ones fail with scheduler_shut_down), lets
  // every wave accepted before run to its end, and completes once all of
  // them have completed and every quarantined lane's submitted value was reached (or
  // its device failed): the GPU then holds no lane. A fence that never comes
  // (a hung GPU that is never declared lost) keeps it waiting, until the
  // scheduler is destroyed: it then completes with operation_aborted.
  // Completion signature: void(boost::system::error_code), on the handler's
  // associated executor or this scheduler's, whose outstanding work it keeps
  // while pending. Cancellation: none (it is not an operation one stops).
  template <class CompletionToken = boost::asio::default_completion_token_t<executor_type>>
  auto async_shutdown(CompletionToken&& token = boost::asio::default_completion_token_t<executor_type>()) {
    return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(initiate_shutdown(this),
                                                                                         token);
  }

  // Every lane pool of the current program, device-major: device d's pool
  // of bucket b (the program's bucket order) is pools()[d * buckets + b];
  // pools(d) is device d's alone. Valid until a replacement of the program
  // completes.
  [[nodiscard]] std::span<const std::unique_ptr<lane_pool>> pools() const noexcept;
  [[nodiscard]] std::span<const std::unique_ptr<lane_pool>> pools(std::size_t device) const noexcept;
  [[nodiscard]] scheduler_stats stats() const noexcept;
  // Gives the device back the memory of every free lane (their fences are
  // reached) of every bucket; each is made again when a wave needs it.
  // Lanes held, on their way back or quarantined keep theirs. Returns the
  // bytes given back. Any thread.
  std::uint64_t trim();
  // The current program (async_replace).
  [[nodiscard]] std::shared_ptr<const compiled_program> program() const noexcept;
  // The first device, and device `index` (below device_count()).
  [[nodiscard]] gpu::device& device(std::size_t index = 0) const noexcept;
  [[nodiscard]] std::size_t device_count() const noexcept;

 private:
  // The initiations carry the scheduler's executor, as Asio's do (tokens
  // such as experimental::use_promise complete on it).
  class initiation_base {
   public:
    using executor_type = scheduler::executor_type;
    explicit initiation_base(scheduler* self) noexcept : self_(self) {}
    [[nodiscard]] executor_type get_executor() const noexcept { return self_->get_executor(); }

   protected:
    scheduler* self_;
  };

  class initiate_submit : public initiation_base {
   public:
    using initiation_base::initiation_base;
    template <class Handler>
    void operator()(Handler&& handler, const detail::copied_request& request, detail::encoder_ref encode) const {
      using handler_type = std::decay_t<Handler>;
      // Some tokens (use_promise) pass the handler as an lvalue: taken over here.
      handler_type owned(std::forward<Handler>(handler));
      self_->submit(
          request, encode,
          {&owned, [](void* h, detail::wave_completion& completion, const boost::asio::any_io_executor& io_executor) {
             completion.emplace(std::move(*static_cast<handler_type*>(h)), io_executor);
           }});
    }
  };

  // A void(error_code) handler kept pending, with the outstanding work of
  // the executor it will run on, taken now.
  template <class Handler>
  detail::completion_waiter pending(Handler&& handler) const {
    auto work = boost::asio::prefer(boost::asio::get_associated_executor(handler, get_executor()),
                                    boost::asio::execution::outstanding_work.tracked);
    return {boost::asio::any_completion_handler<void(boost::system::error_code)>(std::forward<Handler>(handler)),
            executor_type(std::move(work))};
  }

  class initiate_shutdown : public initiation_base {
   public:
    using initiation_base::initiation_base;
    template <class Handler>
    void operator()(Handler&& handler) const {
      self_->shutdown(self_->pending(std::forward<Handler>(handler)));
    }
  };

  class initiate_replace : public initiation_base {
   public:
    using initiation_base::initiation_base;
    template <class Handler>
    void operator()(Handler&& handler, std::shared_ptr<const compiled_program> program) const {
      self_->replace(std::move(program), self_->pending(std::forward<Handler>(handler)));
    }
  };

  explicit scheduler(std::unique_ptr<detail::scheduler_impl> impl) noexcept;

  // Runs a wave (a recycled one) whose handler `install` provides.
  void submit(const detail::copied_request& request, detail::encoder_ref encode,
              const detail::completion_installer& install);
  void shutdown(detail::completion_waiter waiter);
  void replace(std::shared_ptr<const compiled_program> program, detail::completion_waiter waiter);

  std::unique_ptr<detail::scheduler_impl> impl_;
};

}  // namespace ferrum
