// wave_impl.hpp (private) — one submission wave: its state and its coroutine,
// from the lane it awaits to the lane's release. The coroutine, its awaiters,
// its submit and give-back and the engine's semaphores it keeps and passes on
// are in wave_impl.cpp; its bind and encode steps (and the barriers its lists
// open with) in wave_encoding.cpp; its report, phase ends, trace spans and
// completion in wave_report.cpp; its GPU time in wave_gpu_time.hpp; its part
// in the program's history in wave_history.cpp. What it
// needs of its scheduler is its wave_host (wave_host.hpp), and the lanes of
// its bucket come from the bucket's lane_dispatcher.
//
// A wave object is recycled: everything here is made once, when the wave is
// made (cold), so that a wave in steady state allocates nothing.
#pragma once

#include "fence_watchdog.hpp"
#include "ferrum/gpu/timeline.hpp"
#include "ferrum/scheduler/detail/wave_submission.hpp"
#include "ferrum/scheduler/lane_pool.hpp"
#include "ferrum/scheduler/trace.hpp"
#include "ferrum/scheduler/wave_readback.hpp"
#include "history_store.hpp"
#include "submission_plan.hpp"
#include "wave_gpu_time.hpp"
#include "wave_host.hpp"
#include "wave_imports.hpp"
#include "wave_trace.hpp"

#include <boost/asio/cancellation_type.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <coroutine>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ferrum::detail {

class lane_dispatcher;
class program_lanes;

// Where a wave is, as far as a cancellation needs to know.
enum class wave_step : std::uint8_t { prepared, taking_turn, acquiring, encoding, submitted };

class wave {
 public:
  // Sized for `program`'s nodes (a later program's are sized at prepare).
  wave(wave_host& host, const program_lanes& program);
  wave(const wave&) = delete;
  wave& operator=(const wave&) = delete;

  // Sets the wave up for a new use (by the scheduler, under no lock): the
  // program it runs on, the bucket it runs in and where its lanes come
  // from, or the error it completes with at once. Allocates only for a
  // program with more nodes or segments than the wave had room for.
  // `sync`: the engine's semaphores, passed on whatever happens (none when
  // the early error refused them); `early_message` says more of the error.
  // `imports`: the request's buffers and images, resolved against the
  // bucket (none: null). `readback`: where a wave that succeeds keeps its
  // lane (wave_request::readback; null: it gives the lane back).
  void prepare(std::uint64_t id, const program_lanes& program, const compiled_bucket* bucket,
               lane_dispatcher* dispatcher, encoder_ref encode, const copied_request* sync,
               boost::system::error_code early_error, std::string_view early_message = {},
               const wave_imports* imports = nullptr, wave_readback* readback = nullptr);

  [[nodiscard]] const program_lanes& program() const noexcept { return *program_; }

  // Starts the wave's coroutine on the scheduler's executor (never inline).
  void launch() noexcept;

  // A cancellation request from the handler's cancellation slot.
  void cancel(boost::asio::cancellation_type_t type) noexcept;

  // Whether both holders — the coroutine and the completion's delivery —
  // let go; the first to let go gets false.
  [[nodiscard]] bool unref() noexcept { return refs_.fetch_sub(1, std::memory_order_acq_rel) == 1; }

  // Whether this thread runs the completion handler of a wave of `host`.
  [[nodiscard]] static bool delivering_on_this_thread(const wave_host& host) noexcept;

  wave_completion completion{this};

 private:
  struct task;
  struct awaiting_turn;
  struct awaiting_lane;
  struct encoding_nodes;
  struct awaiting_fence;

  // The coroutine and its steps (wave_impl.cpp; bind and encode in wave_encoding.cpp).
  static task run(wave& w);
  // Room for `program`'s nodes and segments (cold: a new program).
  void size_for(const program_lanes& program);
  void bind_nodes() noexcept;
  void encode_chunk(std::size_t chunk) noexcept;
  [[nodiscard]] boost::system::error_code submit() noexcept;
  void give_back(lane_return how) noexcept;
  // The engine's semaphores: kept from the request at
  // prepare (none when `sync` is null), and whether there are any.
  void keep_sync(const copied_request* sync) noexcept;
  [[nodiscard]] bool has_sync() const noexcept { return !waits_.ops.empty() || !signals_.ops.empty(); }
  // Submits what the wave did not of the engine's semaphores: an empty
  // submission that waits on them and signals them, on the wave's device.
  void pass_on() noexcept;
  // The first failure of the wave's encoding counts: its node and message.
  void fail_encoding(boost::system::error_code ec, std::size_t node, std::string_view message) noexcept;
  // Into the first live node's list, after its own begin time: the culled
  // nodes' GPU times (scheduler_options::gpu_timestamps), empty.
  [[nodiscard]] result<void> write_culled_times(const lane_contents& l, gpu::command_list& list,
                                                std::size_t node) const;
  void encoder_threw(std::size_t node, std::exception_ptr thrown) noexcept;
  void resume_later() noexcept;
  static void lane_handed(detail::lane_waiter* w, boost::system::error_code ec, held_lane l) noexcept;
  static void turn_granted(history_waiter* w) noexcept;
  // History (docs/design.md, "History"): whether the wave's bucket has
  // history resources; its copies from the program's history store, once
  // the wave has the turn; the turn handed on with how the wave ended
  // (nothing when it holds none).
  [[nodiscard]] bool has_history() const noexcept { return bucket_ != nullptr && !bucket_->lane.histories.empty(); }
  [[nodiscard]] boost::system::error_code take_history() noexcept;
  void settle_history(history_outcome how) noexcept;
  static void fence_reached(gpu::timeline_wait* wait, boost::system::error_code ec) noexcept;
  static void fence_expired(fence_watchdog::entry& e) noexcept;

  // Marks the end of `phase` (lock-free: a wave completed early by a
  // cancellation may read the phase ends while its coroutine still writes them).
  void end_phase(wave_phase phase) noexcept {
    ended_[static_cast<std::size_t>(phase)].store(std::chrono::steady_clock::now().time_since_epoch().count(),
                                                  std::memory_order_relaxed);
  }
  // What it reports (wave_report.cpp).
  [[nodiscard]] wave_report report_now() const;
  // Completes the wave's operation with `ec` (the first call wins): posts the
  // handler with the report to the handler's executor — with success, after
  // moving the lane into the request's readback, if any. Any thread; with
  // success, the coroutine's only.
  void finish(boost::system::error_code ec) noexcept;
  // The wave's end: its spans to the trace, then its completion posted.
  void conclude(boost::system::error_code ec) noexcept;
  // When tracing: the node's span, from `started` to now.
  void trace_node(std::size_t node, const trace_clock& started) noexcept;
  // The barriers its nodes' lists open with (wave_encoding.cpp).
  [[nodiscard]] node_barriers barriers() const noexcept;
  // Whether it submits its nodes in its bucket's level order (node_barriers::reordered).
  [[nodiscard]] bool reordered() const noexcept;
  // Records the wave's closing barrier into `list` when node `node` is the
  // one it submits last (wave_encoding.cpp).
  [[nodiscard]] result<void> close_wave(std::size_t node, gpu::command_list& list) const;
  // Node `node`'s waits for split barriers' events, before its commands,
  // and the event it sets after them (node_barriers::split).
  [[nodiscard]] result<void> wait_events(std::size_t node, gpu::command_list& list) const;
  [[nodiscard]] result<void> set_event(std::size_t node, gpu::command_list& list) const;

  wave_host& host_;
  const program_lanes* program_ = nullptr;
  // The serial of the program the per-node state is sized for.
  std::uint64_t sized_for_ = 0;
  std::uint64_t id_ = 0;
  const compiled_bucket* bucket_ = nullptr;
  lane_dispatcher* dispatcher_ = nullptr;
  // Once a lane is handed over: its device.
  const wave_device* device_ = nullptr;
  encoder_ref encode_{};
  // An error found before the wave started (no bucket fits, shut down).
  boost::system::error_code early_error_;
  wave_outcome outcome_;
  std::atomic<int> refs_{0};

  // A cancellation of any type (honoured while the wave waits for a lane),
  // and one of type terminal or partial (honoured at every step).
  std::atomic<bool> cancel_queued_{false};
  std::atomic<bool> cancel_started_{false};
  std::atomic<wave_step> step_{wave_step::prepared};
  std::atomic<bool> completed_{false};

  // The report, written by the coroutine (phase ends as clock ticks, so that
  // an early completion can read them while the coroutine goes on).
  std::chrono::steady_clock::time_point started_;
  std::array<std::atomic<std::chrono::steady_clock::rep>, wave_phase_count> ended_{};
  std::uint64_t submitted_value_ = 0;
  // Each segment's value and the waits of the one being submitted
  // (submission_plan.hpp), reserved when the wave is made.
  submission_plan::values submissions_;
  // A segment failed after earlier ones were submitted.
  bool partly_submitted_ = false;
  // The engine's semaphores (wave_request::wait, ::signal), the request's
  // copies, and whether each set was submitted (with the wave, or by pass_on).
  copied_semaphores waits_;
  copied_semaphores signals_;
  bool waits_passed_ = false;
  bool signals_passed_ = false;
  // The engine's buffers and images for the plan's imported resources
  // (wave_imports.hpp).
  wave_imports imports_;
  // Where the lane goes when the wave succeeds (null: back to its pool).
  wave_readback* readback_ = nullptr;
  std::optional<std::size_t> failed_node_;
  std::string message_;

  std::coroutine_handle<> continuation_;
  wave_buffer buffer_;

  // Acquisition: the dispatcher hands `held_` (or an error) to the waiter.
  struct lane_waiter : detail::lane_waiter {
    explicit lane_waiter(wave* w) noexcept : detail::lane_waiter(&wave::lane_handed), self(w) {}
    wave* self;
  };
  lane_waiter waiter_{this};
  held_lane held_;
  // History: the program's store hands the turn to the waiter; while the
  // wave holds it, what its turn gave it.
  struct turn_waiter : history_waiter {
    explicit turn_waiter(wave* w) noexcept : history_waiter(&wave::turn_granted), self(w) {}
    wave* self;
  };
  turn_waiter turn_waiter_{this};
  bool turn_held_ = false;
  history_grant history_{};
  std::uint64_t history_wave_ = 0;  // history_.previous_wave, for the report
  // Its number, kept for the report once the lane is given back.
  std::uint32_t lane_index_ = 0;
  boost::system::error_code handed_ec_;

  // Binding and encoding.
  // The lane's lists are submitted as recorded before (no begin/end).
  bool replay_ = false;
  std::size_t chunk_count_ = 0;
  std::atomic<std::size_t> chunks_left_{0};
  std::atomic<bool> encode_failed_{false};
  boost::system::error_code encode_ec_;
  // Per node, what its encoder is given, made by the bind step; kept here
  // because a coroutine encoder may outlive the chunk that started it.
  std::vector<std::optional<encode_context>> contexts_;
  // When tracing: each node's span, written by its encoder's task and
  // recorded with the wave's phases at its end (an entry of another wave id
  // is a node this wave did not run).
  std::vector<trace_span> node_spans_;
  wave_gpu_time gpu_time_;

  // The fence: the wave's wait on the timeline, watched by the scheduler's
  // fence watchdog; whichever of the two completes it sets fence_ec_.
  struct fence_wait : gpu::timeline_wait {
    explicit fence_wait(wave* w) noexcept : gpu::timeline_wait(0, &wave::fence_reached), self(w) {}
    wave* self;
  };
  fence_wait fence_{this};
  fence_watchdog::entry watch_{fence_, &wave::fence_expired};
  boost::system::error_code fence_ec_;
};

}  // namespace ferrum::detail
