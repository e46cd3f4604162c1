// scheduler_impl.hpp (private) — the scheduler behind the facade: admission,
// the recycled waves and their frames, the counters, shutdown
// (scheduler.cpp). A wave's own life is in wave.hpp / wave.cpp.
#pragma once

#include "ferrum/scheduler/detail/shutdown_waiter.hpp"
#include "ferrum/scheduler/scheduler.hpp"
#include "lane_group.hpp"
#include "recycling.hpp"
#include "wave.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace ferrum::detail {

// One device of the scheduler: how a wave's nodes go to its queues.
struct scheduler_device {
  gpu::device* device;
  std::size_t index;  // in the scheduler's devices
  submission_plan submissions;
};

class scheduler_impl {
 public:
  scheduler_impl(std::shared_ptr<const compiled_program> program, std::span<gpu::device* const> devices,
                 boost::asio::any_io_executor executor, const scheduler_options& options)
      : program_(std::move(program)),
        executor_(std::move(executor)),
        options_(options),
        watchdog_(options.fence_timeout) {
    devices_.reserve(devices.size());
    for (gpu::device* d : devices)
      devices_.push_back({d, devices_.size(), submission_plan(program_->dependencies, *d, options.queues)});
  }

  // Makes `count` waves (and frames, at the first wave) ahead: cold.
  void reserve_waves(std::size_t count);
  [[nodiscard]] wave_admission admit(const wave_request& request) const noexcept;
  // Takes a recycled wave (a new one at a new peak), installs its handler
  // through `install` and starts it.
  void submit(wave_admission admission, encoder_ref encode, const completion_installer& install);
  // The wave's coroutine ended and its completion was delivered: recycled.
  void recycle(wave& w) noexcept;

  // What a wave reports as it goes (lock-free counters).
  void counted(boost::system::error_code ec) noexcept;
  void lane_taken() noexcept;
  void lane_given_back() noexcept { in_flight_.fetch_sub(1, std::memory_order_relaxed); }

  // Posts `f` to the executor with its memory from `buffer`; counted, so
  // that destruction waits for a device thread still inside the post.
  template <class Function>
  void post(wave_buffer& buffer, Function&& f) noexcept {
    posting(1);
    post_with(executor_, buffer, std::forward<Function>(f));
    posting(-1);
  }
  // Counts a post made elsewhere (a completion to its handler's executor).
  void posting(int delta) noexcept { posting_.fetch_add(delta, std::memory_order_acq_rel); }

  // A pool started (+1) or ended (-1) a watch on a lane's fence: shutdown
  // waits for them.
  static void watch_changed(void* self, int delta) noexcept;
  void shutdown(shutdown_waiter waiter);
  // The scheduler goes: refuses new waves, fails queued ones, and waits
  // until no wave lives (every handler ran).
  void close_and_wait() noexcept;
  // The scheduler goes from inside one of its waves' handlers, which cannot
  // be waited for: refuses new waves, fails queued ones and returns; the
  // waves still living run to their end, and the last to be recycled
  // deletes this object.
  void close_to_last_wave() noexcept;
  [[nodiscard]] scheduler_stats stats() const noexcept;
  // The scheduler's entry for the device `pool` is on.
  [[nodiscard]] const scheduler_device& device_of(const lane_pool& pool) const noexcept;
  [[nodiscard]] bool every_device_lost() const noexcept;
  // Room for any device's segment values and waits (a wave runs on any).
  [[nodiscard]] submission_plan::values make_submission_values() const;

  std::shared_ptr<const compiled_program> program_;
  boost::asio::any_io_executor executor_;
  scheduler_options options_;
  std::vector<scheduler_device> devices_;
  // Each bucket's pools on every device, joined (declared before the pools:
  // it goes after them, as their lock and waiters live in it).
  std::vector<std::unique_ptr<lane_group>> groups_;
  // Device-major: device d's pool of bucket b at d * buckets + b.
  std::vector<std::unique_ptr<lane_pool>> pools_;
  frame_pool frames_;
  // Declared after the waves: it reads their entries until it stops.
  std::vector<std::unique_ptr<wave>> waves_;
  fence_watchdog watchdog_;

 private:
  [[nodiscard]] lane_group* pick(const wave_request& request) const noexcept;
  // Refuses later waves and fails the queued ones (scheduler_shut_down).
  void close() noexcept;
  [[nodiscard]] wave* take_wave();
  // With state_mutex_ held: completes the shutdown waiters once no wave
  // lives and no quarantined lane waits for its fence.
  void complete_shutdown_locked() noexcept;
  // With state_mutex_ held: posts every shutdown waiter's handler with `ec`.
  void complete_shutdown_waiters_locked(boost::system::error_code ec) noexcept;

  std::mutex waves_mutex_;         // guards waves_ and free_waves_
  std::vector<wave*> free_waves_;  // capacity reserved for every wave: pushing never allocates

  std::atomic<std::uint64_t> next_id_{1};
  // Posts in progress: a thread that posted a wave's last step may still be
  // inside Asio's post (signalling the executor) when the wave is done.
  std::atomic<int> posting_{0};
  std::atomic<bool> accepting_{true};

  // Counters: relaxed, read together by stats().
  std::atomic<std::uint64_t> started_{0};
  std::atomic<std::uint64_t> completed_{0};
  std::atomic<std::uint64_t> failed_{0};
  std::atomic<std::uint64_t> cancelled_{0};
  std::atomic<std::uint32_t> in_flight_{0};
  std::atomic<std::uint32_t> max_in_flight_{0};

  // Waves prepared and not yet recycled. Changed without a lock; only its
  // transitions from and to zero take state_mutex_ (they set idle_), so a
  // steady stream of waves takes no lock here.
  std::atomic<std::uint64_t> live_{0};
  mutable std::mutex state_mutex_;
  // No wave lives, and the last one has let go of this object: what
  // shutdown and the destructor wait for.
  bool idle_ = true;
  // The scheduler went from inside a wave's handler (close_to_last_wave):
  // the last wave to be recycled owns this object and frees it.
  bool owned_by_last_wave_ = false;
  std::condition_variable idle_changed_;
  // Quarantined lanes whose fence the pools still watch.
  std::uint64_t watching_ = 0;
  // The executor's outstanding work while any wave lives: a wave waiting for
  // a fence (completed from a device thread) keeps io_context::run going.
  std::optional<boost::asio::any_io_executor> work_;
  std::vector<shutdown_waiter> shutdown_waiters_;
};

}  // namespace ferrum::detail
