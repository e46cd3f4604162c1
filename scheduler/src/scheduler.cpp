// scheduler.cpp — the facade, and what is the scheduler's own: admission
// (which bucket a request runs in), the recycled waves, the counters and
// shutdown. A wave's own life is in wave.cpp.
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
#include <string>
#include <thread>

namespace ferrum {
namespace detail {

namespace asio = boost::asio;
using boost::system::error_code;

// --- scheduler_impl -------------------------------------------------------------

wave_admission scheduler_impl::admit(const wave_request& request) const noexcept {
  for (const auto d : request.extent)
    if (d == 0) return {nullptr, errc::invalid_wave_request};
  if (lane_group* group = pick(request)) return {group, errc::ok};
  return {nullptr, errc::no_bucket_fits};
}

lane_group* scheduler_impl::pick(const wave_request& request) const noexcept {
  lane_group* best = nullptr;
  std::uint64_t best_volume = std::numeric_limits<std::uint64_t>::max();
  for (const auto& group : groups_) {
    const bucket_spec& spec = group->bucket().spec;
    if (spec.cls.str() != request.bucket_class) continue;
    bool covers = true;
    std::uint64_t volume = 1;
    for (std::size_t d = 0; d < spec.dims.size(); ++d) {
      covers = covers && spec.dims[d] >= request.extent[d];
      volume = volume > std::numeric_limits<std::uint64_t>::max() / std::max<std::uint64_t>(spec.dims[d], 1)
                   ? std::numeric_limits<std::uint64_t>::max()
                   : volume * spec.dims[d];
    }
    // Groups are in bucket id order, so on equal volume the first id wins.
    if (covers && volume < best_volume) {
      best = group.get();
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
    waves_.push_back(
        std::make_unique<wave>(*this, program_->node_count, options_.trace != nullptr, options_.gpu_timestamps));
    free_waves_.push_back(waves_.back().get());
  }
}

wave* scheduler_impl::take_wave() {
  {
    const std::lock_guard lock(waves_mutex_);
    if (!free_waves_.empty()) {
      wave* w = free_waves_.back();
      free_waves_.pop_back();
      return w;
    }
  }
  // Cold: a new peak of waves alive at once.
  auto made = std::make_unique<wave>(*this, program_->node_count, options_.trace != nullptr, options_.gpu_timestamps);
  wave* w = made.get();
  const std::lock_guard lock(waves_mutex_);
  waves_.push_back(std::move(made));
  free_waves_.reserve(waves_.size());
  return w;
}

void scheduler_impl::submit(wave_admission admission, encoder_ref encode, const completion_installer& install) {
  wave* w = take_wave();
  if (live_.fetch_add(1, std::memory_order_acq_rel) == 0) {
    const std::lock_guard lock(state_mutex_);
    idle_ = false;
    if (!work_) work_.emplace(asio::prefer(executor_, asio::execution::outstanding_work.tracked));
  }
  started_.fetch_add(1, std::memory_order_relaxed);
  error_code early_error;
  if (admission.refused != errc::ok) {
    early_error = make_error_code(admission.refused);
  } else if (!accepting_.load()) {
    early_error = make_error_code(errc::scheduler_shut_down);
  }
  w->prepare(next_id_.fetch_add(1, std::memory_order_relaxed), early_error ? nullptr : admission.group, encode,
             early_error);
  try {
    install.install(install.handler, w->completion, executor_);
  } catch (...) {
    // A handler too large for the wave that could not be allocated: the
    // wave never started.
    recycle(*w);
    throw;
  }
  w->launch();
}

void scheduler_impl::recycle(wave& w) noexcept {
  // Both the coroutine and the completion's delivery are done with the wave.
  w.completion.reset();
  {
    const std::lock_guard lock(waves_mutex_);
    free_waves_.push_back(&w);  // capacity reserved for every wave: never allocates
  }
  if (live_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // The last wave: settled under the lock, where a new first wave, shutdown
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
  complete_shutdown_waiters_locked(asio::error::operation_aborted);
  lock.unlock();
  while (posting_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  delete this;
}

void scheduler_impl::complete_shutdown_locked() noexcept {
  if (!idle_ || watching_ != 0) return;
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
  if (!ec) {
    completed_.fetch_add(1, std::memory_order_relaxed);
  } else if (ec == asio::error::operation_aborted) {
    cancelled_.fetch_add(1, std::memory_order_relaxed);
  } else {
    failed_.fetch_add(1, std::memory_order_relaxed);
  }
}

void scheduler_impl::lane_taken() noexcept {
  const std::uint32_t now = in_flight_.fetch_add(1, std::memory_order_relaxed) + 1;
  std::uint32_t most = max_in_flight_.load(std::memory_order_relaxed);
  while (now > most && !max_in_flight_.compare_exchange_weak(most, now, std::memory_order_relaxed)) {
  }
}

const scheduler_device& scheduler_impl::device_of(const lane_pool& pool) const noexcept {
  for (const scheduler_device& d : devices_)
    if (d.device == &pool.device()) return d;
  return devices_.front();  // unreachable: every pool is on one of them
}

bool scheduler_impl::every_device_lost() const noexcept {
  return std::all_of(devices_.begin(), devices_.end(), [](const scheduler_device& d) { return d.device->lost(); });
}

submission_plan::values scheduler_impl::make_submission_values() const {
  submission_plan::values most = devices_.front().submissions.make_values();
  for (const scheduler_device& d : devices_) {
    submission_plan::values v = d.submissions.make_values();
    if (v.submitted.size() > most.submitted.size()) most.submitted = std::move(v.submitted);
    if (v.waits.capacity() > most.waits.capacity()) most.waits = std::move(v.waits);
  }
  return most;
}

scheduler_stats scheduler_impl::stats() const noexcept {
  scheduler_stats s;
  s.started = started_.load(std::memory_order_relaxed);
  s.completed = completed_.load(std::memory_order_relaxed);
  s.failed = failed_.load(std::memory_order_relaxed);
  s.cancelled = cancelled_.load(std::memory_order_relaxed);
  s.in_flight = in_flight_.load(std::memory_order_relaxed);
  s.max_in_flight = max_in_flight_.load(std::memory_order_relaxed);
  s.live = live_.load(std::memory_order_acquire);
  return s;
}

void scheduler_impl::shutdown(shutdown_waiter waiter) {
  // Waves accepted before this still run to the end; later ones are refused.
  accepting_.store(false);
  const std::lock_guard lock(state_mutex_);
  shutdown_waiters_.push_back(std::move(waiter));
  complete_shutdown_locked();
}

void scheduler_impl::close() noexcept {
  accepting_.store(false);
  for (auto& group : groups_) group->close(make_error_code(errc::scheduler_shut_down));
  for (auto& pool : pools_) pool->close(make_error_code(errc::scheduler_shut_down));
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
  gpu::device* const devices[] = {&device};
  return create(p, std::move(program), devices, std::move(executor), options);
}

result<std::unique_ptr<scheduler>> scheduler::create(const plan& p, std::shared_ptr<const compiled_program> program,
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
  // The lanes' evidence is recorded from `p`, so it must be the plan the
  // program was compiled from; hashing it once here, on the cold path, is
  // what compile did too (the plan keeps no hash of its own).
  const auto given = hash_plan(p);
  if (!given) return given.error();
  if (*given != program->hash)
    return make_error(errc::program_plan_mismatch,
                      "program compiled from plan " + program->hash.str() + ", given plan " + given->str());
  auto impl = std::make_unique<detail::scheduler_impl>(program, devices, std::move(executor), options);
  for (gpu::device* device : devices) {
    for (const compiled_bucket& bucket : program->buckets) {
      auto pool =
          lane_pool::create(p, *program, bucket, *device, impl->executor_, options.gpu_timestamps, options.queues);
      if (!pool) return pool.error();
      (*pool)->on_watch(&detail::scheduler_impl::watch_changed, impl.get());
      impl->pools_.push_back(std::move(*pool));
    }
  }
  const std::size_t buckets = program->buckets.size();
  for (std::size_t b = 0; b < buckets; ++b) {
    std::vector<lane_pool*> members;
    for (std::size_t d = 0; d < devices.size(); ++d) members.push_back(impl->pools_[d * buckets + b].get());
    impl->groups_.push_back(std::make_unique<detail::lane_group>(std::move(members)));
  }
  // Waves beyond the lanes queue for one; by default twice the lanes covers
  // a window of waves submitted ahead, and two more the one whose handler
  // submits the next and the one whose coroutine is ending, so that steady
  // state starts with no allocation.
  std::size_t lanes = 0;
  for (const auto& pool : impl->pools_) lanes += pool->lanes().size();
  impl->reserve_waves(options.reserved_waves != 0 ? options.reserved_waves : 2 * lanes + 2);
  return std::unique_ptr<scheduler>(new scheduler(std::move(impl)));
}

scheduler::scheduler(std::unique_ptr<detail::scheduler_impl> impl) noexcept : impl_(std::move(impl)) {}

scheduler::~scheduler() {
  // From inside one of its waves' handlers, waiting for every handler to
  // run would wait for itself (and, on a one-thread io_context, for the
  // handlers queued behind it): the waves finish on their own and the last
  // one frees the implementation, as Asio's operations outlive their object.
  if (detail::wave::delivering_on_this_thread(*impl_)) {
    impl_.release()->close_to_last_wave();
  } else {
    impl_->close_and_wait();
  }
}

scheduler::executor_type scheduler::get_executor() const noexcept { return impl_->executor_; }

detail::wave_admission scheduler::admit(const wave_request& request) const noexcept { return impl_->admit(request); }

void scheduler::submit(detail::wave_admission admission, detail::encoder_ref encode,
                       const detail::completion_installer& install) {
  impl_->submit(admission, encode, install);
}

void scheduler::shutdown(detail::shutdown_waiter waiter) { impl_->shutdown(std::move(waiter)); }

std::span<const std::unique_ptr<lane_pool>> scheduler::pools() const noexcept { return impl_->pools_; }

std::span<const std::unique_ptr<lane_pool>> scheduler::pools(std::size_t device) const noexcept {
  const std::size_t buckets = impl_->groups_.size();
  return std::span<const std::unique_ptr<lane_pool>>(impl_->pools_).subspan(device * buckets, buckets);
}

scheduler_stats scheduler::stats() const noexcept { return impl_->stats(); }

const compiled_program& scheduler::program() const noexcept { return *impl_->program_; }

gpu::device& scheduler::device(std::size_t index) const noexcept { return *impl_->devices_[index].device; }

std::size_t scheduler::device_count() const noexcept { return impl_->devices_.size(); }

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
