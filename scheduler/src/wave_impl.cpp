// wave_impl.cpp — one submission wave's coroutine, its awaiters and its steps:
// await a lane, bind, encode (fan out, fan in), submit, await the terminal
// fence, give the lane back, conclude (docs/design.md, "The hot path"), and
// the engine's semaphores it passes on; the bind and encode steps are in
// wave_encoding.cpp.
#include "wave_impl.hpp"
#include "lane_dispatcher.hpp"
#include "program_lanes.hpp"

#include <boost/asio/error.hpp>

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <span>
#include <string>
#include <utility>

namespace ferrum::detail {

namespace asio = boost::asio;
using boost::system::error_code;
using clock_type = std::chrono::steady_clock;

// --- the coroutine type ---------------------------------------------------------

// Started by launch(), never awaited; its frame comes from the scheduler's
// frame pool and frees itself at the end.
struct wave::task {
  struct promise_type {
    // The pool is written in front of the frame, so that operator delete
    // finds it.
    static constexpr std::size_t prefix = alignof(std::max_align_t);

    static void* operator new(std::size_t bytes, wave& w) {
      frame_pool* pool = &w.host_.frames();
      auto* block = static_cast<unsigned char*>(pool->allocate(bytes + prefix));
      std::memcpy(block, &pool, sizeof pool);
      return block + prefix;
    }
    static void operator delete(void* frame, std::size_t bytes) noexcept {
      unsigned char* block = static_cast<unsigned char*>(frame) - prefix;
      frame_pool* pool = nullptr;
      std::memcpy(&pool, block, sizeof pool);
      pool->deallocate(block, bytes + prefix);
    }

    explicit promise_type(wave& w) noexcept : target(&w) {}

    task get_return_object() noexcept { return {std::coroutine_handle<promise_type>::from_promise(*this)}; }
    std::suspend_always initial_suspend() noexcept { return {}; }
    auto final_suspend() noexcept {
      struct finisher {
        bool await_ready() noexcept { return false; }
        void await_suspend(std::coroutine_handle<promise_type> h) noexcept {
          wave& w = *h.promise().target;
          h.destroy();
          if (w.unref()) w.host_.recycle(w);
        }
        void await_resume() noexcept {}
      };
      return finisher{};
    }
    void return_void() noexcept {}
    // The steps catch what encoders throw; anything else is a broken
    // invariant.
    void unhandled_exception() noexcept { std::terminate(); }

    wave* target;
  };

  std::coroutine_handle<promise_type> handle;
};

// --- what the coroutine awaits ------------------------------------------------------

// The turn of the program's history store (a bucket with history
// resources), by the ticket the wave took at launch: at once when it is the
// ticket's, else queued until the wave before it settles. Taken whatever
// happened to the wave before (so that the waves after it get theirs); a
// cancellation while queued completes the wave at once (wave::cancel).
struct wave::awaiting_turn {
  wave& w;

  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<> h) noexcept {
    w.continuation_ = h;
    w.step_.store(wave_step::taking_turn);
    // Queued: from here the wave before it may grant the turn and resume it.
    return !w.program_->history().take_turn(w.turn_waiter_);
  }
  void await_resume() const noexcept { w.turn_held_ = true; }
};

// A lane of the wave's bucket, on any device: at once when one is free, else
// queued (first come, first served) until a release hands one over.
struct wave::awaiting_lane {
  wave& w;

  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<> h) noexcept {
    w.continuation_ = h;
    w.step_.store(wave_step::acquiring);
    error_code ec;
    if (held_lane l = w.dispatcher_->acquire(w.waiter_, ec, &w.cancel_queued_); l || ec) {
      w.held_ = std::move(l);
      w.handed_ec_ = ec;
      return false;
    }
    // Queued: from here another thread may hand the lane over and run the
    // wave to its end, so nothing of the frame is touched any more. A
    // cancellation either was seen by acquire() under the dispatcher's lock
    // or finds the waiter queued.
    return true;
  }
  error_code await_resume() const noexcept { return w.handed_ec_; }
};

// The nodes, in contiguous chunks: all but the last posted to the executor,
// the last encoded here; the last chunk to finish resumes the wave.
struct wave::encoding_nodes {
  wave& w;

  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<> h) noexcept {
    wave_host& host = w.host_;
    w.continuation_ = h;
    w.step_.store(wave_step::encoding);
    const std::size_t nodes = w.contexts_.size();
    w.chunk_count_ = std::max<std::size_t>(1, std::min(host.options().encoder_tasks, nodes));
    w.chunks_left_.store(w.chunk_count_);
    for (std::size_t c = 0; c + 1 < w.chunk_count_; ++c) {
      wave* target = &w;
      host.post(w.buffer_, [target, c] {
        target->encode_chunk(c);
        if (target->chunks_left_.fetch_sub(1, std::memory_order_acq_rel) == 1) target->continuation_.resume();
      });
    }
    w.encode_chunk(w.chunk_count_ - 1);
    return w.chunks_left_.fetch_sub(1, std::memory_order_acq_rel) != 1;
  }
  error_code await_resume() const noexcept {
    if (w.encode_failed_.load()) return w.encode_ec_;
    if (w.cancel_started_.load()) return asio::error::operation_aborted;
    return {};
  }
};

// The lane's fence: the wave's timeline wait, which the scheduler's fence
// watchdog takes back at the fence timeout. The timeline's lock lets exactly
// one of the two complete it.
struct wave::awaiting_fence {
  wave& w;

  bool await_ready() const noexcept {
    w.fence_ec_ = {};
    return w.device_->device->queue().timeline().reached(w.submitted_value_);
  }
  void await_suspend(std::coroutine_handle<> h) noexcept {
    w.continuation_ = h;
    w.fence_.value = w.submitted_value_;
    w.host_.watchdog().start(w.watch_, w.device_->device->queue().timeline());
  }
  // Success once reached, the device's failure, or fence_timeout.
  error_code await_resume() const noexcept { return w.fence_ec_; }
};

// --- the coroutine ------------------------------------------------------------------

wave::task wave::run(wave& w) {
  wave_host& host = w.host_;
  error_code ec = w.early_error_;
  if (!ec && host.every_device_lost()) ec = make_error_code(errc::device_lost);
  if (w.has_history()) {
    co_await awaiting_turn{w};
    if (!ec && w.cancel_queued_.load()) ec = asio::error::operation_aborted;
  }
  if (!ec) {
    ec = co_await awaiting_lane{w};
    // No lane left because every device was lost: say why.
    if (ec == errc::all_lanes_quarantined && host.every_device_lost()) ec = make_error_code(errc::device_lost);
  }
  if (ec) {
    w.settle_history(history_outcome::unsubmitted);
    w.pass_on();
    w.conclude(ec);
    co_return;
  }
  w.device_ = &host.device_of(w.held_);
  w.lane_index_ = w.held_.index();
  host.counters().lane_taken();
  if (w.turn_held_) ec = w.take_history();
  if (ec) {
    w.settle_history(history_outcome::unsubmitted);
    w.give_back(lane_return::unsubmitted);
    w.pass_on();
    w.conclude(ec);
    co_return;
  }
  w.end_phase(wave_phase::acquire);
  w.bind_nodes();
  w.end_phase(wave_phase::bind);
  ec = co_await encoding_nodes{w};
  if (!ec) {
    w.end_phase(wave_phase::encode);
    ec = w.submit();
  }
  w.settle_history(!ec                   ? history_outcome::submitted
                   : w.partly_submitted_ ? history_outcome::partly_submitted
                                         : history_outcome::unsubmitted);
  if (ec) {
    // Nothing of this wave reached the GPU: the lane goes back at once. Part
    // of it did when a later segment failed: quarantined until it is done.
    w.give_back(w.partly_submitted_ ? lane_return::quarantined : lane_return::unsubmitted);
    w.pass_on();
    w.conclude(ec);
    co_return;
  }
  w.end_phase(wave_phase::submit);
  w.step_.store(wave_step::submitted);
  // A cancellation after submit completes the wave now; the lane stays until
  // the fence.
  if (w.cancel_started_.load()) w.finish(asio::error::operation_aborted);

  const error_code fence = co_await awaiting_fence{w};
  if (fence) {
    // fence_timeout, device_lost or device_shut_down: the GPU may still
    // write the lane. It stays in quarantine until its fence is reached
    // (never, after a device failure).
    w.give_back(lane_return::quarantined);
    w.conclude(fence);
    co_return;
  }
  w.end_phase(wave_phase::fence);
  w.gpu_time_.read(*w.held_);
  // What the GPU wrote into readback memory reaches the host's bytes.
  if (gpu::arena* readback = w.held_->arena_of(memory_class::readback)) {
    if (auto seen = readback->invalidate(); !seen) {
      w.message_ = seen.error().what();
      w.give_back(lane_return::fence_reached);
      w.conclude(seen.error().code);
      co_return;
    }
  }
  // Marked before the lane goes back: the next wave's spans on this lane
  // begin after this wave's end.
  w.end_phase(wave_phase::release);
  // Asked for a readback: the completion moves the lane into it.
  if (w.readback_ == nullptr) w.give_back(lane_return::fence_reached);
  w.conclude({});
  // A cancellation completed the wave first: the readback gets nothing.
  if (w.held_) w.give_back(lane_return::fence_reached);
}

// --- the steps ----------------------------------------------------------------------

error_code wave::submit() noexcept {
  lane_contents& l = *held_;
  // A wave with imported buffers or images waits for the earlier waves whose use of
  // them conflicts with its own, and records its own use, under one lock.
  std::unique_lock<std::mutex> ordered;
  std::uint64_t after = 0;
  const gpu::timeline& timeline = device_->device->queue().timeline();
  if (!imports_.empty()) {
    ordered = host_.imports().lock();
    after = host_.imports().after(imports_, timeline);
  }
  if (history_.reset != nullptr) {
    // The previous copies' zeros, after the waves before that used them.
    gpu::queue& queue = device_->device->queue();
    const std::array<gpu::queue_wait, 1> wait{gpu::queue_wait{&queue, after}};
    std::array<gpu::command_list*, 1> reset{history_.reset};
    auto value = queue.submit_next(reset, std::span(wait).first(after != 0 ? 1 : 0));
    if (!value) {
      message_ = "the history's reset: " + value.error().what();
      return value.error().code;
    }
    after = *value;
  }
  const submission_plan::outcome submitted =
      program_->submissions(device_->index)
          .submit(reordered() ? l.ordered_lists() : l.lists(), submissions_, {waits_.ops, signals_.ops},
                  {l.stage_in(), l.stage_out()}, after, reordered());
  if (!imports_.empty()) {
    const std::uint64_t last = submitted.value ? *submitted.value : submitted.covered;
    if (last != 0) host_.imports().record(imports_, last, timeline);
  }
  waits_passed_ = submitted.waited;
  signals_passed_ = submitted.signalled;
  if (!submitted.value) {
    message_ = submitted.value.error().what();
    if (submitted.submitted_any) {
      // Some segments run: the lane waits for them (their join, when it
      // could be submitted) and records afresh next time.
      partly_submitted_ = true;
      (void)held_.record_submission({submitted.covered});  // held by this wave: cannot fail
    }
    return submitted.value.error().code;
  }
  const std::uint64_t value = *submitted.value;
  (void)held_.record_submission({value, id_, host_.options().replay});
  submitted_value_ = value;
  return {};
}

void wave::give_back(lane_return how) noexcept {
  // Counted as given back before the lane can be handed on, so that
  // max_in_flight never counts a lane twice.
  host_.counters().lane_given_back();
  // The wave holds the lane from its hand-over to here: the checks inside
  // (hand-out, fence) pass, or the lane is quarantined rather than lost.
  if (auto back = held_.give_back(how); !back) (void)held_.give_back(lane_return::quarantined);
}

// --- the engine's semaphores: kept from the request, passed on when the wave did not submit them

namespace {

// `set`'s semaphores while it is still to be submitted, none once it was;
// marks it submitted.
std::span<const gpu::semaphore_op> take_unpassed(const copied_semaphores& set, bool& passed) noexcept {
  if (std::exchange(passed, true)) return {};
  return set.ops;
}

}  // namespace

void wave::keep_sync(const copied_request* sync) noexcept {
  waits_ = sync != nullptr ? sync->wait() : copied_semaphores();
  signals_ = sync != nullptr ? sync->signal() : copied_semaphores();
  waits_passed_ = false;
  signals_passed_ = false;
}

void wave::pass_on() noexcept {
  const gpu::external_sync left{take_unpassed(waits_, waits_passed_), take_unpassed(signals_, signals_passed_)};
  if (left.empty()) return;
  // The lane's device, or the one the semaphores were checked against (a
  // scheduler with semaphores has one device).
  gpu::device& d = device_ != nullptr ? *device_->device : *host_.devices().front().device;
  if (auto r = d.queue().submit_next({}, {}, left); !r) {
    // A lost or shut down device: nothing more runs on it, the engine's
    // semaphores with it. Said in the report.
    try {
      if (!message_.empty()) message_ += "; ";
      message_ += "the wave's semaphores could not be passed on: " + r.error().what();
    } catch (const std::bad_alloc&) {
      // The wave's code still says what failed.
    }
  }
}

// --- set-up, start, cancellation, hand-offs ---------------------------------------

wave::wave(wave_host& host, const program_lanes& program)
    : host_(host), buffer_(host.options().encoder_tasks + 2), gpu_time_(0) {
  size_for(program);
  host.watchdog().add(watch_);
  outcome_.context = this;
  outcome_.delivered = [](wave_outcome* o) noexcept {
    wave* w = static_cast<wave*>(o->context);
    if (w->unref()) w->host_.recycle(*w);
  };
}

void wave::size_for(const program_lanes& program) {
  const std::size_t nodes = program.program().node_count;
  submissions_ = program.make_submission_values();
  contexts_.resize(nodes);
  if (host_.options().trace != nullptr) node_spans_.resize(nodes);
  if (host_.options().gpu_timestamps) gpu_time_.resize(nodes);
  sized_for_ = program.serial();
}

void wave::prepare(std::uint64_t id, const program_lanes& program, const compiled_bucket* bucket,
                   lane_dispatcher* dispatcher, encoder_ref encode, const copied_request* sync, error_code early_error,
                   std::string_view early_message, const wave_imports* imports, wave_readback* readback) {
  if (program.serial() != sized_for_) size_for(program);
  program_ = &program;
  id_ = id;
  bucket_ = bucket;
  dispatcher_ = dispatcher;
  device_ = nullptr;
  encode_ = encode;
  early_error_ = early_error;
  refs_.store(2, std::memory_order_relaxed);
  cancel_queued_.store(false, std::memory_order_relaxed);
  cancel_started_.store(false, std::memory_order_relaxed);
  step_.store(wave_step::prepared, std::memory_order_relaxed);
  completed_.store(false, std::memory_order_relaxed);
  started_ = clock_type::now();
  for (auto& ended : ended_) ended.store(0, std::memory_order_relaxed);
  submitted_value_ = 0;
  partly_submitted_ = false;
  keep_sync(sync);
  imports_ = imports != nullptr ? *imports : wave_imports();
  readback_ = readback;
  failed_node_.reset();
  message_.assign(early_message);
  continuation_ = {};
  held_ = {};
  lane_index_ = 0;
  handed_ec_ = {};
  turn_held_ = false;
  history_ = {};
  history_wave_ = 0;
  replay_ = false;
  encode_failed_.store(false, std::memory_order_relaxed);
  encode_ec_ = {};
  gpu_time_.reset();
}

void wave::launch() noexcept {
  // In the order waves are accepted: their turns' (history_store).
  if (has_history()) turn_waiter_.ticket = program_->history().ticket();
  const task t = run(*this);
  std::coroutine_handle<> h = t.handle;
  // Waves start on the scheduler's executor, never on the caller's stack.
  host_.post(buffer_, [h] { h.resume(); });
}

void wave::resume_later() noexcept {
  std::coroutine_handle<> h = continuation_;
  host_.post(buffer_, [h] { h.resume(); });
}

void wave::cancel(asio::cancellation_type_t type) noexcept {
  if (!async::requested(type)) return;
  // A wave handed semaphores passes them on whatever happens, which is a
  // side effect: total alone is never honoured then.
  if (has_sync() && !async::allows_side_effects(type)) return;
  // Which types each step honours (README, "Asynchronous operations"): any
  // while the wave waits for a lane (nothing has happened yet); from encoding
  // on the wave has side effects (encoders ran, or the GPU has its work),
  // which total does not accept. Two flags, so that the step the wave is in
  // when it looks decides, not the step it was in when the request came.
  cancel_queued_.store(true);
  const bool with_effects = async::allows_side_effects(type);
  if (with_effects) cancel_started_.store(true);
  switch (step_.load()) {
    case wave_step::taking_turn:
      // Waiting for the history's turn (nothing has happened yet): the
      // wave completes now, and takes its turn only to hand it on.
      finish(asio::error::operation_aborted);
      break;
    case wave_step::acquiring:
      // Still queued: leave the queue and resume with operation_aborted.
      if (dispatcher_->cancel(waiter_)) {
        handed_ec_ = asio::error::operation_aborted;
        resume_later();
      }
      break;
    case wave_step::submitted:
      // The GPU has the work: the wave completes now, its lane returns when
      // the fence is reached.
      if (with_effects) finish(asio::error::operation_aborted);
      break;
    case wave_step::prepared:
    case wave_step::encoding:
      // Seen by the wave at its next step.
      break;
  }
}

void wave_canceller::operator()(asio::cancellation_type_t type) const noexcept { target->cancel(type); }

void wave::lane_handed(detail::lane_waiter* waiter_of, error_code ec, held_lane l) noexcept {
  wave* w = static_cast<lane_waiter*>(waiter_of)->self;
  w->held_ = std::move(l);
  w->handed_ec_ = ec;
  // Resumed through the executor: a give-back must not run the next wave's
  // code on the giving wave's stack.
  w->resume_later();
}

void wave::fence_reached(gpu::timeline_wait* wait, error_code ec) noexcept {
  wave* w = static_cast<fence_wait*>(wait)->self;
  w->host_.watchdog().disarm(w->watch_);
  w->fence_ec_ = ec;
  w->resume_later();
}

void wave::fence_expired(fence_watchdog::entry& e) noexcept {
  wave* w = static_cast<fence_wait*>(e.wait)->self;
  w->fence_ec_ = make_error_code(errc::fence_timeout);
  w->resume_later();
}

}  // namespace ferrum::detail
