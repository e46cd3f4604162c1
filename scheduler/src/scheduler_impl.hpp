// scheduler_impl.hpp (private) — the scheduler behind the facade
// (scheduler.cpp; its programs in scheduler_programs.cpp): which bucket a request runs in, the programs it runs
// (the current one and replaced ones still going, each with its lane pools:
// program_lanes.hpp), the recycled waves, replacement and shutdown. What its
// waves see of it is its wave_host; a wave's own life is in wave_impl.hpp.
#pragma once

#include "ferrum/scheduler/detail/completion_waiter.hpp"
#include "ferrum/scheduler/detail/wave_submission.hpp"
#include "ferrum/scheduler/scheduler_options.hpp"
#include "program_lanes.hpp"
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
  scheduler_impl(std::span<gpu::device* const> devices, boost::asio::any_io_executor executor,
                 const scheduler_options& options);
  scheduler_impl(const scheduler_impl&) = delete;
  scheduler_impl& operator=(const scheduler_impl&) = delete;

  // Makes the first program's lane pools (cold): its current program.
  [[nodiscard]] result<void> start(std::shared_ptr<const compiled_program> program);
  // Makes `count` waves (and frames, at the first wave) ahead: cold.
  void reserve_waves(std::size_t count);
  // Takes a recycled wave (a new one at a new peak), installs its handler
  // through `install` and starts it on the current program.
  void submit(const copied_request& request, encoder_ref encode, const completion_installer& install);

  void shutdown(completion_waiter waiter);
  void replace(std::shared_ptr<const compiled_program> program, completion_waiter waiter);
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
  [[nodiscard]] std::shared_ptr<const compiled_program> program() const noexcept;
  [[nodiscard]] std::span<const std::unique_ptr<lane_pool>> pools() const noexcept;
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
  // With state_mutex_ held: live_began without taking it.
  void live_began_locked() noexcept;
  // The hooks of a program's lane pools (context: the program_lanes). A
  // fence watch started (+1) or ended (-1): shutdown waits for them. A lane
  // started being made (+1) or was handed on (-1): lives. A lease gave a
  // lane back. Each may be the last thing a replaced program waited for.
  [[nodiscard]] lane_pool_hooks pool_hooks() const noexcept;
  static void watch_changed(void* program, int delta) noexcept;
  static void making_changed(void* program, int delta) noexcept;
  static void lane_released(void* program) noexcept;
  [[nodiscard]] static scheduler_impl& owner_of(void* program) noexcept;
  // Makes a program's lane pools (cold).
  [[nodiscard]] result<std::unique_ptr<program_lanes>> make_program(std::shared_ptr<const compiled_program> program);
  // A replaced program `p` may have nothing running any more: if so, it
  // goes (posted: retire()).
  void retire_if_done(program_lanes& p) noexcept;
  // With state_mutex_ held: whether `p` may go now; if so it is marked
  // going and lives until retire(), which post_retire then posts.
  [[nodiscard]] bool start_retiring_locked(program_lanes& p) noexcept;
  void post_retire(program_lanes& p) noexcept;
  // Removes `p` and frees its lanes, then completes the replacements that
  // waited for it (`ran` on the executor: with success; else, its post
  // destroyed unrun with the executor, their handlers are destroyed too).
  void retire(program_lanes* p, bool ran) noexcept;
  // Refuses later waves and fails the queued ones (scheduler_shut_down).
  void close() noexcept;
  // A recycled wave (a new one at a new peak), counted on the current program.
  [[nodiscard]] std::pair<wave*, program_lanes*> take_wave();
  // With state_mutex_ held: completes the shutdown waiters once no wave
  // lives and no quarantined lane waits for its fence.
  void complete_shutdown_locked() noexcept;
  // With state_mutex_ held, as the scheduler goes: replaced programs go no
  // more, and every pending shutdown and replacement completes with
  // operation_aborted.
  void abort_pending_locked() noexcept;
  // With state_mutex_ held: posts every shutdown waiter's handler with `ec`.
  void complete_shutdown_waiters_locked(boost::system::error_code ec) noexcept;

  std::vector<std::unique_ptr<wave>> waves_;
  // Guards waves_, free_waves_, programs_ and current_: a wave is taken and
  // counted on the current program in one step, which a replacement cannot
  // come between.
  mutable std::mutex waves_mutex_;
  std::vector<wave*> free_waves_;  // capacity reserved for every wave: pushing never allocates

  std::atomic<std::uint64_t> next_id_{1};
  std::atomic<bool> accepting_{true};
  // Waves prepared and not yet recycled, lanes being made and replaced
  // programs going. Changed without a lock; only its transitions from and to
  // zero take state_mutex_ (they set idle_), so a steady stream of waves
  // takes no lock here.
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
  std::vector<completion_waiter> shutdown_waiters_;
  // Closed (destroyed): no replaced program starts going any more.
  bool closed_ = false;
  // The programs: the current one, and replaced ones still going. Before
  // host_, so that their lane pools go after the fence watchdog stopped and
  // before everything their hooks touch.
  std::vector<std::unique_ptr<program_lanes>> programs_;
  program_lanes* current_ = nullptr;
  std::uint64_t serial_ = 0;
  // Last, so that it goes first: its fence watchdog stops before the waves
  // whose entries it reads go.
  wave_host host_;
};

}  // namespace ferrum::detail
