// wave_host.hpp (private) — what a wave needs of the scheduler that runs it,
// and nothing more: the executor and how to post to it, the options, the
// fence watchdog, the coroutine frames, the counters, the devices (not
// the program's), and where a finished wave goes back; and the memory
// waves reuse (coroutine frames, posts from a wave's own buffer). The scheduler
// (scheduler_impl.hpp) owns one; a wave (wave_impl.hpp) sees only this.
#pragma once

#include "fence_watchdog.hpp"
#include "ferrum/scheduler/lane_pool.hpp"
#include "ferrum/scheduler/scheduler_options.hpp"
#include "wave_imports.hpp"

#include "ferrum/async/post_buffer.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution/allocator.hpp>
#include <boost/asio/execution/blocking.hpp>
#include <boost/asio/execution/execute.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/require.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/system/error_code.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <span>
#include <thread>
#include <utility>
#include <vector>

namespace ferrum::detail {

class wave;

// --- the memory a wave reuses, so that in steady state it allocates nothing:
// frames of the wave coroutine, and posts whose memory is the wave's own
// buffer.

// Keeps freed blocks of one size (every wave runs the same coroutine, so its
// frames have one size) and hands them out again. Thread-safe.
class frame_pool {
 public:
  frame_pool() = default;
  frame_pool(const frame_pool&) = delete;
  frame_pool& operator=(const frame_pool&) = delete;
  ~frame_pool() {
    for (void* block : free_) ::operator delete(block);
  }

  // Makes `count` frames when the first is asked for (the size is known only
  // then), so that waves up to that many at once never allocate one.
  void reserve(std::size_t count) { reserve_ = count; }

  void* allocate(std::size_t bytes) {
    {
      const std::lock_guard lock(mutex_);
      if (size_ == 0) {
        size_ = bytes;
        free_.reserve(reserve_);
        while (free_.size() < reserve_) free_.push_back(::operator new(bytes));
      }
      if (bytes == size_ && !free_.empty()) {
        void* block = free_.back();
        free_.pop_back();
        return block;
      }
    }
    return ::operator new(bytes);
  }

  void deallocate(void* block, std::size_t bytes) noexcept {
    {
      const std::lock_guard lock(mutex_);
      // push_back allocates only when the pool reaches a new peak of frames.
      if (bytes == size_) {
        try {
          free_.push_back(block);
          return;
        } catch (const std::bad_alloc&) {
          // Not kept: freed below.
        }
      }
    }
    ::operator delete(block);
  }

 private:
  std::mutex mutex_;
  std::size_t size_ = 0;
  std::size_t reserve_ = 0;
  std::vector<void*> free_;
};

// Posts `f` to `executor` with its memory from `buffer`. Through an
// any_io_executor, Asio allocates the queued operation with the target
// executor's own allocator, which recycles only on Asio's threads; a device
// thread completing a fence is not one. For the executors engines use
// (io_context, thread_pool) the target is reached and given the buffer as its
// allocator, so the post allocates nothing from any thread.
template <std::size_t EntryBytes, class Function>
void post_with(const boost::asio::any_io_executor& executor, async::post_buffer<EntryBytes>& buffer, Function&& f) {
  namespace asio = boost::asio;
  const async::post_allocator<void, EntryBytes> allocator(&buffer);
  auto post_typed = [&](const auto& typed) {
    asio::execution::execute(
        asio::prefer(asio::require(typed, asio::execution::blocking.never), asio::execution::allocator(allocator)),
        std::forward<Function>(f));
  };
  if (const auto* io = executor.target<asio::io_context::executor_type>()) {
    post_typed(*io);
  } else if (const auto* pool = executor.target<asio::thread_pool::executor_type>()) {
    post_typed(*pool);
  } else {
    asio::post(executor, asio::bind_allocator(allocator, std::forward<Function>(f)));
  }
}

// --- the host ----------------------------------------------------------------------

// One device of the scheduler.
struct wave_device {
  gpu::device* device;
  std::size_t index;  // in the scheduler's devices
};

// What waves report as they go: lock-free counters, read together by
// scheduler::stats().
class wave_counters {
 public:
  void counted(boost::system::error_code ec) noexcept {
    if (!ec) {
      completed_.fetch_add(1, std::memory_order_relaxed);
    } else if (ec == boost::asio::error::operation_aborted) {
      cancelled_.fetch_add(1, std::memory_order_relaxed);
    } else {
      failed_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // A wave took a lane (in flight), or gave it back.
  void lane_taken() noexcept {
    const std::uint32_t now = in_flight_.fetch_add(1, std::memory_order_relaxed) + 1;
    std::uint32_t most = max_in_flight_.load(std::memory_order_relaxed);
    while (now > most && !max_in_flight_.compare_exchange_weak(most, now, std::memory_order_relaxed)) {
    }
  }
  void lane_given_back() noexcept { in_flight_.fetch_sub(1, std::memory_order_relaxed); }
  void started() noexcept { started_.fetch_add(1, std::memory_order_relaxed); }
  // Every counter but `live`.
  [[nodiscard]] scheduler_stats read() const noexcept {
    scheduler_stats s;
    s.started = started_.load(std::memory_order_relaxed);
    s.completed = completed_.load(std::memory_order_relaxed);
    s.failed = failed_.load(std::memory_order_relaxed);
    s.cancelled = cancelled_.load(std::memory_order_relaxed);
    s.in_flight = in_flight_.load(std::memory_order_relaxed);
    s.max_in_flight = max_in_flight_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  std::atomic<std::uint64_t> started_{0};
  std::atomic<std::uint64_t> completed_{0};
  std::atomic<std::uint64_t> failed_{0};
  std::atomic<std::uint64_t> cancelled_{0};
  std::atomic<std::uint32_t> in_flight_{0};
  std::atomic<std::uint32_t> max_in_flight_{0};
};

// The memory of what a wave posts (its start, one post per encoder task, a
// resumption, the fence's hand-off): one entry each.
inline constexpr std::size_t wave_entry_bytes = 512;
using wave_buffer = async::post_buffer<wave_entry_bytes>;

class wave_host {
 public:
  // `on_recycle(owner, w)`: wave `w` has ended and its completion was delivered.
  wave_host(std::span<gpu::device* const> devices, boost::asio::any_io_executor executor,
            const scheduler_options& options, void (*on_recycle)(void* owner, wave& w) noexcept, void* owner)
      : executor_(std::move(executor)),
        options_(options),
        recycle_(on_recycle),
        owner_(owner),
        watchdog_(options.fence_timeout) {
    devices_.reserve(devices.size());
    for (gpu::device* d : devices) devices_.push_back({d, devices_.size()});
  }
  wave_host(const wave_host&) = delete;
  wave_host& operator=(const wave_host&) = delete;

  [[nodiscard]] const boost::asio::any_io_executor& executor() const noexcept { return executor_; }
  [[nodiscard]] const scheduler_options& options() const noexcept { return options_; }
  [[nodiscard]] fence_watchdog& watchdog() noexcept { return watchdog_; }
  [[nodiscard]] frame_pool& frames() noexcept { return frames_; }
  [[nodiscard]] wave_counters& counters() noexcept { return counters_; }
  [[nodiscard]] const wave_counters& counters() const noexcept { return counters_; }
  // How its waves' imported buffers are ordered between them.
  [[nodiscard]] import_order& imports() noexcept { return imports_; }

  [[nodiscard]] std::span<const wave_device> devices() const noexcept { return devices_; }
  // The device lane `l` is on.
  [[nodiscard]] const wave_device& device_of(const held_lane& l) const noexcept {
    for (const wave_device& d : devices_)
      if (d.device == &l.pool()->device()) return d;
    return devices_.front();  // unreachable: every lane is on one of them
  }
  [[nodiscard]] bool every_device_lost() const noexcept {
    return std::all_of(devices_.begin(), devices_.end(), [](const wave_device& d) { return d.device->lost(); });
  }

  // Posts `f` to the executor with its memory from `buffer`; counted, so
  // that the scheduler's destruction waits for a device thread still inside
  // the post.
  template <class Function>
  void post(wave_buffer& buffer, Function&& f) noexcept {
    posting(1);
    post_with(executor_, buffer, std::forward<Function>(f));
    posting(-1);
  }
  // Counts a post made elsewhere (a completion to its handler's executor).
  void posting(int delta) noexcept { posting_.fetch_add(delta, std::memory_order_acq_rel); }
  // Returns once no thread is inside a post any more.
  void wait_for_posts() const noexcept {
    while (posting_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  }

  void recycle(wave& w) noexcept { recycle_(owner_, w); }

 private:
  boost::asio::any_io_executor executor_;
  scheduler_options options_;
  std::vector<wave_device> devices_;
  frame_pool frames_;
  wave_counters counters_;
  import_order imports_;
  // Posts in progress: a thread that posted a wave's last step may still be
  // inside Asio's post (signalling the executor) when the wave is done.
  std::atomic<int> posting_{0};
  void (*recycle_)(void* owner, wave& w) noexcept;
  void* owner_;
  // Last, so that it stops first: it reads the waves' entries until then.
  fence_watchdog watchdog_;
};

}  // namespace ferrum::detail
