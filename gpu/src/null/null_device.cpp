// The null device: a worker thread, or the submitting thread, plays the GPU
// (ferrum/gpu/null_device.hpp).
#include "ferrum/gpu/null_device.hpp"

#include "ferrum/seeded.hpp"
#include "null_objects.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace ferrum::gpu {
namespace {

using ferrum::splitmix64;
using ferrum::unit_interval;
using namespace null_detail;

// Submissions waiting for a queue's worker. The worker swaps the whole batch
// out under the lock and runs it unlocked; both batches keep their capacity,
// so steady-state submissions allocate nothing.
struct batch {
  struct entry {
    std::size_t first_list;
    std::size_t list_count;
    std::size_t first_wait;
    std::size_t wait_count;
    std::uint64_t value;
    std::uint64_t submission;  // 1 for the first submission to the queue
  };
  std::vector<command_list*> lists;
  std::vector<queue_wait> waits;
  std::vector<entry> entries;

  batch() {
    // Room for a typical burst from the start, so that steady state never
    // grows a batch.
    lists.reserve(4096);
    waits.reserve(256);
    entries.reserve(256);
  }

  void clear() noexcept {
    lists.clear();
    waits.clear();
    entries.clear();
  }
};

class null_device_impl;

// The null device's timeline: only its queue's worker (advance) and the
// device's loss and shutdown (fail) move it.
class null_timeline final : public timeline {
 public:
  using timeline::advance;
  using timeline::fail;
};

// One queue: its timeline, its worker and the submissions waiting for it.
class null_queue final : public queue {
 public:
  // The timeline is a member: the base class only keeps its address until
  // the constructor has finished.
  null_queue(null_device_impl& owner, std::size_t index, queue_kind kind) noexcept;

  [[nodiscard]] null_timeline& own_timeline() noexcept { return timeline_; }

  // Starts the worker thread. Throws std::system_error when it cannot.
  void start() {
    worker_ = std::thread([this] { work(); });
  }
  // Tells the worker to stop: it abandons its pauses and waits, runs nothing
  // more after them, and ends once it has handled what it was given.
  void request_stop() noexcept;
  // Joins the worker (after request_stop).
  void join() noexcept {
    if (worker_.joinable()) worker_.join();
  }

 protected:
  result<void> do_submit(std::span<command_list* const> lists, std::uint64_t signal_value,
                         std::span<const queue_wait> waits) override;

 private:
  // A wait of the worker on another timeline, completed by whoever advances
  // or fails that timeline.
  struct dependency final : timeline_wait {
    dependency(std::uint64_t wait_value, null_queue& waiter) noexcept
        : timeline_wait(wait_value, &on_complete), owner(&waiter) {}
    static void on_complete(timeline_wait* wait, boost::system::error_code ec) noexcept;

    null_queue* owner;
    // Under the queue's mutex_.
    bool done = false;
    boost::system::error_code ec;
  };

  void work() noexcept;
  // Runs one submission (`submission` is 1 for the first on this queue);
  // false when the worker must stop running work (the device stopped during a
  // hang that had no end or a wait, or a waited timeline failed).
  bool run(std::span<command_list* const> lists, std::span<const queue_wait> waits, std::uint64_t value,
           std::uint64_t submission) noexcept;
  // Blocks until `t` reached `value` (true), or failed or the device stops
  // (false).
  bool await(null_timeline& t, std::uint64_t value) noexcept;
  // Sleeps for `duration` (or forever), or until the device stops; false when
  // it stopped: shutdown abandons what is left rather than wait it out.
  bool pause(std::chrono::microseconds duration, bool forever) noexcept;

  null_device_impl& device_;
  null_timeline timeline_;
  std::mutex mutex_;
  std::condition_variable wake_;
  batch pending_;
  // Under the base class's lock (do_submit's caller), which orders
  // submissions.
  std::uint64_t submissions_ = 0;
  bool stopping_ = false;
  std::thread worker_;  // none with inline_completion
};

class null_device_impl final : public null_device {
 public:
  explicit null_device_impl(const null_device_options& options);
  ~null_device_impl() override;

  [[nodiscard]] fault_counts injected_faults() const noexcept override {
    return {delays_.load(std::memory_order_relaxed), hangs_.load(std::memory_order_relaxed),
            losses_.load(std::memory_order_relaxed)};
  }
  void lose() noexcept override {
    for (const auto& q : queues_) q->own_timeline().fail(make_error_code(errc::device_lost));
  }

  [[nodiscard]] const null_device_options& options() const noexcept { return options_; }
  void count(fault_kind kind) noexcept {
    std::atomic<std::uint64_t>& counter =
        kind == fault_kind::delay ? delays_ : (kind == fault_kind::hang ? hangs_ : losses_);
    counter.fetch_add(1, std::memory_order_relaxed);
  }

 protected:
  result<std::unique_ptr<arena>> do_create_arena(std::size_t bytes) override;
  result<std::unique_ptr<kernel>> do_create_kernel(const kernel_source& source) override;
  result<std::unique_ptr<command_list>> do_create_command_list(queue_kind kind) override {
    return std::unique_ptr<command_list>(new null_command_list(*this, kind));
  }
  result<std::unique_ptr<timestamp_pool>> do_create_timestamp_pool(std::uint32_t slots, timestamp_clock&) override {
    return std::unique_ptr<timestamp_pool>(new null_timestamp_pool(*this, slots));
  }

 private:
  void stop() noexcept;

  null_device_options options_;
  std::vector<std::unique_ptr<null_queue>> queues_;

  std::atomic<std::uint64_t> delays_{0};
  std::atomic<std::uint64_t> hangs_{0};
  std::atomic<std::uint64_t> losses_{0};
};

null_queue::null_queue(null_device_impl& owner, std::size_t index, queue_kind kind) noexcept
    : queue(owner, timeline_, index, kind), device_(owner) {}

void null_queue::request_stop() noexcept {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
}

result<void> null_queue::do_submit(std::span<command_list* const> lists, std::uint64_t signal_value,
                                   std::span<const queue_wait> waits) {
  const std::uint64_t submission = ++submissions_;
  if (device_.options().inline_completion) {
    // create refused every option that pauses, so run() cannot stop early,
    // and every submitted value is reached inside its submit: a wait not
    // reached means its submission was lost. A loss since the queue's check
    // leaves the submission unrun, as on the worker.
    const bool ready =
        std::all_of(waits.begin(), waits.end(), [](const queue_wait& w) { return w.on->timeline().reached(w.value); });
    if (ready && !device_.lost()) run(lists, waits, signal_value, submission);
    return {};
  }
  {
    const std::lock_guard lock(mutex_);
    pending_.entries.push_back(
        {pending_.lists.size(), lists.size(), pending_.waits.size(), waits.size(), signal_value, submission});
    pending_.lists.insert(pending_.lists.end(), lists.begin(), lists.end());
    pending_.waits.insert(pending_.waits.end(), waits.begin(), waits.end());
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
      if (!stalled && !device_.lost())
        stalled = !run(std::span(running.lists).subspan(e.first_list, e.list_count),
                       std::span(running.waits).subspan(e.first_wait, e.wait_count), e.value, e.submission);
    }
    running.clear();
  }
}

bool null_queue::run(std::span<command_list* const> lists, std::span<const queue_wait> waits, std::uint64_t value,
                     std::uint64_t submission) noexcept {
  // The waits first, as a GPU queue's semaphore waits: the submission's
  // commands, and its faults, come once every waited value is reached.
  for (const queue_wait& w : waits) {
    // The base class checked that each waited queue is this device's.
    auto& waited = static_cast<null_queue&>(device_.queue_at(w.on->index()));
    if (!await(waited.own_timeline(), w.value)) return false;
  }
  const null_fault_options& faults = device_.options().faults;
  const std::optional<fault_decision> fault = decide_fault(faults, index(), submission);
  if (fault && fault->kind == fault_kind::lost) {
    device_.count(fault_kind::lost);
    device_.lose();
    return true;
  }
  for (const command_list* list : lists) static_cast<const null_command_list*>(list)->run();
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

null_device_impl::null_device_impl(const null_device_options& options)
    : null_device("null", "null", {options.max_arena_bytes, 65535}), options_(options) {
  queues_.push_back(std::make_unique<null_queue>(*this, 0, queue_kind::compute));
  if (options_.queues == 2) queues_.push_back(std::make_unique<null_queue>(*this, 1, queue_kind::transfer));
  set_queues({queues_.front().get(), queues_.back().get()});
  set_timestamp_clock(options.timestamps ? timestamp_clock{true, "steady_clock", std::chrono::nanoseconds(0)}
                                         : timestamp_clock{false, "null_device_options::timestamps is off",
                                                           std::chrono::nanoseconds(0)});
  if (!options_.inline_completion) {
    try {
      for (const auto& q : queues_) q->start();
    } catch (...) {
      stop();
      throw;
    }
  }
}

null_device_impl::~null_device_impl() {
  stop();
  release_retired();
  // The workers ran or dropped everything they were given; waits on values
  // they did not reach would otherwise never complete.
  for (const auto& q : queues_) q->own_timeline().fail(make_error_code(errc::device_shut_down));
}

void null_device_impl::stop() noexcept {
  // Every worker is told before any is joined: one may be waiting for
  // another's value, which a stopping worker will never reach.
  for (const auto& q : queues_) q->request_stop();
  for (const auto& q : queues_) q->join();
}

result<std::unique_ptr<arena>> null_device_impl::do_create_arena(std::size_t bytes) {
  auto* storage = static_cast<std::byte*>(::operator new[](bytes, null_arena::alignment, std::nothrow));
  if (storage == nullptr) return make_error(errc::out_of_host_memory, std::to_string(bytes) + " bytes");
  std::memset(storage, 0, bytes);
  return std::unique_ptr<arena>(new null_arena(*this, storage, bytes));
}

result<std::unique_ptr<kernel>> null_device_impl::do_create_kernel(const kernel_source& source) {
  if (source.cpu == nullptr)
    return make_error(errc::invalid_kernel, "kernel " + quote_text(source.name) + " has no CPU form");
  return std::unique_ptr<kernel>(new null_kernel(*this, source));
}

}  // namespace

std::optional<fault_decision> decide_fault(const null_fault_options& options, std::uint64_t submission) noexcept {
  return decide_fault(options, 0, submission);
}

std::optional<fault_decision> decide_fault(const null_fault_options& options, std::size_t queue_index,
                                           std::uint64_t submission) noexcept {
  // Queue 0 hashes the seed itself (the decisions of a device with one
  // queue); every other queue a seed derived from it and its index.
  const std::uint64_t seed =
      queue_index == 0 ? options.seed : splitmix64(options.seed ^ splitmix64(~std::uint64_t{queue_index}));
  const std::uint64_t bits = splitmix64(seed ^ splitmix64(submission));
  const double u = unit_interval(bits);
  double band = options.lost;
  if (u < band) return fault_decision{fault_kind::lost};
  band += options.hang;
  if (u < band) return fault_decision{fault_kind::hang};
  band += options.delay;
  if (u < band) {
    const auto span = static_cast<std::uint64_t>(std::max<std::int64_t>(options.max_delay.count(), 0)) + 1;
    return fault_decision{fault_kind::delay,
                          std::chrono::microseconds(static_cast<std::int64_t>(splitmix64(bits) % span))};
  }
  return std::nullopt;
}

result<std::unique_ptr<null_device>> null_device::create(const null_device_options& options) {
  const auto probability = [](double p) { return std::isfinite(p) && p >= 0.0 && p <= 1.0; };
  const null_fault_options& f = options.faults;
  if (!probability(f.lost) || !probability(f.hang) || !probability(f.delay))
    return make_error(errc::invalid_device_option, "fault probabilities must lie in [0, 1]");
  if (options.latency.count() < 0 || f.max_delay.count() < 0 || f.hang_duration.count() < 0)
    return make_error(errc::invalid_device_option, "latency, max_delay and hang_duration must not be negative");
  if (options.max_arena_bytes == 0) return make_error(errc::invalid_device_option, "max_arena_bytes must be positive");
  if (options.queues != 1 && options.queues != 2)
    return make_error(errc::invalid_device_option, "queues must be 1 or 2, not " + std::to_string(options.queues));
  if (options.inline_completion) {
    // Each of these would make the submitting thread sleep inside submit.
    std::string pausing;
    const auto conflicts = [&](bool set, const char* field) {
      if (set) pausing += (pausing.empty() ? "" : ", ") + std::string(field);
    };
    conflicts(options.latency.count() > 0, "latency");
    conflicts(f.delay > 0, "faults.delay");
    conflicts(f.hang > 0, "faults.hang");
    if (!pausing.empty())
      return make_error(errc::invalid_device_option, "inline_completion cannot be combined with " + pausing);
  }
  try {
    return std::unique_ptr<null_device>(new null_device_impl(options));
  } catch (const std::system_error& e) {
    return make_error(errc::out_of_host_memory, std::string("starting a queue's worker thread: ") + e.what());
  }
}

}  // namespace ferrum::gpu
