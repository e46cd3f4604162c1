// null_queue.hpp (private) — one of the null device's queues: its timeline,
// the worker thread that plays the GPU (or, with inline_completion, the
// submitting thread) and the submissions waiting for it. The worker runs
// each submission in order: its waits, its injected fault, its commands, the
// latency, then it advances the timeline.
#pragma once

#include "ferrum/gpu/queue.hpp"

#include "null/null_reorder.hpp"
#include "null/null_timeline.hpp"

#include <boost/system/error_code.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

namespace ferrum::gpu::null_detail {

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
    std::size_t first_op;      // its semaphore waits, then its signals
    std::size_t op_waits;
    std::size_t op_signals;
  };
  std::vector<command_list*> lists;
  std::vector<queue_wait> waits;
  std::vector<semaphore_op> ops;
  std::vector<entry> entries;

  batch() {
    // Room for a typical burst from the start, so that steady state never
    // grows a batch.
    lists.reserve(4096);
    waits.reserve(256);
    ops.reserve(256);
    entries.reserve(256);
  }

  void clear() noexcept {
    lists.clear();
    waits.clear();
    ops.clear();
    entries.clear();
  }
};

class null_device_impl;

// One queue: its timeline, its worker and the submissions waiting for it.
class null_queue final : public queue {
 public:
  // The timeline is a member: the base class only keeps its address until
  // the constructor has finished.
  // Throws std::bad_alloc.
  null_queue(null_device_impl& owner, std::size_t index, queue_kind kind);

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
                         std::span<const queue_wait> waits, const external_sync& external) override;

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
  bool run(std::span<command_list* const> lists, std::span<const queue_wait> waits, const external_sync& external,
           std::uint64_t value, std::uint64_t submission) noexcept;
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
  // reorder_unordered's order (used by whoever runs the submissions: the
  // worker, or the submitter under the base class's lock).
  null_reorderer reorder_;
  std::thread worker_;  // none with inline_completion
};

}  // namespace ferrum::gpu::null_detail
