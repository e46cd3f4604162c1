// wave.hpp (private) — one submission wave: its state and its coroutine
// (wave.cpp), from the lane it awaits to the lane's release. The scheduler
// (scheduler.cpp) admits, recycles and shuts waves down; the lane pool
// (lane_pool.cpp) hands lanes out; gpu/ provides the timeline waits.
//
// A wave object is recycled: everything here is made once, when the wave is
// made (cold), so that a wave in steady state allocates nothing.
#pragma once

#include "fence_watchdog.hpp"
#include "ferrum/async/post_buffer.hpp"
#include "ferrum/gpu/timeline.hpp"
#include "ferrum/scheduler/detail/wave_completion.hpp"
#include "ferrum/scheduler/lane_pool.hpp"
#include "ferrum/scheduler/scheduler.hpp"
#include "ferrum/scheduler/trace.hpp"
#include "lane_group.hpp"
#include "submission_plan.hpp"
#include "wave_trace.hpp"

#include <boost/asio/any_io_executor.hpp>
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

class scheduler_impl;
struct scheduler_device;

// Where a wave is, as far as a cancellation needs to know.
enum class wave_step : std::uint8_t { prepared, acquiring, encoding, submitted };

// How a wave gives its lane back.
enum class lane_return : std::uint8_t {
  fence_reached,  // its submission's value is reached
  unsubmitted,    // it failed or was cancelled before submitting
  quarantined,    // its fence timed out or its device failed
};

// The memory of what a wave posts (its start, one post per encoder task, a
// resumption, the fence's hand-off): one entry each.
inline constexpr std::size_t wave_entry_bytes = 512;
using wave_buffer = async::post_buffer<wave_entry_bytes>;

class wave {
 public:
  // `traced`: the scheduler has a trace recorder (room for node spans);
  // `timed`: it has GPU timestamps (room for each node's).
  wave(scheduler_impl& owner, std::size_t nodes, bool traced, bool timed);
  wave(const wave&) = delete;
  wave& operator=(const wave&) = delete;

  // Sets the wave up for a new use (by the scheduler, under no lock).
  void prepare(std::uint64_t id, lane_group* group, encoder_ref encode, boost::system::error_code early_error) noexcept;

  // Starts the wave's coroutine on the scheduler's executor (never inline).
  void launch() noexcept;

  // A cancellation request from the handler's cancellation slot.
  void cancel(boost::asio::cancellation_type_t type) noexcept;

  // Whether both holders — the coroutine and the completion's delivery —
  // let go; the first to let go gets false.
  [[nodiscard]] bool unref() noexcept { return refs_.fetch_sub(1, std::memory_order_acq_rel) == 1; }

  // Whether this thread runs the completion handler of one of `owner`'s waves.
  [[nodiscard]] static bool delivering_on_this_thread(const scheduler_impl& owner) noexcept;

  wave_completion completion{this};

 private:
  struct task;

  // The coroutine and its steps (wave.cpp).
  static task run(scheduler_impl& s, wave& w);
  void encode_chunk(std::size_t chunk) noexcept;
  [[nodiscard]] boost::system::error_code submit() noexcept;
  void give_back(lane_return how) noexcept;
  // The first failure of the wave's encoding counts: its node and message.
  void fail_encoding(boost::system::error_code ec, std::size_t node, std::string_view message) noexcept;
  void encoder_threw(std::size_t node, std::exception_ptr thrown) noexcept;
  // Stamps the end of `phase` (lock-free: a wave completed early by a
  // cancellation may read the stamps while its coroutine still writes them).
  void stamp(wave_phase phase) noexcept;
  // Completes the wave's operation with `ec` (the first call wins): posts the
  // handler with the report to the handler's executor. Any thread.
  void finish(boost::system::error_code ec) noexcept;
  // The wave's end: its spans to the trace, then its completion posted.
  void conclude(boost::system::error_code ec) noexcept;
  void resume_later() noexcept;
  [[nodiscard]] wave_report report_now() const;
  static void granted(lane_pool::waiter* w, boost::system::error_code ec, lane* l) noexcept;
  static void fence_reached(gpu::timeline_wait* wait, boost::system::error_code ec) noexcept;
  static void fence_expired(fence_watchdog::entry& e) noexcept;
  // When tracing: the node's span, from `started` to now.
  void trace_node(std::size_t node, const trace_clock& started) noexcept;
  // With GPU timestamps: node n's stamp before (slot 2n) or after (2n + 1)
  // its commands, into its list.
  [[nodiscard]] result<void> stamp_node(gpu::command_list& list, std::size_t node, bool after) const;
  // With GPU timestamps, once the fence was reached: the nodes' GPU times
  // from the lane's timestamp pool.
  void read_gpu_times() noexcept;
  // With GPU times read: from the first node's begin to the last one's end.
  [[nodiscard]] gpu_interval gpu_span() const noexcept;

  struct awaiting_lane;
  struct encoding_nodes;
  struct awaiting_fence;

  scheduler_impl& owner_;
  std::uint64_t id_ = 0;
  // The bucket's pools; once a lane is granted, its pool and device.
  lane_group* group_ = nullptr;
  lane_pool* pool_ = nullptr;
  const scheduler_device* device_ = nullptr;
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
  std::optional<std::size_t> failed_node_;
  std::string message_;

  std::coroutine_handle<> continuation_;
  wave_buffer buffer_;

  // Acquisition: the pool grants `held_` (or an error) through the waiter.
  struct lane_waiter : lane_pool::waiter {
    explicit lane_waiter(wave* w) noexcept : lane_pool::waiter(&wave::granted), self(w) {}
    wave* self;
  };
  lane_waiter waiter_{this};
  lane* held_ = nullptr;
  boost::system::error_code grant_ec_;

  // Encoding.
  // The lane's lists are submitted as recorded before (no begin/end).
  bool replay_ = false;
  std::size_t chunk_count_ = 0;
  std::atomic<std::size_t> chunks_left_{0};
  std::atomic<bool> encode_failed_{false};
  boost::system::error_code encode_ec_;
  // Per node, what its encoder is given; kept here because a coroutine
  // encoder may outlive the chunk that started it.
  std::vector<std::optional<encode_context>> contexts_;
  // When tracing: each node's span, written by its encoder's task and
  // recorded with the wave's phases at its end (an entry of another wave id
  // is a node this wave did not run).
  std::vector<trace_span> node_spans_;
  // With GPU timestamps: the lane's pool read back (node n's begin and end
  // at 2n, 2n + 1), the same as intervals, and whether this wave read them
  // (released after the intervals are written: a completion posted early by
  // a cancellation reads it on another thread).
  std::vector<std::chrono::steady_clock::time_point> gpu_stamps_;
  std::vector<gpu_interval> gpu_nodes_;
  std::atomic<bool> gpu_timed_{false};

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
