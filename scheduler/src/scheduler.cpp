// scheduler.cpp — the facade, and what is the scheduler's own: which bucket
// a request runs in, the lane pools, the recycled waves and shutdown. A
// wave's own life is in wave_impl.cpp.
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
#include <optional>
#include <string>
#include <thread>
#include <utility>

namespace ferrum {
namespace detail {

namespace asio = boost::asio;
using boost::system::error_code;

// --- scheduler_impl -------------------------------------------------------------

scheduler_impl::scheduler_impl(std::span<gpu::device* const> devices, boost::asio::any_io_executor executor,
                               const scheduler_options& options)
    : host_(devices, std::move(executor), options, &scheduler_impl::recycle, this) {}

namespace {

// The smallest bucket of the request's class covering its extent, by the
// product of its dimensions; buckets are in id order, so on equal volume the
// first id wins. Or why none is taken.
struct bucket_choice {
  std::size_t bucket = 0;
  errc refused = errc::ok;
};

bucket_choice choose_bucket(const compiled_program& program, const copied_request& copied) noexcept {
  const wave_request request = copied.request();
  for (const auto d : request.extent)
    if (d == 0) return {0, errc::invalid_wave_request};
  if (!copied.kept()) return {0, errc::no_bucket_fits};
  std::optional<std::size_t> best;
  std::uint64_t best_volume = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t b = 0; b < program.buckets.size(); ++b) {
    const bucket_spec& spec = program.buckets[b].spec;
    if (spec.cls.str() != request.bucket_class) continue;
    bool covers = true;
    std::uint64_t volume = 1;
    for (std::size_t d = 0; d < spec.dims.size(); ++d) {
      covers = covers && spec.dims[d] >= request.extent[d];
      volume = volume > std::numeric_limits<std::uint64_t>::max() / std::max<std::uint64_t>(spec.dims[d], 1)
                   ? std::numeric_limits<std::uint64_t>::max()
                   : volume * spec.dims[d];
    }
    if (covers && volume < best_volume) {
      best = b;
      best_volume = volume;
    }
  }
  if (best) return {*best, errc::ok};
  return {0, errc::no_bucket_fits};
}

// Why the request's semaphores cannot be used, if so: more than a wave
// holds, a scheduler over several devices (a wave's device is known only
// once it has a lane), or a semaphore op its device's queues refuse.
std::optional<error> sync_refused(const copied_request& request, std::span<const wave_device> devices) {
  const std::pair<const copied_semaphores*, std::string_view> sets[] = {{&request.wait(), "wave_request::wait"},
                                                                        {&request.signal(), "wave_request::signal"}};
  for (const auto& [set, name] : sets) {
    if (set->given == 0) continue;
    if (!set->kept())
      return make_error(errc::too_many_semaphores, std::string(name) + " has " + std::to_string(set->given) +
                                                       " semaphores; a wave holds at most " +
                                                       std::to_string(max_wave_semaphores));
    if (devices.size() != 1)
      return make_error(errc::invalid_wave_request, std::string(name) + ": semaphores on a scheduler over " +
                                                        std::to_string(devices.size()) +
                                                        " devices, where a wave's device is known only once it runs");
    for (std::size_t i = 0; i < set->ops.size(); ++i)
      if (auto r = gpu::check_semaphore_op(set->ops[i], *devices.front().device, name, i); !r) return r.error();
  }
  return std::nullopt;
}

}  // namespace

void scheduler_impl::reserve_waves(std::size_t count) {
  host_.frames().reserve(count);
  const std::lock_guard lock(waves_mutex_);
  waves_.reserve(count);
  free_waves_.reserve(count);
  while (waves_.size() < count) {
    waves_.push_back(std::make_unique<wave>(host_, *current_));
    free_waves_.push_back(waves_.back().get());
  }
}

std::pair<wave*, program_lanes*> scheduler_impl::take_wave() {
  {
    const std::lock_guard lock(waves_mutex_);
    if (!free_waves_.empty()) {
      wave* w = free_waves_.back();
      free_waves_.pop_back();
      current_->waves.fetch_add(1);
      return {w, current_};
    }
  }
  // Cold: a new peak of waves alive at once.
  std::unique_lock lock(waves_mutex_);
  auto made = std::make_unique<wave>(host_, *current_);
  wave* w = made.get();
  waves_.push_back(std::move(made));
  free_waves_.reserve(waves_.size());
  current_->waves.fetch_add(1);
  return {w, current_};
}

void scheduler_impl::live_began() {
  if (live_.fetch_add(1, std::memory_order_acq_rel) != 0) return;
  const std::lock_guard lock(state_mutex_);
  idle_ = false;
  if (!work_) work_.emplace(asio::prefer(host_.executor(), asio::execution::outstanding_work.tracked));
}

void scheduler_impl::live_began_locked() noexcept {
  if (live_.fetch_add(1, std::memory_order_acq_rel) != 0) return;
  idle_ = false;
  try {
    if (!work_) work_.emplace(asio::prefer(host_.executor(), asio::execution::outstanding_work.tracked));
  } catch (...) {
    // Without the work: what lives is posted to the executor, which keeps
    // an io_context running until it ran.
  }
}

void scheduler_impl::submit(const copied_request& request, encoder_ref encode, const completion_installer& install) {
  const auto [w, program] = take_wave();
  live_began();
  host_.counters().started();
  const bucket_choice choice = choose_bucket(program->program(), request);
  const std::uint64_t id = next_id_.fetch_add(1, std::memory_order_relaxed);
  try {
    if (const std::optional<error> refused = sync_refused(request, host_.devices())) {
      // Nothing of the semaphores is used: the wave fails before them.
      w->prepare(id, *program, nullptr, nullptr, encode, nullptr, refused->code, refused->what());
    } else if (choice.refused != errc::ok) {
      w->prepare(id, *program, nullptr, nullptr, encode, &request, make_error_code(choice.refused));
    } else if (!accepting_.load()) {
      w->prepare(id, *program, nullptr, nullptr, encode, &request, make_error_code(errc::scheduler_shut_down));
    } else {
      const compiled_bucket& bucket = program->program().buckets[choice.bucket];
      const auto devices = host_.devices();
      const bool one_device = devices.size() == 1;
      auto imports = resolve_imports(request.imports(), request.images(), bucket.lane, bucket.id,
                                     one_device ? devices.front().device : nullptr, program->placement(choice.bucket));
      if (!imports) {
        w->prepare(id, *program, nullptr, nullptr, encode, &request, imports.error().code, imports.error().what());
      } else {
        w->prepare(id, *program, &bucket, &program->dispatcher(choice.bucket), encode, &request, {}, {}, &*imports,
                   request.readback());
      }
    }
  } catch (...) {
    // No room for a new program's nodes could be made: the wave never started.
    recycle(this, *w);
    throw;
  }
  try {
    install.install(install.handler, w->completion, host_.executor());
  } catch (...) {
    // A handler too large for the wave that could not be allocated: the
    // wave never started.
    recycle(this, *w);
    throw;
  }
  w->launch();
}

void scheduler_impl::recycle(void* self, wave& w) noexcept { static_cast<scheduler_impl*>(self)->recycle_wave(w); }

void scheduler_impl::recycle_wave(wave& w) noexcept {
  // Both the coroutine and the completion's delivery are done with the wave.
  w.completion.reset();
  program_lanes& program = const_cast<program_lanes&>(w.program());
  {
    const std::lock_guard lock(waves_mutex_);
    free_waves_.push_back(&w);  // capacity reserved for every wave: never allocates
  }
  // The last wave of a replaced program may be the last of it that runs.
  if (program.waves.fetch_sub(1) == 1 && program.retired.load()) retire_if_done(program);
  live_ended();
}

void scheduler_impl::live_ended() noexcept {
  if (live_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // The last wave (or lane being made): settled under the lock, where a new first wave, shutdown
  // and the destructor look. Until idle_ is set here none of them goes
  // ahead, and once it is set nothing of this object is touched any more —
  // unless nobody owns it any more, when this is the last use of it.
  std::unique_lock lock(state_mutex_);
  if (live_.load(std::memory_order_acquire) != 0) return;
  idle_ = true;
  work_.reset();
  complete_shutdown_locked();
  idle_changed_.notify_all();
  if (!owned_by_last_wave_) return;
  abort_pending_locked();
  lock.unlock();
  host_.wait_for_posts();
  delete this;
}

void scheduler_impl::complete_shutdown_locked() noexcept {
  if (!idle_ || watching_ != 0) return;
  complete_shutdown_waiters_locked({});
}

void scheduler_impl::complete_shutdown_waiters_locked(error_code ec) noexcept {
  for (completion_waiter& waiter : shutdown_waiters_) {
    // Posted to the executor whose work the waiter holds (the handler's own,
    // or the scheduler's); the post keeps that work until the handler ran.
    asio::post(waiter.work, asio::append(std::move(waiter.handler), ec));
    waiter.work = {};
  }
  shutdown_waiters_.clear();
}

void scheduler_impl::abort_pending_locked() noexcept {
  closed_ = true;
  complete_shutdown_waiters_locked(asio::error::operation_aborted);
  const std::lock_guard lock(waves_mutex_);
  for (const auto& program : programs_) {
    for (completion_waiter& w : program->replaced)
      asio::post(w.work, asio::append(std::move(w.handler), asio::error::operation_aborted));
    program->replaced.clear();
  }
}

scheduler_stats scheduler_impl::stats() const noexcept {
  scheduler_stats s = host_.counters().read();
  // Waves alone: lanes being made are counted apart (and read apart, so
  // the two may disagree for a moment).
  const std::uint64_t live = live_.load(std::memory_order_acquire);
  const std::uint64_t making = making_.load(std::memory_order_relaxed);
  s.live = live > making ? live - making : 0;
  const std::lock_guard lock(waves_mutex_);
  for (const auto& program : programs_) {
    for (const auto& pool : program->pools()) {
      const lane_counts c = pool->counts();
      s.lanes += c.lanes;
      s.lane_bytes += c.bytes;
    }
  }
  return s;
}

std::uint64_t scheduler_impl::trim() {
  // Replaced programs' too: their free lanes wait for nothing.
  std::uint64_t freed = 0;
  const std::lock_guard lock(waves_mutex_);
  for (const auto& program : programs_)
    for (const auto& pool : program->pools()) freed += pool->trim();
  return freed;
}

std::shared_ptr<const compiled_program> scheduler_impl::program() const noexcept {
  const std::lock_guard lock(waves_mutex_);
  return current_->shared_program();
}

std::span<const std::unique_ptr<lane_pool>> scheduler_impl::pools() const noexcept {
  const std::lock_guard lock(waves_mutex_);
  return current_->pools();
}

void scheduler_impl::shutdown(completion_waiter waiter) {
  // Waves accepted before this still run to the end; later ones are refused.
  accepting_.store(false);
  const std::lock_guard lock(state_mutex_);
  shutdown_waiters_.push_back(std::move(waiter));
  complete_shutdown_locked();
}

void scheduler_impl::close() noexcept {
  accepting_.store(false);
  const std::lock_guard lock(waves_mutex_);
  for (const auto& program : programs_)
    for (std::size_t b = 0; b < program->program().buckets.size(); ++b)
      program->dispatcher(b).close(make_error_code(errc::scheduler_shut_down));
}

void scheduler_impl::close_to_last_wave() noexcept {
  close();
  // The handler this thread runs keeps its wave alive (live_ >= 1): the
  // last recycle comes after this, and sees the flag.
  const std::lock_guard lock(state_mutex_);
  owned_by_last_wave_ = true;
}

void scheduler_impl::close_and_wait() noexcept {
  close();
  {
    std::unique_lock lock(state_mutex_);
    idle_changed_.wait(lock, [&] { return idle_; });
    // Lanes still quarantined go to the device with the pools: a pending
    // async_shutdown or async_replace can no longer see them come back, and
    // its handler is invoked all the same, as Asio's operations are when
    // their object goes.
    abort_pending_locked();
  }
  // A device thread that posted a wave's last step may still be inside the
  // post; it touches nothing of ours afterwards.
  host_.wait_for_posts();
}

}  // namespace detail

// --- scheduler ------------------------------------------------------------------

result<std::unique_ptr<scheduler>> scheduler::create(std::shared_ptr<const compiled_program> program,
                                                     gpu::device& device, boost::asio::any_io_executor executor,
                                                     const scheduler_options& options) {
  gpu::device* const devices[] = {&device};
  return create(std::move(program), devices, std::move(executor), options);
}

result<std::unique_ptr<scheduler>> scheduler::create(std::shared_ptr<const compiled_program> program,
                                                     std::span<gpu::device* const> devices,
                                                     boost::asio::any_io_executor executor,
                                                     const scheduler_options& options) {
  if (!program) return make_error(errc::invalid_scheduler_option, "no compiled program");
  if (options.encoder_tasks == 0) return make_error(errc::invalid_scheduler_option, "encoder_tasks must be at least 1");
  if (options.fence_timeout.count() <= 0)
    return make_error(errc::invalid_scheduler_option, "fence_timeout must be positive");
  if (devices.empty()) return make_error(errc::invalid_scheduler_option, "no device");
  for (std::size_t d = 0; d < devices.size(); ++d) {
    if (devices[d] == nullptr)
      return make_error(errc::invalid_scheduler_option, "device " + std::to_string(d) + " is null");
    if (std::find(devices.begin(), devices.begin() + static_cast<std::ptrdiff_t>(d), devices[d]) !=
        devices.begin() + static_cast<std::ptrdiff_t>(d))
      return make_error(errc::invalid_scheduler_option, "device " + std::to_string(d) + " is given twice");
  }
  auto impl = std::make_unique<detail::scheduler_impl>(devices, std::move(executor), options);
  if (auto started = impl->start(std::move(program)); !started) return started.error();
  // Waves beyond the lanes queue for one; by default twice the lanes covers
  // a window of waves submitted ahead, and two more the one whose handler
  // submits the next and the one whose coroutine is ending, so that steady
  // state starts with no allocation.
  std::size_t lanes = 0;
  for (const auto& pool : impl->pools()) lanes += pool->counts().capacity;
  impl->reserve_waves(options.reserved_waves != 0 ? options.reserved_waves : 2 * lanes + 2);
  return std::unique_ptr<scheduler>(new scheduler(std::move(impl)));
}

scheduler::scheduler(std::unique_ptr<detail::scheduler_impl> impl) noexcept : impl_(std::move(impl)) {}

scheduler::~scheduler() {
  // From inside one of its waves' handlers, waiting for every handler to
  // run would wait for itself (and, on a one-thread io_context, for the
  // handlers queued behind it): the waves finish on their own and the last
  // one frees the implementation, as Asio's operations outlive their object.
  if (impl_->delivering_on_this_thread()) {
    impl_.release()->close_to_last_wave();
  } else {
    impl_->close_and_wait();
  }
}

scheduler::executor_type scheduler::get_executor() const noexcept { return impl_->host().executor(); }

void scheduler::submit(const detail::copied_request& request, detail::encoder_ref encode,
                       const detail::completion_installer& install) {
  impl_->submit(request, encode, install);
}

void scheduler::shutdown(detail::completion_waiter waiter) { impl_->shutdown(std::move(waiter)); }

void scheduler::replace(std::shared_ptr<const compiled_program> program, detail::completion_waiter waiter) {
  impl_->replace(std::move(program), std::move(waiter));
}

std::span<const std::unique_ptr<lane_pool>> scheduler::pools() const noexcept { return impl_->pools(); }

std::span<const std::unique_ptr<lane_pool>> scheduler::pools(std::size_t device) const noexcept {
  const std::span<const std::unique_ptr<lane_pool>> all = impl_->pools();
  const std::size_t buckets = all.size() / impl_->host().devices().size();
  return all.subspan(device * buckets, buckets);
}

scheduler_stats scheduler::stats() const noexcept { return impl_->stats(); }

std::uint64_t scheduler::trim() { return impl_->trim(); }

std::shared_ptr<const compiled_program> scheduler::program() const noexcept { return impl_->program(); }

gpu::device& scheduler::device(std::size_t index) const noexcept { return *impl_->host().devices()[index].device; }

std::size_t scheduler::device_count() const noexcept { return impl_->host().devices().size(); }

std::string_view to_string(wave_phase phase) noexcept {
  switch (phase) {
    case wave_phase::acquire:
      return "acquire";
    case wave_phase::bind:
      return "bind";
    case wave_phase::encode:
      return "encode";
    case wave_phase::submit:
      return "submit";
    case wave_phase::fence:
      return "fence";
    case wave_phase::release:
      return "release";
  }
  return "unknown";
}

}  // namespace ferrum
