// scheduler_impl.hpp (private) — the scheduler behind the facade
// (scheduler.cpp): which bucket a request runs in, the lane pools and their
// dispatchers, the recycled waves, shutdown. What its waves see of it is
// its wave_host; a wave's own life is in wave_impl.hpp.
#pragma once

#include "ferrum/scheduler/detail/shutdown_waiter.hpp"
#include "ferrum/scheduler/detail/wave_submission.hpp"
#include "ferrum/scheduler/scheduler.hpp"
#include "lane_dispatcher.hpp"
#include "wave_host.hpp"
#include "wave_impl.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

namespace ferrum::detail {

class scheduler_impl {
 public:
  scheduler_impl(std::shared_ptr<const compiled_program> program, std::span<gpu::device* const> devices,
                 boost::asio::any_io_executor executor, const scheduler_options& options);
  scheduler_impl(const scheduler_impl&) = delete;
  scheduler_impl& operator=(const scheduler_impl&) = delete;

  // Makes every lane pool from the program's lane recipes, one per (device,
  // bucket), a bucket's joined to its dispatcher (cold).
  [[nodiscard]] result<void> make_lanes();
  // Makes `count` waves (and frames, at the first wave) ahead: cold.
  void reserve_waves(std::size_t count);
  [[nodiscard]] bucket_choice choose_bucket(const wave_request& request) const noexcept;
  // Takes a recycled wave (a new one at a new peak), installs its handler
  // through `install` and starts it.
  void submit(bucket_choice choice, encoder_ref encode, const completion_installer& install);

  void shutdown(shutdown_waiter waiter);
  // The scheduler goes: refuses new waves, fails queued ones, and waits
  // until no wave lives (every handler ran).
  void close_and_wait() noexcept;
  // The scheduler goes from inside one of its waves' handlers, which cannot
  // be waited for: refuses new waves, fails queued ones and returns; the
  // waves still living run to their end, and the last to be recycled
  // deletes this object.
  void close_to_last_wave() noexcept;
  [[nodiscard]] bool delivering_on_this_thread() const noexcept { return wave::delivering_on_this_thread(host_); }

  [[nodiscard]] scheduler_stats stats() const noexcept;
  std::uint64_t trim();
  [[nodiscard]] const compiled_program& program() const noexcept { return *program_; }
  [[nodiscard]] std::span<const std::unique_ptr<lane_pool>> pools() const noexcept { return pools_; }
  [[nodiscard]] const wave_host& host() const noexcept { return host_; }

 private:
  // The wave's coroutine ended and its completion was delivered: recycled.
  static void recycle(void* self, wave& w) noexcept;
  void recycle_wave(wave& w) noexcept;
  // Something that needs this object began (a wave, a lane being made) or
  // ended: the destructor waits for none to live, and the last to end may
  // free this object (close_to_last_wave).
  void live_began();
  void live_ended() noexcept;
  // A lane pool started (+1) or ended (-1) a watch on a lane's fence:
  // shutdown waits for them.
  static void watch_changed(void* self, int delta) noexcept;
  // A lane pool started (+1) or ended (-1) making a lane: lives.
  static void making_changed(void* self, int delta) noexcept;
  // Refuses later waves and fails the queued ones (scheduler_shut_down).
  void close() noexcept;
  [[nodiscard]] wave* take_wave();
  // With state_mutex_ held: completes the shutdown waiters once no wave
  // lives and no quarantined lane waits for its fence.
  void complete_shutdown_locked() noexcept;
  // With state_mutex_ held: posts every shutdown waiter's handler with `ec`.
  void complete_shutdown_waiters_locked(boost::system::error_code ec) noexcept;

  std::shared_ptr<const compiled_program> program_;
  // Per bucket (program order), who holds which of its lanes on any device.
  std::vector<std::shared_ptr<lane_dispatcher>> dispatchers_;
  // Device-major: device d's lane pool of bucket b at d * buckets + b.
  std::vector<std::unique_ptr<lane_pool>> pools_;
  std::vector<std::unique_ptr<wave>> waves_;
  std::mutex waves_mutex_;         // guards waves_ and free_waves_
  std::vector<wave*> free_waves_;  // capacity reserved for every wave: pushing never allocates

  std::atomic<std::uint64_t> next_id_{1};
  std::atomic<bool> accepting_{true};
  // Waves prepared and not yet recycled, and lanes being made. Changed without a lock; only its
  // transitions from and to zero take state_mutex_ (they set idle_), so a
  // steady stream of waves takes no lock here.
  std::atomic<std::uint64_t> live_{0};
  std::atomic<std::uint64_t> making_{0};  // lanes being made (not waves)
  mutable std::mutex state_mutex_;
  // No wave lives, and the last one has let go of this object: what
  // shutdown and the destructor wait for.
  bool idle_ = true;
  // The scheduler went from inside a wave's handler (close_to_last_wave):
  // the last wave to be recycled owns this object and frees it.
  bool owned_by_last_wave_ = false;
  std::condition_variable idle_changed_;
  // Quarantined lanes whose fence the lane pools still watch.
  std::uint64_t watching_ = 0;
  // The executor's outstanding work while any wave lives: a wave waiting for
  // a fence (completed from a device thread) keeps io_context::run going.
  std::optional<boost::asio::any_io_executor> work_;
  std::vector<shutdown_waiter> shutdown_waiters_;
  // Last, so that it goes first: its fence watchdog stops before the waves
  // whose entries it reads go.
  wave_host host_;
};

}  // namespace ferrum::detail
