// scheduler_programs.cpp — the programs a scheduler runs: the first one
// made at create, a replacement made current (async_replace), a replaced one
// retired once nothing of it runs, and the lane pools' hooks that tell the
// scheduler what of a program still runs (design.md, "Plans that change").
#include "scheduler_impl.hpp"

#include "ferrum/async/post_once.hpp"

#include <boost/asio/append.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <vector>

namespace ferrum::detail {

namespace asio = boost::asio;
using boost::system::error_code;

lane_pool_hooks scheduler_impl::pool_hooks() const noexcept {
  return {&scheduler_impl::watch_changed, &scheduler_impl::making_changed, &scheduler_impl::lane_released, nullptr};
}

result<std::unique_ptr<program_lanes>> scheduler_impl::make_program(std::shared_ptr<const compiled_program> program) {
  std::vector<gpu::device*> devices;
  for (const wave_device& d : host_.devices()) devices.push_back(d.device);
  std::uint64_t serial = 0;
  {
    const std::lock_guard lock(waves_mutex_);
    serial = ++serial_;
  }
  return program_lanes::make(std::move(program), serial, devices, host_.executor(), host_.options(), pool_hooks(),
                             this);
}

result<void> scheduler_impl::start(std::shared_ptr<const compiled_program> program) {
  auto made = make_program(std::move(program));
  if (!made) return made.error();
  const std::lock_guard lock(waves_mutex_);
  current_ = made->get();
  programs_.push_back(std::move(*made));
  return {};
}

scheduler_impl& scheduler_impl::owner_of(void* program) noexcept {
  return *static_cast<scheduler_impl*>(static_cast<program_lanes*>(program)->owner());
}

void scheduler_impl::watch_changed(void* program, int delta) noexcept {
  auto& p = *static_cast<program_lanes*>(program);
  scheduler_impl& s = owner_of(program);
  if (delta > 0) {
    p.watching.fetch_add(1);
    const std::lock_guard lock(s.state_mutex_);
    ++s.watching_;
    return;
  }
  const bool last = p.watching.fetch_sub(1) == 1;
  bool retiring = false;
  {
    const std::lock_guard lock(s.state_mutex_);
    --s.watching_;
    // A replaced program this watch was the last of starts going before a
    // pending shutdown may complete: it lives until it went, so that a
    // shutdown handler that destroys the scheduler does not wait for the
    // retirement queued behind it (on a one-thread io_context, for ever).
    retiring = last && p.retired.load() && s.start_retiring_locked(p);
    s.complete_shutdown_locked();
  }
  if (retiring) s.post_retire(p);
}

void scheduler_impl::making_changed(void* program, int delta) noexcept {
  auto& p = *static_cast<program_lanes*>(program);
  scheduler_impl& s = owner_of(program);
  if (delta > 0) {
    p.making.fetch_add(1);
    s.making_.fetch_add(1, std::memory_order_relaxed);
    try {
      s.live_began();
    } catch (...) {
      // Counted as living all the same; the outstanding work could not be
      // taken, and the wave waiting for the lane holds it anyway.
    }
    return;
  }
  if (p.making.fetch_sub(1) == 1 && p.retired.load()) s.retire_if_done(p);
  s.making_.fetch_sub(1, std::memory_order_relaxed);
  s.live_ended();  // last: may free this object
}

void scheduler_impl::lane_released(void* program) noexcept {
  auto& p = *static_cast<program_lanes*>(program);
  if (p.retired.load()) owner_of(program).retire_if_done(p);
}

void scheduler_impl::replace(std::shared_ptr<const compiled_program> program, completion_waiter waiter) {
  const auto fail = [&](error_code ec) { asio::post(waiter.work, asio::append(std::move(waiter.handler), ec)); };
  if (!program) return fail(make_error_code(errc::invalid_scheduler_option));
  if (!accepting_.load()) return fail(make_error_code(errc::scheduler_shut_down));
  auto made = make_program(std::move(program));
  if (!made) return fail(made.error().code);
  program_lanes* old = nullptr;
  {
    const std::lock_guard lock(waves_mutex_);
    programs_.reserve(programs_.size() + 1);
    old = current_;
    current_ = made->get();
    programs_.push_back(std::move(*made));
  }
  {
    const std::lock_guard lock(state_mutex_);
    old->replaced.push_back(std::move(waiter));
  }
  // From here its last wave, lane or watch to end retires it (or this does).
  old->retired.store(true);
  retire_if_done(*old);
}

void scheduler_impl::retire_if_done(program_lanes& p) noexcept {
  {
    const std::lock_guard lock(state_mutex_);
    if (!start_retiring_locked(p)) return;
  }
  post_retire(p);
}

bool scheduler_impl::start_retiring_locked(program_lanes& p) noexcept {
  if (closed_ || p.retiring || p.busy()) return false;
  p.retiring = true;
  // Lives until retired: the destructor (and a pending shutdown) waits for it.
  live_began_locked();
  return true;
}

void scheduler_impl::post_retire(program_lanes& p) noexcept {
  // Posted: a fence watch or a lane being made that ends here is inside its
  // lane pool, which cannot go from there. Not run (its executor went with
  // it queued), it goes all the same.
  async::post_once(host_.executor(), [this, program = &p](bool run) noexcept { retire(program, run); });
}

void scheduler_impl::retire(program_lanes* p, bool ran) noexcept {
  std::unique_ptr<program_lanes> gone;
  {
    const std::lock_guard lock(waves_mutex_);
    const auto it = std::find_if(programs_.begin(), programs_.end(), [&](const auto& x) { return x.get() == p; });
    gone = std::move(*it);
    programs_.erase(it);
  }
  std::vector<completion_waiter> waiters;
  {
    const std::lock_guard lock(state_mutex_);
    waiters = std::move(gone->replaced);
  }
  // Its lanes' memory goes back to the device here.
  gone.reset();
  if (ran)
    for (completion_waiter& w : waiters) asio::post(w.work, asio::append(std::move(w.handler), error_code{}));
  waiters.clear();
  live_ended();  // last: may free this object
}

}  // namespace ferrum::detail
