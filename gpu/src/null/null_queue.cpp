// null_queue.cpp — a null device's queue: taking submissions, the worker
// that runs them in order (waits, faults, commands, latency) and advances the
// queue's timeline (null_queue.hpp).
#include "null/null_queue.hpp"

#include "null/null_command_list.hpp"
#include "null/null_device.hpp"
#include "null/null_semaphore.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

namespace ferrum::gpu::null_detail {

null_queue::null_queue(null_device_impl& owner, std::size_t index, queue_kind kind)
    : queue(owner, timeline_, index, kind), device_(owner) {}

void null_queue::request_stop() noexcept {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
}

result<void> null_queue::do_submit(std::span<command_list* const> lists, std::uint64_t signal_value,
                                   std::span<const queue_wait> waits, const external_sync& external) {
  if (device_.options().inline_completion) {
    // Nothing waits on the submitting thread: a semaphore not signalled yet
    // is refused (and nothing submitted).
    for (std::size_t i = 0; i < external.waits.size(); ++i) {
      const semaphore_op& w = external.waits[i];
      // Earlier waits of this submission on the same binary semaphore take
      // a signal each first: two waits on one signal would block here.
      const auto ahead = static_cast<std::uint64_t>(
          std::count_if(external.waits.begin(), external.waits.begin() + static_cast<std::ptrdiff_t>(i),
                        [&](const semaphore_op& earlier) { return earlier.on == w.on; }));
      if (!static_cast<const null_semaphore*>(w.on)->ready(w.value, ahead))
        return make_error(errc::wait_not_submitted, "semaphore wait " + std::to_string(i) +
                                                        " is not signalled, and inline_completion cannot wait");
    }
    const std::uint64_t submission = ++submissions_;
    // create refused every option that pauses, so run() cannot stop early,
    // and every submitted value is reached inside its submit: a wait not
    // reached means its submission was lost. A loss since the queue's check
    // leaves the submission unrun, as on the worker.
    const bool ready =
        std::all_of(waits.begin(), waits.end(), [](const queue_wait& w) { return w.on->timeline().reached(w.value); });
    if (ready && !device_.lost()) run(lists, waits, external, signal_value, submission);
    return {};
  }
  const std::uint64_t submission = ++submissions_;
  {
    const std::lock_guard lock(mutex_);
    pending_.entries.push_back({pending_.lists.size(), lists.size(), pending_.waits.size(), waits.size(), signal_value,
                                submission, pending_.ops.size(), external.waits.size(), external.signals.size()});
    pending_.lists.insert(pending_.lists.end(), lists.begin(), lists.end());
    pending_.waits.insert(pending_.waits.end(), waits.begin(), waits.end());
    pending_.ops.insert(pending_.ops.end(), external.waits.begin(), external.waits.end());
    pending_.ops.insert(pending_.ops.end(), external.signals.begin(), external.signals.end());
  }
  wake_.notify_one();
  return {};
}

void null_queue::work() noexcept {
  batch running;
  bool stalled = false;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !pending_.entries.empty(); });
      if (pending_.entries.empty()) return;  // stopping, and everything given has been handled
      std::swap(running, pending_);
    }
    for (const batch::entry& e : running.entries) {
      // Behind a hang that never ended, or on a lost device, nothing runs:
      // those values are never reached and their waits fail at shutdown or
      // have failed with the loss already.
      if (stalled || device_.lost()) continue;
      const std::span<const semaphore_op> ops = std::span(running.ops).subspan(e.first_op, e.op_waits + e.op_signals);
      stalled = !run(std::span(running.lists).subspan(e.first_list, e.list_count),
                     std::span(running.waits).subspan(e.first_wait, e.wait_count),
                     {ops.first(e.op_waits), ops.subspan(e.op_waits)}, e.value, e.submission);
    }
    running.clear();
  }
}

bool null_queue::run(std::span<command_list* const> lists, std::span<const queue_wait> waits,
                     const external_sync& external, std::uint64_t value, std::uint64_t submission) noexcept {
  // The waits first, as a GPU queue's semaphore waits: the submission's
  // commands, and its faults, come once every waited value is reached.
  for (const queue_wait& w : waits) {
    // The base class checked that each waited queue is this device's.
    auto& waited = static_cast<null_queue&>(device_.queue_at(w.on->index()));
    if (!await(waited.own_timeline(), w.value)) return false;
  }
  // The base class checked that each semaphore is this device's. Every
  // stage waits: the worker runs commands one after another.
  for (const semaphore_op& w : external.waits) {
    auto& s = static_cast<null_semaphore&>(*w.on);
    // Read before the wait: once a timeline semaphore's value came, its
    // owner may destroy it (nothing of the worker touches it again).
    const bool binary = s.kind() == semaphore_kind::binary;
    if (!await(s.counter(), s.start_wait(w.value))) return false;
    if (binary) s.wait_ended();
  }
  // A loss while the worker waited on a semaphore (which the loss does not
  // fail) leaves the submission unrun, as any other behind the loss.
  if (!external.waits.empty() && device_.lost()) return true;
  const null_fault_options& faults = device_.options().faults;
  const std::optional<fault_decision> fault = decide_fault(faults, index(), submission);
  if (fault && fault->kind == fault_kind::lost) {
    device_.count(fault_kind::lost);
    device_.lose();
    return true;
  }
  if (device_.options().reorder_unordered) {
    reorder_.run(lists, [this](std::string what) noexcept { device_.report_barrier_access(std::move(what)); });
  } else {
    for (const command_list* list : lists) static_cast<const null_command_list*>(list)->run();
  }
  std::chrono::microseconds latency = device_.options().latency;
  if (fault && fault->kind == fault_kind::delay) {
    device_.count(fault_kind::delay);
    latency += fault->delay;
  }
  if (latency.count() > 0 && !pause(latency, false)) return false;
  if (fault && fault->kind == fault_kind::hang) {
    device_.count(fault_kind::hang);
    const auto duration = std::chrono::duration_cast<std::chrono::microseconds>(faults.hang_duration);
    if (!pause(duration, duration.count() == 0)) return false;
  }
  // The semaphores before the queue's own value: whoever sees the
  // submission's value reached finds them signalled.
  for (const semaphore_op& signal : external.signals) static_cast<null_semaphore&>(*signal.on).signal(signal.value);
  timeline_.advance(value);
  return true;
}

void null_queue::dependency::on_complete(timeline_wait* wait, boost::system::error_code ec) noexcept {
  auto* d = static_cast<dependency*>(wait);
  // Read before the lock is released: once `done` is seen, the worker may end
  // the dependency's life. The queue outlives it (the device joins the
  // worker that would advance or fail the timeline first).
  null_queue& q = *d->owner;
  {
    const std::lock_guard lock(q.mutex_);
    d->ec = ec;
    d->done = true;
  }
  q.wake_.notify_all();
}

bool null_queue::await(null_timeline& t, std::uint64_t value) noexcept {
  if (t.reached(value)) return true;
  dependency d(value, *this);
  // Neither call holds mutex_: start_wait may complete `d` at once, which
  // takes it.
  (void)t.start_wait(&d);  // a new wait: not pending anywhere
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [&] { return d.done || stopping_; });
  if (d.done) return !d.ec;
  lock.unlock();
  // Stopping with the value not reached (the other queue hangs, or runs
  // behind): take the wait back. When it is already being completed, its
  // completion takes mutex_: wait for it to finish with `d`.
  if (!t.cancel_wait(&d)) {
    lock.lock();
    wake_.wait(lock, [&] { return d.done; });
  }
  return false;
}

bool null_queue::pause(std::chrono::microseconds duration, bool forever) noexcept {
  std::unique_lock lock(mutex_);
  const auto stopped = [&] { return stopping_; };
  if (forever) {
    wake_.wait(lock, stopped);
  } else {
    wake_.wait_for(lock, duration, stopped);
  }
  return !stopping_;
}

}  // namespace ferrum::gpu::null_detail
