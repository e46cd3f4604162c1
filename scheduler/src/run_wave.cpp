// The wave coroutine: acquire, bind, encode, submit, fence, release.
#include "scheduler_impl.hpp"

#include "ferrum/scheduler/trace.hpp"

#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include <array>
#include <coroutine>
#include <cstring>
#include <exception>
#include <string>

namespace ferrum::detail {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

// The coroutine type of a wave: started by launch(), never awaited; its frame
// comes from the scheduler's frame pool and frees itself at the end.
struct wave_task {
  struct promise_type {
    // Frames are recycled by the scheduler that runs the wave. The pool is
    // written in front of the frame, so that operator delete finds it.
    static constexpr std::size_t prefix = alignof(std::max_align_t);

    static void* operator new(std::size_t bytes, scheduler_impl& s, wave&) {
      auto* block = static_cast<unsigned char*>(s.frames_.allocate(bytes + prefix));
      frame_pool* pool = &s.frames_;
      std::memcpy(block, &pool, sizeof pool);
      return block + prefix;
    }
    static void operator delete(void* frame, std::size_t bytes) noexcept {
      unsigned char* block = static_cast<unsigned char*>(frame) - prefix;
      frame_pool* pool = nullptr;
      std::memcpy(&pool, block, sizeof pool);
      pool->deallocate(block, bytes + prefix);
    }

    promise_type(scheduler_impl&, wave& w) noexcept : target(&w) {}

    wave_task get_return_object() noexcept { return {std::coroutine_handle<promise_type>::from_promise(*this)}; }
    std::suspend_always initial_suspend() noexcept { return {}; }
    auto final_suspend() noexcept {
      struct finisher {
        bool await_ready() noexcept { return false; }
        void await_suspend(std::coroutine_handle<promise_type> h) noexcept {
          wave& w = *h.promise().target;
          h.destroy();
          w.owner.unref(w);
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

// The wave's own end: its spans go to the trace (when tracing), then its
// completion is posted — so a wave's spans are recorded once its handler runs.
void conclude(scheduler_impl& s, wave& w, error_code ec) noexcept {
  s.trace_wave(w);
  w.finish(ec);
}

void stamp(wave& w, wave_phase phase) {
  const std::lock_guard lock(w.mutex);
  w.report.ended[static_cast<std::size_t>(phase)] = std::chrono::steady_clock::now();
}

// Awaits a lane of the wave's pool: at once when one is free, else queued
// (first come, first served) until a release hands one over.
struct acquire_lane {
  wave& w;

  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<> h) noexcept {
    w.continuation = h;
    w.step.store(wave_step::acquiring);
    error_code ec;
    if (lane* l = w.pool->acquire(w.waiter, ec, &w.cancel_queued); l != nullptr || ec) {
      w.held = l;
      w.grant_ec = ec;
      return false;
    }
    // Queued: from here another thread may grant the lane and run the wave
    // to its end, so nothing of the frame is touched any more. A
    // cancellation either was seen by acquire() under the pool's lock or
    // finds the waiter queued.
    return true;
  }
  error_code await_resume() const noexcept { return w.grant_ec; }
};

// Fans the nodes out in contiguous chunks: all but the last posted to the
// executor, the last run here; the last chunk to finish resumes the wave.
struct encode_nodes {
  scheduler_impl& s;
  wave& w;

  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<> h) noexcept {
    w.continuation = h;
    w.step.store(wave_step::encoding);
    const std::size_t nodes = s.program_->node_count;
    w.chunk_count = std::max<std::size_t>(1, std::min(s.options_.encoder_tasks, nodes));
    w.chunks_left.store(w.chunk_count);
    for (std::size_t c = 0; c + 1 < w.chunk_count; ++c) {
      wave* target = &w;
      s.post(w.slab, [target, c] {
        target->owner.run_chunk(*target, c);
        if (target->chunks_left.fetch_sub(1, std::memory_order_acq_rel) == 1) target->continuation.resume();
      });
    }
    s.run_chunk(w, w.chunk_count - 1);
    return w.chunks_left.fetch_sub(1, std::memory_order_acq_rel) != 1;
  }
  error_code await_resume() const noexcept {
    if (w.encode_failed.load()) return w.encode_ec;
    if (w.cancel_started.load()) return asio::error::operation_aborted;
    return {};
  }
};

// Awaits the lane's fence, racing the fence timeout. The fence wait is the
// wave's own intrusive wait_op, so that a timeout can take it off the
// timeline (timeline::cancel_wait) without racing its completion: whichever
// of the two the timeline's lock lets through decides. The wave resumes once
// both the wait and the timer are done with it.
struct await_fence {
  scheduler_impl& s;
  wave& w;

  bool await_ready() const noexcept {
    if (!s.device_.queue().timeline().reached(w.held->fence)) return false;
    w.fence_first.store(1);
    w.fence_ec = {};
    return true;
  }
  void await_suspend(std::coroutine_handle<> h) noexcept {
    w.continuation = h;
    w.fence_first.store(0);
    w.fence_ec = {};
    w.fence_pending.store(2);
    wave* target = &w;
    scheduler_impl* owner = &s;
    // Armed before the wait starts: the wait may complete (and cancel the
    // timer) before start_wait returns.
    w.timer.expires_after(s.options_.fence_timeout);
    w.timer.async_wait(asio::bind_allocator(w.allocator(), [target, owner](error_code ec) {
      int settled = 1;
      if (!ec && owner->device_.queue().timeline().cancel_wait(&target->fence_op)) {
        // Taken off the timeline: the wait will never complete, the timeout
        // decides, and this handler settles for both.
        target->fence_first.store(2);
        settled = 2;
      }
      if (target->fence_pending.fetch_sub(settled, std::memory_order_acq_rel) == settled)
        target->continuation.resume();
    }));
    w.fence_op.value = w.held->fence;
    s.device_.queue().timeline().start_wait(&w.fence_op);
  }
  // The fence's outcome: success once reached, the device's failure, or
  // fence_timeout.
  error_code await_resume() const noexcept {
    if (w.fence_first.load() == 2) return make_error_code(errc::fence_timeout);
    return w.fence_ec;
  }
};

wave_task run_wave(scheduler_impl& s, wave& w) {
  error_code ec = w.early_error;
  if (!ec && s.device_.lost()) ec = make_error_code(errc::device_lost);
  if (!ec) {
    ec = co_await acquire_lane{w};
    // Lanes quarantined by a device loss: say why.
    if (ec == errc::all_lanes_quarantined && s.device_.lost()) ec = make_error_code(errc::device_lost);
  }
  if (ec) {
    conclude(s, w, ec);
    co_return;
  }
  s.lane_taken();
  lane& l = *w.held;
  {
    const std::lock_guard lock(w.mutex);
    w.report.lane = l.index;
    w.report.ended[static_cast<std::size_t>(wave_phase::acquire)] = std::chrono::steady_clock::now();
  }
  ec = s.bind(w);
  if (!ec) {
    stamp(w, wave_phase::bind);
    // Replaying needs a complete, submitted recording; recording afresh
    // leaves none until this wave submits.
    w.replay = s.options_.replay && l.recorded;
    l.recorded = w.replay;
    ec = co_await encode_nodes{s, w};
  }
  if (!ec) {
    stamp(w, wave_phase::encode);
    ec = s.submit(w);
  }
  if (ec) {
    // Nothing of this wave reached the GPU: the lane goes back at once (its
    // last fence, an earlier wave's, is reached: that is how it came to us).
    w.binding.reset();
    // Counted as given back before the pool can hand it on, so that
    // max_in_flight never counts a lane twice.
    s.lane_given_back();
    (void)w.pool->release(l);
    conclude(s, w, ec);
    co_return;
  }
  stamp(w, wave_phase::submit);
  w.step.store(wave_step::submitted);
  // A cancellation after submit completes the wave now; the lane stays until
  // the fence.
  if (w.cancel_started.load()) w.finish(asio::error::operation_aborted);

  const error_code fence = co_await await_fence{s, w};
  w.binding.reset();
  if (fence) {
    // fence_timeout, device_lost or device_shut_down: the GPU may still
    // write the lane. It stays in quarantine until its fence is reached
    // (never, after a device failure).
    s.lane_given_back();
    (void)w.pool->quarantine(l);  // held by this wave: cannot fail
    conclude(s, w, fence);
    co_return;
  }
  stamp(w, wave_phase::fence);
  s.lane_given_back();
  // Stamped before the lane goes back: the next wave's spans on this lane
  // begin after this wave's end.
  stamp(w, wave_phase::release);
  (void)w.pool->release(l);
  conclude(s, w, {});
}

}  // namespace

void scheduler_impl::launch(wave& w) noexcept {
  const wave_task task = run_wave(*this, w);
  std::coroutine_handle<> h = task.handle;
  // Waves start on the scheduler's executor, never on the caller's stack.
  post(w.slab, [h] { h.resume(); });
}

error_code scheduler_impl::bind(wave& w) noexcept {
  lane& l = *w.held;
  const compiled_bucket& bucket = w.pool->bucket();
  auto bound = execution_binding::bind(program_->hash, program_->node_count, bucket.binding, l.slot, l.evidence);
  if (!bound) {
    const std::lock_guard lock(w.mutex);
    w.report.message = bound.error().what();
    return bound.error().code;
  }
  w.binding.emplace(std::move(*bound));
  return {};
}

void scheduler_impl::fail_encoding(wave& w, error_code ec, std::size_t node, std::string_view message) noexcept {
  if (w.encode_failed.exchange(true)) return;  // the first failure is the wave's
  w.encode_ec = ec;
  const std::lock_guard lock(w.mutex);
  w.report.failed_node = node;
  try {
    w.report.message.assign(message);
  } catch (const std::bad_alloc&) {
    // The node and code still say what failed.
  }
}

void scheduler_impl::encoder_threw(wave& w, std::size_t node, std::exception_ptr thrown) noexcept {
  try {
    std::rethrow_exception(thrown);
  } catch (const std::exception& e) {
    fail_encoding(w, make_error_code(errc::encoder_failed), node, e.what());
  } catch (...) {
    fail_encoding(w, make_error_code(errc::encoder_failed), node, "an exception that is not a std::exception");
  }
}

void scheduler_impl::run_chunk(wave& w, std::size_t chunk) noexcept {
  const std::size_t nodes = program_->node_count;
  const std::size_t first = chunk * nodes / w.chunk_count;
  const std::size_t last = (chunk + 1) * nodes / w.chunk_count;
  lane& l = *w.held;
  const bucket_id& bucket = w.pool->bucket().id;
  for (std::size_t node = first; node < last; ++node) {
    // A failure or cancellation elsewhere in the wave stops the rest.
    if (w.encode_failed.load(std::memory_order_relaxed) || w.cancel_started.load(std::memory_order_relaxed)) return;
    gpu::command_list& list = *l.lists[node];
    if (!w.replay) {
      if (auto r = list.begin(); !r) return fail_encoding(w, r.error().code, node, r.error().what());
    }
    std::optional<node_binding>& binding = w.node_bindings[node];
    binding = w.binding->node(node);
    const gpu::arena_range slot =
        binding ? l.arena->range(static_cast<std::size_t>(binding->slot().offset),
                                 static_cast<std::size_t>(binding->slot().capacity))
                : gpu::arena_range{};
    const encode_context& context =
        w.contexts[node].emplace(
            encode_context{node, binding ? &*binding : nullptr, slot, list, w.id, bucket, l.index, w.replay,
                           &w.cancel_started});
    if (w.encode.spawn != nullptr) {
      // A coroutine encoder joins the fan-in as one more task; its context
      // lives in the wave until it returns.
      w.chunks_left.fetch_add(1, std::memory_order_relaxed);
      wave* target = &w;
      const node_clock started = node_started();
      asio::co_spawn(executor_, w.encode.spawn(w.encode, context),
                     [target, node, &list, started](std::exception_ptr thrown) noexcept {
                       scheduler_impl& s = target->owner;
                       s.trace_node(*target, node, started);
                       if (thrown) {
                         s.encoder_threw(*target, node, thrown);
                       } else if (target->replay) {
                         // Submitted as recorded before.
                       } else if (auto r = list.end(); !r) {
                         s.fail_encoding(*target, r.error().code, node, r.error().what());
                       }
                       if (target->chunks_left.fetch_sub(1, std::memory_order_acq_rel) == 1)
                         target->continuation.resume();
                     });
      continue;
    }
    const node_clock started = node_started();
    try {
      w.encode.call(w.encode, context);
    } catch (...) {
      trace_node(w, node, started);
      return encoder_threw(w, node, std::current_exception());
    }
    trace_node(w, node, started);
    if (w.replay) continue;
    if (auto r = list.end(); !r) return fail_encoding(w, r.error().code, node, r.error().what());
  }
}

scheduler_impl::node_clock scheduler_impl::node_started() const noexcept {
  if (options_.trace == nullptr) return {};
  return {std::chrono::steady_clock::now(), trace_recorder::this_thread_number()};
}

void scheduler_impl::trace_node(wave& w, std::size_t node, const node_clock& started) const noexcept {
  if (options_.trace == nullptr) return;
  trace_span& span = w.node_spans[node];
  span.phase = wave_phase::encode;
  span.node = static_cast<std::uint32_t>(node);
  span.wave = w.id;
  span.bucket = &w.pool->bucket().id;
  span.lane = w.held->index;
  span.thread = started.thread;
  span.begin = started.at;
  span.end = std::chrono::steady_clock::now();
}

void scheduler_impl::trace_wave(wave& w) noexcept {
  if (options_.trace == nullptr) return;
  std::array<trace_span, wave_phase_count> phases;
  std::size_t reached = 0;
  {
    const std::lock_guard lock(w.mutex);
    const wave_report& r = w.report;
    std::chrono::steady_clock::time_point begin = r.started;
    // Each phase runs from the end of the one before it.
    for (; reached < wave_phase_count && r.ended[reached]; ++reached) {
      trace_span& span = phases[reached];
      span.phase = static_cast<wave_phase>(reached);
      span.wave = r.wave;
      span.bucket = r.bucket;
      span.lane = r.lane;
      span.begin = begin;
      span.end = *r.ended[reached];
      begin = span.end;
    }
  }
  options_.trace->record(std::span(phases).first(reached));
  // The nodes this wave ran, in runs of consecutive ones (all of them,
  // unless an encoder failed).
  const std::span<const trace_span> nodes(w.node_spans);
  for (std::size_t first = 0; first < nodes.size();) {
    std::size_t last = first;
    while (last < nodes.size() && nodes[last].wave == w.id) ++last;
    if (last > first) options_.trace->record(nodes.subspan(first, last - first));
    first = last + (last == first ? 1 : 0);
  }
}

error_code scheduler_impl::submit(wave& w) noexcept {
  lane& l = *w.held;
  auto value = device_.queue().submit_next(l.submission);
  if (!value) {
    const std::lock_guard lock(w.mutex);
    w.report.message = value.error().what();
    return value.error().code;
  }
  l.fence = *value;
  l.recorded = options_.replay;
  const std::lock_guard lock(w.mutex);
  w.report.fence_value = *value;
  return {};
}

}  // namespace ferrum::detail
