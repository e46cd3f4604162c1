// scheduler_impl.hpp (private) — the scheduler's state: its pools, its
// recycled waves and frames, its counters, and the wave coroutine's steps.
#pragma once

#include "ferrum/scheduler/scheduler.hpp"
#include "recycling.hpp"
#include "wave_state.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <string_view>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace ferrum::detail {

class scheduler_impl {
 public:
  scheduler_impl(std::shared_ptr<const compiled_program> program, gpu::device& device,
                 boost::asio::any_io_executor executor, const scheduler_options& options)
      : program_(std::move(program)), device_(device), executor_(std::move(executor)), options_(options) {}

  // --- waves (scheduler.cpp) ---
  // Makes `count` waves (and frames, at the first wave) ahead: cold.
  void reserve_waves(std::size_t count);
  [[nodiscard]] wave_admission admit(const wave_request& request) const noexcept;
  wave* prepare(wave_admission admission, encoder_ref encode);
  void launch(wave& w) noexcept;
  void cancel(wave& w, boost::asio::cancellation_type_t type) noexcept;
  // One of the wave's two holders (its coroutine, its completion's delivery)
  // let go; the last recycles the wave.
  void unref(wave& w) noexcept;
  void counted(boost::system::error_code ec) noexcept;
  void lane_taken() noexcept;
  void lane_given_back() noexcept;
  // A pool started (+1) or ended (-1) a watch on a lane's fence: shutdown
  // waits for them.
  static void watch_changed(void* self, int delta) noexcept;
  // With state_mutex_ held: completes the shutdown waiters once no wave
  // lives and no quarantined lane waits for its fence.
  void complete_shutdown_locked() noexcept;
  // With state_mutex_ held: posts every shutdown waiter's handler with `ec`.
  void complete_shutdown_waiters_locked(boost::system::error_code ec) noexcept;

  // Posts `f` to the executor with its memory from `slab`; counted, so that
  // destruction waits for a device thread still inside the post.
  template <class Function>
  void post(handler_slab& slab, Function&& f) noexcept {
    posting_.fetch_add(1, std::memory_order_relaxed);
    post_with(executor_, slab, std::forward<Function>(f));
    posting_.fetch_sub(1, std::memory_order_release);
  }
  // Counts a post made elsewhere (a completion to its handler's executor).
  void posting(int delta) noexcept { posting_.fetch_add(delta, std::memory_order_acq_rel); }

  void shutdown(shutdown_waiter waiter);
  void close_and_wait() noexcept;
  [[nodiscard]] scheduler_stats stats() const noexcept;

  // --- the wave coroutine's steps (run_wave.cpp) ---
  [[nodiscard]] boost::system::error_code bind(wave& w) noexcept;
  void run_chunk(wave& w, std::size_t chunk) noexcept;
  // The wave's encoding failed at `node` (the first failure counts).
  void fail_encoding(wave& w, boost::system::error_code ec, std::size_t node, std::string_view message) noexcept;
  void encoder_threw(wave& w, std::size_t node, std::exception_ptr thrown) noexcept;
  [[nodiscard]] boost::system::error_code submit(wave& w) noexcept;

  // --- tracing (run_wave.cpp): nothing, not even a clock read, without a
  // recorder ---
  struct node_clock {
    std::chrono::steady_clock::time_point at;
    std::uint32_t thread = 0;
  };
  [[nodiscard]] node_clock node_started() const noexcept;
  void trace_node(wave& w, std::size_t node, const node_clock& started) const noexcept;
  // The wave's phases on its lane, once it is done (nothing when it never
  // held a lane).
  void trace_wave(wave& w) noexcept;

  std::shared_ptr<const compiled_program> program_;
  gpu::device& device_;
  boost::asio::any_io_executor executor_;
  scheduler_options options_;
  std::vector<std::unique_ptr<lane_pool>> pools_;
  frame_pool frames_;

 private:
  [[nodiscard]] lane_pool* pick(const wave_request& request) const noexcept;

  std::mutex waves_mutex_;
  std::vector<std::unique_ptr<wave>> waves_;
  std::vector<wave*> free_waves_;

  std::atomic<std::uint64_t> next_id_{1};
  // Posts in progress: a thread that posted a wave's last step may still be
  // inside Asio's post (signalling the executor) when the wave is done.
  std::atomic<int> posting_{0};
  std::atomic<bool> accepting_{true};

  mutable std::mutex state_mutex_;
  std::condition_variable idle_;
  // Waves prepared and not yet recycled (coroutine ended, completion delivered).
  std::uint64_t live_ = 0;
  // Quarantined lanes whose fence the pools still watch.
  std::uint64_t watching_ = 0;
  // The executor's outstanding work while any wave lives: a wave waiting for
  // a fence (completed from a device thread) keeps io_context::run going.
  std::optional<boost::asio::any_io_executor> work_;
  std::vector<shutdown_waiter> shutdown_waiters_;
  scheduler_stats stats_;
};

}  // namespace ferrum::detail
