// stress_harness.hpp — runs many concurrent waves against one scheduler on
// one or more null devices and records what every wave, encoder and GPU-side probe saw, so
// that the stress scenarios (tests/stress/*_test.cpp) can check the hot-path
// invariants of docs/design.md (8, 10, 12) after the fact.
//
//   stress::scenario s;
//   s.name = "healthy";
//   s.device.faults = {.seed = 3, .delay = 0.2};
//   stress::stress_run run(s);
//   run.run_all();                      // submit, drain, async_shutdown
//   run.check_invariants();             // Catch2 checks, on the test thread
//   for (const auto& w : run.waves()) ... // classify each outcome
//
// How a wave is observed. Each wave has its own encoder object and record.
// For every node the encoder
//   * marks its lane busy (per-lane atomic owner, set on entry of every
//     encoder call, cleared on exit): another wave found inside an encoder of
//     the same lane means two waves held one lane at once;
//   * reads the token the previous wave left in the node's slot, notes the
//     timeline's completed value and whether that wave's GPU probe of the
//     node had run, then writes its own token: checked at the end against the
//     previous wave's fence value (no lane comes back before its fence);
//   * records a host function (the probe) that the device's worker runs before
//     it signals the wave's fence: the probe finds the wave's own token in the
//     slot, or another wave wrote it before this wave's fence was reached.
// Encoders also spin or sleep at random (coroutine encoders wait on a timer
// instead), throw, or emit the wave's cancellation signal, as the wave's plan
// says. A wave cancelled "at submit" is submitted from a strand that its
// completion is bound to, and its signal emitted there right after
// async_submit returns: the emit then happens before the completion's
// delivery, as Asio requires, even when the wave fails before it could see
// the signal (all lanes quarantined, device lost).
//
// Thread safety: a stress_run is driven from one (the test's) thread; Catch2
// macros are used only there. Everything other threads see is atomic or
// handed over under a mutex.
#pragma once

#include "lane_probe.hpp"

#include "ferrum/gpu/null_device.hpp"
#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/system/error_code.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stress {

// What a wave is told to do besides encoding.
enum class disturbance : std::uint8_t {
  none,
  throws,             // the encoder of `fault_node` throws
  cancel_at_submit,   // the signal is emitted right after async_submit returns
  cancel_in_encoder,  // the encoder of `fault_node` emits the signal
};

// The requests waves make: two sizes of class "step" and one of "frame".
struct request_kind {
  std::string_view bucket_class;
  ferrum::bucket_capacity extent;
  std::string_view bucket;  // the bucket it must run in
};
inline constexpr std::array<request_kind, 3> request_kinds{{
    {"step", {1, 1, 1}, "step@1x1x1"},
    {"step", {1, 3, 1}, "step@1x4x1"},
    {"frame", {1, 1, 1}, "frame@1x1x1"},
}};

struct scenario {
  std::string name;
  // Waves to run; submitting stops early when `submit_cap` has passed (the
  // waves not submitted are reported, not checked).
  std::size_t waves = 600;
  std::chrono::milliseconds submit_cap{5000};
  // How long the submitted waves may take to complete, and the shutdown
  // after them, before the run is declared hung.
  std::chrono::milliseconds drain_limit{30000};

  std::size_t nodes = 8;
  // A ferrum.plan.v2 plan whose odd nodes run on the transfer queue, each
  // node after the one two before it and every third after the one before
  // it too (segments on both queues, cross-queue waits, joins).
  bool two_queues = false;
  std::uint32_t lanes = 2;  // per bucket
  std::size_t threads = 4;
  std::size_t submitters = 3;
  std::size_t window = 6;  // waves each submitter keeps outstanding
  std::uint64_t seed = 1;

  // Per wave (they exclude each other).
  double throw_rate = 0.05;
  double cancel_rate = 0.06;
  // Per encoder call.
  double spin_rate = 0.15;
  double sleep_rate = 0.02;
  // Per wave: the share that uses a coroutine encoder.
  double coroutine_rate = 0;
  std::chrono::microseconds max_spin{20};
  std::chrono::microseconds max_sleep{300};

  // Calls async_shutdown once this many waves have completed, while the
  // submitters go on (a second, final async_shutdown follows as usual).
  std::optional<std::size_t> shutdown_after;
  // Once this many waves have completed: stops the submitters and destroys
  // the scheduler with waves still in flight and queued (no async_shutdown,
  // no final counts or stats).
  std::optional<std::size_t> destroy_after;

  ferrum::gpu::null_device_options device;
  // Devices beyond the first, each with its options: the scheduler then
  // runs over all of them.
  std::vector<ferrum::gpu::null_device_options> more_devices;
  ferrum::scheduler_options options{.fence_timeout = std::chrono::milliseconds(2000), .encoder_tasks = 3};
};

class stress_run;

// One wave: its plan, what its encoders and probes saw, its outcome.
struct wave_record {
  // A probe: the host function the device runs for one node of this wave.
  using probe = lane_probe<wave_record>;
  using encoder = wave_encoder<wave_record>;
  // The same as a coroutine encoder, which waits on a timer instead of
  // spinning or sleeping.
  struct coroutine_encoder {
    wave_record* wave;
    boost::asio::awaitable<void> operator()(const ferrum::encode_context& c) const { return wave->co_encode(c); }
  };
  // Marks the wave's lane held while one of its encoder calls runs.
  class lane_guard {
   public:
    lane_guard(std::atomic<std::uint64_t>& owner, std::uint64_t token) noexcept : owner_(&owner), token_(token) {}
    lane_guard(lane_guard&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)), token_(other.token_) {}
    lane_guard(const lane_guard&) = delete;
    lane_guard& operator=(const lane_guard&) = delete;
    lane_guard& operator=(lane_guard&&) = delete;
    ~lane_guard();

   private:
    std::atomic<std::uint64_t>* owner_;
    std::uint64_t token_;
  };
  enum class pause_kind : std::uint8_t { none, spin, sleep };
  struct pause {
    pause_kind kind;
    std::chrono::microseconds length;
  };

  wave_record(stress_run& run, std::size_t index, std::size_t nodes);
  wave_record(const wave_record&) = delete;
  wave_record& operator=(const wave_record&) = delete;

  void encode(const ferrum::encode_context& c);
  boost::asio::awaitable<void> co_encode(ferrum::encode_context c);
  // Records a broken invariant, seen on another thread, with the run.
  void violation(std::string message) noexcept;

  // The checks and the token exchange at the start of a node's encoder;
  // nullopt (a violation recorded) when the node cannot be encoded.
  std::optional<lane_guard> enter(const ferrum::encode_context& c);
  // The pause this node's encoder takes.
  [[nodiscard]] pause pause_of(std::size_t node) const noexcept;
  // Records the node's probe, then does the wave's disturbance if this is
  // its node (emits the signal, or throws).
  void leave(const ferrum::encode_context& c);

  stress_run& run;
  const std::size_t index;
  const std::uint64_t token;  // index + 1: what this wave writes into its slots
  // The plan.
  std::size_t request = 0;
  disturbance what = disturbance::none;
  std::size_t fault_node = 0;
  boost::asio::cancellation_type_t cancel_type = boost::asio::cancellation_type::terminal;
  bool coroutine = false;  // encodes with co_encode
  encoder encode_fn{this};
  coroutine_encoder co_encode_fn{this};
  boost::asio::cancellation_signal signal;
  bool submitted = false;  // written by its submitter before async_submit
  // The run's shutdown phase (0: no async_shutdown called yet, 1: being
  // called, 2: returned) just before and just after its async_submit.
  int phase_before = -1;
  int phase_after = -1;
  // cancel_at_submit: its nodes encoded by the time the signal was emitted
  // (counted right after the emit).
  std::size_t encoded_at_emit = 0;
  // Whether the cancellation may have come too late to count, so that the
  // outcome is then any a plain wave may have, or operation_aborted: a
  // cancel_at_submit wave whose every node was encoded before the signal came
  // may have submitted (and even completed) before it; and a cancellation of
  // type total alone counts only while the wave waits for its lane (total
  // means no side effects), so one emitted at submit may find the wave
  // encoding, and one emitted by an encoder never counts.
  [[nodiscard]] bool cancel_may_be_late() const noexcept {
    if (cancel_type == boost::asio::cancellation_type::total)
      return what == disturbance::cancel_at_submit || what == disturbance::cancel_in_encoder;
    return what == disturbance::cancel_at_submit && encoded_at_emit == probes.size();
  }

  // Seen by encoders (one element per node, each written by its own node's
  // encoder call) and by probes.
  std::atomic<int> bucket{-1};
  std::atomic<int> lane{-1};
  std::atomic<int> device{-1};                   // the scheduler's index of its lane's device
  std::unique_ptr<std::atomic<bool>[]> encoded;  // per node
  std::unique_ptr<std::atomic<bool>[]> probed;   // per node: its probe ran
  std::vector<probe> probes;
  std::vector<std::uint64_t> previous;             // token found in the slot
  std::vector<std::uint64_t> completed_at_encode;  // timeline completed() then
  std::vector<std::uint8_t> previous_probed;       // the previous wave's probe had run

  // The outcome, written by its completion handler.
  std::atomic<int> completions{0};
  boost::system::error_code ec;
  ferrum::wave_report report;
  bool fence_reached_at_completion = false;
  std::size_t probes_at_completion = 0;
  std::chrono::steady_clock::time_point submitted_at;
  std::chrono::steady_clock::time_point completed_at;
};

class stress_run {
 public:
  explicit stress_run(scenario s);
  stress_run(const stress_run&) = delete;
  stress_run& operator=(const stress_run&) = delete;
  // Destroys the scheduler (its waves are done), then joins the pool.
  ~stress_run();

  // Runs the scenario (run_all), prints its summary, and checks what holds
  // in every scenario (check_invariants).
  void run_and_check();

  // After run_and_check: waits (up to `limit`) until the device has run every
  // submission and, unless it was lost, no lane is quarantined any more;
  // returns the pools' counts then.
  std::vector<ferrum::lane_counts> settle(std::chrono::milliseconds limit);

  [[nodiscard]] const scenario& options() const noexcept { return scenario_; }
  [[nodiscard]] const std::vector<std::unique_ptr<wave_record>>& waves() const noexcept { return records_; }
  [[nodiscard]] ferrum::gpu::null_device& device(std::size_t index = 0) const noexcept { return *devices_[index]; }
  [[nodiscard]] std::size_t device_count() const noexcept { return devices_.size(); }
  [[nodiscard]] const std::vector<ferrum::lane_counts>& final_counts() const noexcept { return final_counts_; }
  [[nodiscard]] const ferrum::scheduler_stats& final_stats() const noexcept { return final_stats_; }
  // The most quarantined lanes any sample of the pools' counts saw.
  [[nodiscard]] std::uint32_t most_quarantined_seen() const noexcept { return most_quarantined_; }
  // The most waves any sample saw queued for a lane of one pool.
  [[nodiscard]] std::size_t most_waiting_seen() const noexcept { return most_waiting_; }
  [[nodiscard]] std::size_t submitted() const noexcept { return submitted_.load(); }
  // The async_shutdown called mid-run (scenario::shutdown_after): whether it
  // completed, and with what.
  [[nodiscard]] bool mid_shutdown_completed() const noexcept { return mid_shutdown_completed_; }
  [[nodiscard]] boost::system::error_code mid_shutdown_error() const noexcept { return mid_shutdown_ec_; }
  // Whether the scheduler was destroyed mid-run (scenario::destroy_after), and
  // how long its destructor took.
  [[nodiscard]] bool destroyed() const noexcept { return scheduler_ == nullptr; }
  [[nodiscard]] std::chrono::steady_clock::duration destroy_time() const noexcept { return destroy_time_; }
  [[nodiscard]] std::uint32_t total_lanes() const noexcept {
    return scenario_.lanes * static_cast<std::uint32_t>(request_kinds.size() * devices_.size());
  }

 private:
  friend struct wave_record;

  // Submits the waves from `submitters` threads, waits for every submitted
  // wave to complete, samples the pools' counts meanwhile, then awaits
  // async_shutdown and reads the final counts and stats. Fails the test (and
  // aborts, since a hung scheduler cannot be destroyed) if waves or the
  // shutdown do not complete within drain_limit.
  void run_all();

  // Prints a one-line summary (counts per outcome, time) to stdout.
  void summarize() const;

  // Checks what holds in every scenario: each submitted wave completed
  // exactly once, no lane was held by two waves, no lane came back before
  // its fence, successful waves ran all probes before completing, buckets and
  // lanes are as requested, stats add up, nothing waits or is in flight at
  // the end.
  void check_invariants() const;

  void submitter(std::size_t which);
  void completed(wave_record& w, boost::system::error_code ec, ferrum::wave_report report) noexcept;
  void sample_counts();
  // Records a broken invariant seen on another thread.
  void violation(std::string message) noexcept;
  [[nodiscard]] int bucket_index(const ferrum::bucket_id& id) const noexcept;
  // The index of `d` among the run's devices; -1 if none.
  [[nodiscard]] int device_index(const ferrum::gpu::device& d) const noexcept;
  [[nodiscard]] std::atomic<std::uint64_t>& lane_owner(int device, int bucket, std::uint32_t lane) noexcept {
    return lane_owners_[(static_cast<std::size_t>(device) * request_kinds.size() + static_cast<std::size_t>(bucket)) *
                            scenario_.lanes +
                        lane];
  }
  // Every device's compute submissions.
  [[nodiscard]] std::uint64_t compute_submissions() const noexcept;

  scenario scenario_;
  ferrum::plan plan_;
  std::shared_ptr<const ferrum::compiled_program> program_;
  std::vector<std::unique_ptr<ferrum::gpu::null_device>> devices_;
  boost::asio::thread_pool pool_;
  std::unique_ptr<ferrum::scheduler> scheduler_;

  std::vector<std::unique_ptr<wave_record>> records_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> lane_owners_;

  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::duration elapsed_{};
  std::atomic<std::size_t> submitted_{0};
  std::atomic<std::size_t> submitters_running_{0};
  std::atomic<bool> stop_{false};
  std::atomic<int> shutdown_phase_{0};
  std::atomic<std::size_t> strand_posts_{0};  // submissions posted to a strand, not made yet
  bool mid_shutdown_completed_ = false;
  boost::system::error_code mid_shutdown_ec_;
  std::chrono::steady_clock::duration destroy_time_{};
  std::atomic<std::int64_t> backoff_until_{0};  // steady_clock ticks

  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t done_ = 0;
  std::vector<std::size_t> outstanding_;  // per submitter

  violation_log violations_;

  std::uint32_t most_quarantined_ = 0;
  std::size_t most_waiting_ = 0;
  std::size_t count_errors_ = 0;  // samples where free + in_flight + quarantined != lanes, or in_flight > lanes
  std::vector<ferrum::lane_counts> final_counts_;
  ferrum::scheduler_stats final_stats_;
};

// "ok", "operation_aborted", or ferrum's name of the code.
[[nodiscard]] std::string outcome_name(const boost::system::error_code& ec);
[[nodiscard]] std::string_view plan_name(disturbance d) noexcept;

// splitmix64: the deterministic randomness of the plans.
[[nodiscard]] std::uint64_t mix(std::uint64_t x) noexcept;
[[nodiscard]] double unit(std::uint64_t bits) noexcept;

}  // namespace stress
