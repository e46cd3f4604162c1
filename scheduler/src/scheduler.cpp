#include "ferrum/scheduler/scheduler.hpp"

#include "scheduler_impl.hpp"

#include <boost/asio/append.hpp>
#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>

#include <algorithm>
#include <limits>
#include <thread>

namespace ferrum {
namespace detail {

namespace asio = boost::asio;
using boost::system::error_code;

// --- wave ---------------------------------------------------------------------

void wave::reset() noexcept {
  id = 0;
  pool = nullptr;
  encode = {};
  early_error = {};
  completion.reset();
  outcome.ec = {};
  outcome.report = {};
  cancel_queued.store(false);
  cancel_started.store(false);
  step.store(wave_step::prepared);
  completed = false;
  report = {};
  continuation = {};
  held = nullptr;
  grant_ec = {};
  binding.reset();
  replay = false;
  encode_failed.store(false);
  encode_ec = {};
}

void wave::finish(error_code ec) noexcept {
  {
    const std::lock_guard lock(mutex);
    if (completed) return;
    completed = true;
    outcome.ec = ec;
    // Copied, not moved: the wave may still stamp later phases into its own
    // report while the completion is delivered (a wave completed early).
    outcome.report = report;
  }
  owner.counted(ec);
  owner.posting(1);
  completion.post(outcome);
  owner.posting(-1);
}

void wave::resume_later() noexcept {
  std::coroutine_handle<> h = continuation;
  owner.post(slab, [h] { h.resume(); });
}

void wave::granted(lane_pool::waiter* waiter_of, error_code ec, lane* l) noexcept {
  wave* w = static_cast<wave_waiter*>(waiter_of)->self;
  w->held = l;
  w->grant_ec = ec;
  // Resumed through the executor: a release must not run the next wave's
  // code on the releasing wave's stack.
  w->resume_later();
}

void wave::fence_reached(gpu::detail::wait_op* op, error_code ec) noexcept {
  wave* w = static_cast<fence_wait*>(op)->self;
  w->fence_ec = ec;
  w->owner.post(w->slab, [w] {
    int none = 0;
    if (w->fence_first.compare_exchange_strong(none, 1)) w->timer.cancel();
    if (w->fence_pending.fetch_sub(1, std::memory_order_acq_rel) == 1) w->continuation.resume();
  });
}

void wave_canceller::operator()(asio::cancellation_type_t type) const noexcept { target->owner.cancel(*target, type); }

// --- scheduler_impl -------------------------------------------------------------

wave_admission scheduler_impl::admit(const wave_request& request) const noexcept {
  for (const auto d : request.extent)
    if (d == 0) return {nullptr, errc::invalid_wave_request};
  if (lane_pool* pool = pick(request)) return {pool, errc::ok};
  return {nullptr, errc::no_bucket_fits};
}

lane_pool* scheduler_impl::pick(const wave_request& request) const noexcept {
  lane_pool* best = nullptr;
  std::uint64_t best_volume = std::numeric_limits<std::uint64_t>::max();
  for (const auto& pool : pools_) {
    const bucket_spec& spec = pool->bucket().spec;
    if (spec.cls.str() != request.bucket_class) continue;
    bool covers = true;
    std::uint64_t volume = 1;
    for (std::size_t d = 0; d < spec.dims.size(); ++d) {
      covers = covers && spec.dims[d] >= request.extent[d];
      volume = volume > std::numeric_limits<std::uint64_t>::max() / std::max<std::uint64_t>(spec.dims[d], 1)
                   ? std::numeric_limits<std::uint64_t>::max()
                   : volume * spec.dims[d];
    }
    // Pools are in bucket id order, so on equal volume the first id wins.
    if (covers && volume < best_volume) {
      best = pool.get();
      best_volume = volume;
    }
  }
  return best;
}

void scheduler_impl::reserve_waves(std::size_t count) {
  frames_.reserve(count);
  const std::lock_guard lock(waves_mutex_);
  waves_.reserve(count);
  free_waves_.reserve(count);
  while (waves_.size() < count) {
    waves_.push_back(std::make_unique<wave>(*this, executor_, options_.encoder_tasks + 4, program_->node_count,
                                           options_.trace != nullptr));
    free_waves_.push_back(waves_.back().get());
  }
}

wave* scheduler_impl::prepare(wave_admission admission, encoder_ref encode) {
  wave* w = nullptr;
  {
    const std::lock_guard lock(waves_mutex_);
    if (!free_waves_.empty()) {
      w = free_waves_.back();
      free_waves_.pop_back();
    }
  }
  if (w == nullptr) {
    // Cold: a new peak of waves alive at once. The slab holds the wave's
    // pending posts (one per encoder task), its fence wait and its timer.
    auto made = std::make_unique<wave>(*this, executor_, options_.encoder_tasks + 4, program_->node_count,
                                           options_.trace != nullptr);
    w = made.get();
    const std::lock_guard lock(waves_mutex_);
    waves_.push_back(std::move(made));
    free_waves_.reserve(waves_.size());
  }
  w->id = next_id_.fetch_add(1);
  w->encode = encode;
  w->refs.store(2);
  w->outcome.context = w;
  w->outcome.delivered = [](wave_outcome* o) noexcept {
    wave* delivered_wave = static_cast<wave*>(o->context);
    delivered_wave->owner.unref(*delivered_wave);
  };
  w->report.wave = w->id;
  w->report.nodes = program_->node_count;
  w->report.started = std::chrono::steady_clock::now();
  {
    const std::lock_guard lock(state_mutex_);
    if (live_++ == 0) work_.emplace(asio::prefer(executor_, asio::execution::outstanding_work.tracked));
    ++stats_.started;
  }
  if (admission.refused != errc::ok) {
    w->early_error = make_error_code(admission.refused);
  } else if (!accepting_.load()) {
    w->early_error = make_error_code(errc::scheduler_shut_down);
  } else {
    w->pool = admission.pool;
    w->report.bucket = &admission.pool->bucket().id;
  }
  return w;
}

void scheduler_impl::cancel(wave& w, asio::cancellation_type_t type) noexcept {
  using asio::cancellation_type;
  if ((type & (cancellation_type::terminal | cancellation_type::partial | cancellation_type::total)) ==
      cancellation_type::none)
    return;
  // Which types each step honours (README, "Asynchronous operations"): any
  // while the wave waits for a lane (nothing has happened yet); from encoding
  // on the wave has side effects (encoders ran, or the GPU has its work),
  // which total does not accept. Two flags, so that the step the wave is in
  // when it looks decides, not the step it was in when the request came.
  w.cancel_queued.store(true);
  const bool with_effects = (type & (cancellation_type::terminal | cancellation_type::partial)) != cancellation_type::none;
  if (with_effects) w.cancel_started.store(true);
  switch (w.step.load()) {
    case wave_step::acquiring:
      // Still queued: leave the queue and resume with operation_aborted.
      if (w.pool->cancel(w.waiter)) {
        w.grant_ec = asio::error::operation_aborted;
        w.resume_later();
      }
      break;
    case wave_step::submitted:
      // The GPU has the work: the wave completes now, its lane returns when
      // the fence is reached.
      if (with_effects) w.finish(asio::error::operation_aborted);
      break;
    case wave_step::prepared:
    case wave_step::encoding:
      // Seen by the wave at its next step.
      break;
  }
}

void scheduler_impl::unref(wave& w) noexcept {
  if (w.refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // Both the coroutine and the completion's delivery are done with the wave.
  w.reset();
  {
    const std::lock_guard lock(waves_mutex_);
    free_waves_.push_back(&w);  // capacity reserved for every wave: never allocates
  }
  // All under the lock: once live_ is 0 the destructor may go ahead, so
  // nothing of this object is touched after the lock is released.
  const std::lock_guard lock(state_mutex_);
  if (--live_ != 0) return;
  work_.reset();
  complete_shutdown_locked();
  idle_.notify_all();
}

void scheduler_impl::complete_shutdown_locked() noexcept {
  if (live_ != 0 || watching_ != 0) return;
  complete_shutdown_waiters_locked({});
}

void scheduler_impl::complete_shutdown_waiters_locked(error_code ec) noexcept {
  for (shutdown_waiter& waiter : shutdown_waiters_) {
    // Posted to the executor whose work the waiter holds (the handler's own,
    // or the scheduler's); the post keeps that work until the handler ran.
    asio::post(waiter.work, asio::append(std::move(waiter.handler), ec));
    waiter.work = {};
  }
  shutdown_waiters_.clear();
}

void scheduler_impl::watch_changed(void* self, int delta) noexcept {
  auto* s = static_cast<scheduler_impl*>(self);
  const std::lock_guard lock(s->state_mutex_);
  s->watching_ = delta > 0 ? s->watching_ + 1 : s->watching_ - 1;
  if (delta < 0) s->complete_shutdown_locked();
}

void scheduler_impl::counted(error_code ec) noexcept {
  const std::lock_guard lock(state_mutex_);
  if (!ec) {
    ++stats_.completed;
  } else if (ec == asio::error::operation_aborted) {
    ++stats_.cancelled;
  } else {
    ++stats_.failed;
  }
}

void scheduler_impl::lane_taken() noexcept {
  const std::lock_guard lock(state_mutex_);
  ++stats_.in_flight;
  stats_.max_in_flight = std::max(stats_.max_in_flight, stats_.in_flight);
}

void scheduler_impl::lane_given_back() noexcept {
  const std::lock_guard lock(state_mutex_);
  --stats_.in_flight;
}

scheduler_stats scheduler_impl::stats() const noexcept {
  const std::lock_guard lock(state_mutex_);
  scheduler_stats s = stats_;
  s.live = live_;
  return s;
}

void scheduler_impl::shutdown(shutdown_waiter waiter) {
  // Waves accepted before this still run to the end; later ones are refused.
  accepting_.store(false);
  const std::lock_guard lock(state_mutex_);
  shutdown_waiters_.push_back(std::move(waiter));
  complete_shutdown_locked();
}

void scheduler_impl::close_and_wait() noexcept {
  accepting_.store(false);
  for (auto& pool : pools_) pool->close(make_error_code(errc::scheduler_shut_down));
  {
    std::unique_lock lock(state_mutex_);
    idle_.wait(lock, [&] { return live_ == 0; });
    // Lanes still quarantined go to the device with the pools: a pending
    // async_shutdown can no longer see them come back, and its handler is
    // invoked all the same, as Asio's operations are when their object goes.
    complete_shutdown_waiters_locked(asio::error::operation_aborted);
  }
  // A device thread that posted a wave's last step may still be inside the
  // post; it touches nothing of ours afterwards.
  while (posting_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

}  // namespace detail

// --- scheduler ------------------------------------------------------------------

result<std::unique_ptr<scheduler>> scheduler::create(const plan& p, std::shared_ptr<const compiled_program> program,
                                                     gpu::device& device, boost::asio::any_io_executor executor,
                                                     const scheduler_options& options) {
  if (!program) return make_error(errc::invalid_scheduler_option, "no compiled program");
  if (options.encoder_tasks == 0) return make_error(errc::invalid_scheduler_option, "encoder_tasks must be at least 1");
  if (options.fence_timeout.count() <= 0) return make_error(errc::invalid_scheduler_option, "fence_timeout must be positive");
  // The lanes' evidence is recorded from `p`, so it must be the plan the
  // program was compiled from; hashing it once here, on the cold path, is
  // what compile did too (the plan keeps no hash of its own).
  const auto given = hash_plan(p);
  if (!given) return given.error();
  if (*given != program->hash)
    return make_error(errc::program_plan_mismatch,
                      "program compiled from plan " + program->hash.str() + ", given plan " + given->str());
  auto impl = std::make_unique<detail::scheduler_impl>(program, device, std::move(executor), options);
  for (const compiled_bucket& bucket : program->buckets) {
    auto pool = lane_pool::create(p, *program, bucket, device, impl->executor_);
    if (!pool) return pool.error();
    (*pool)->on_watch(&detail::scheduler_impl::watch_changed, impl.get());
    impl->pools_.push_back(std::move(*pool));
  }
  // Waves beyond the lanes queue for one; twice the lanes covers a window of
  // waves submitted ahead, so that steady state starts with no allocation.
  std::size_t lanes = 0;
  for (const auto& pool : impl->pools_) lanes += pool->lanes().size();
  impl->reserve_waves(2 * lanes);
  return std::unique_ptr<scheduler>(new scheduler(std::move(impl)));
}

scheduler::scheduler(std::unique_ptr<detail::scheduler_impl> impl) noexcept : impl_(std::move(impl)) {}

scheduler::~scheduler() { impl_->close_and_wait(); }

scheduler::executor_type scheduler::get_executor() const noexcept { return impl_->executor_; }

detail::wave_admission scheduler::admit(const wave_request& request) const noexcept { return impl_->admit(request); }

detail::wave* scheduler::prepare(detail::wave_admission admission, detail::encoder_ref encode) {
  return impl_->prepare(admission, encode);
}

detail::wave_completion& scheduler::completion_of(detail::wave* w) noexcept { return w->completion; }

void scheduler::launch(detail::wave* w) noexcept { impl_->launch(*w); }

void scheduler::shutdown(detail::shutdown_waiter waiter) { impl_->shutdown(std::move(waiter)); }

std::span<const std::unique_ptr<lane_pool>> scheduler::pools() const noexcept { return impl_->pools_; }

scheduler_stats scheduler::stats() const noexcept { return impl_->stats(); }

const compiled_program& scheduler::program() const noexcept { return *impl_->program_; }

gpu::device& scheduler::device() const noexcept { return impl_->device_; }

std::string_view to_string(wave_phase phase) noexcept {
  switch (phase) {
    case wave_phase::acquire: return "acquire";
    case wave_phase::bind: return "bind";
    case wave_phase::encode: return "encode";
    case wave_phase::submit: return "submit";
    case wave_phase::fence: return "fence";
    case wave_phase::release: return "release";
  }
  return "unknown";
}

}  // namespace ferrum
