// asio_contract_run.hpp — many producer coroutines submitting waves to two
// schedulers on one execution context, each wave with its own completion
// token and cancellation signal, so that asio_contract_test.cpp can check
// Asio's contracts of async_submit under load, after the fact.
//
//   stress::on_thread_pool context(4);
//   stress::contract_run run(context, {.name = "thread_pool"});
//   run.run_all();           // producers to their end, then async_shutdown
//   run.check();             // Catch2 checks, on the test thread
//
// The run. Two schedulers share one plan (three binding nodes, two buckets
// of four lanes) and the context's executor: `healthy` on a null device
// with delays and a few finite hangs longer than the fence timeout, `lost`
// on a null device with delays and one loss late in the run. Each producer
// is a coroutine co_spawned on its own strand; it submits its waves one at a
// time, to either scheduler, and each wave completes through one of
//   * awaitable: `as_tuple(use_awaitable)`, its executor the producer's strand;
//   * strand callback: a callback bound to the producer's strand;
//   * plain callback: a callback with no executor, which runs on the
//     scheduler's (uncancellable: see below).
// A wave of the first two kinds may be cancelled — terminal, partial or
// total — right after async_submit (a post to the strand), by a timer on the
// strand that fires at a random moment (queued, encoding, after submit or
// after completion), or from its encoder through a post to the strand. Every
// emit runs on the strand the wave's handler is delivered on: Asio's
// cancellation_signal is not thread-safe, and the delivery clears the slot.
//
// What is observed. Per node, the encoder checks that no other wave is
// inside an encoder of its lane, notes the token the slot's previous writer
// left and the timeline's completed value, writes its own token and records
// a probe: a host function that the device's worker runs before it signals
// the wave's fence, and that must find the wave's own token still in the
// slot. The handler counts its invocations and notes whether it runs on its
// executor.
//
// Thread safety: a contract_run is driven from the test's thread, the only
// one that uses Catch2; everything other threads write is atomic, handed over
// under a mutex, or read by the test only once every producer has finished.
#pragma once

#include "lane_probe.hpp"

#include "ferrum/gpu/null_device.hpp"
#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/system/error_code.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace stress {

// The execution context the schedulers' waves, their encoders and the
// producers run on.
class execution_kind {
 public:
  virtual ~execution_kind() = default;
  [[nodiscard]] virtual boost::asio::any_io_executor executor() = 0;
  // Whether the calling thread runs a handler of the context's executor.
  [[nodiscard]] virtual bool running_here() const = 0;
  // Waits until the context has no work left, then stops its threads.
  virtual void stop() = 0;
};

class on_thread_pool final : public execution_kind {
 public:
  explicit on_thread_pool(std::size_t threads) : pool_(threads) {}
  ~on_thread_pool() override { pool_.join(); }
  boost::asio::any_io_executor executor() override { return pool_.get_executor(); }
  bool running_here() const override { return pool_.get_executor().running_in_this_thread(); }
  void stop() override { pool_.join(); }

 private:
  mutable boost::asio::thread_pool pool_;
};

class on_io_context final : public execution_kind {
 public:
  explicit on_io_context(std::size_t threads);
  ~on_io_context() override { stop(); }
  boost::asio::any_io_executor executor() override { return context_.get_executor(); }
  bool running_here() const override { return context_.get_executor().running_in_this_thread(); }
  void stop() override;

 private:
  mutable boost::asio::io_context context_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> guard_;
  std::vector<std::thread> threads_;
};

struct contract_options {
  std::string name;
  std::size_t producers = 64;
  std::size_t waves_per_producer = 500;
  std::uint64_t seed = 1;
  // Per wave whose handler is bound to its producer's strand.
  double cancel_rate = 0.12;
  // The latest moment a timer emits a wave's cancellation, after its submit.
  std::chrono::microseconds max_cancel_delay{3000};
  // How long all producers may take, and then the shutdowns, before the run
  // is declared hung.
  std::chrono::milliseconds drain_limit{300000};
};

inline constexpr std::size_t contract_nodes = 3;
inline constexpr std::uint32_t contract_lanes = 4;  // per bucket
inline constexpr std::size_t contract_buckets = 2;

// The requests waves make, one per bucket of sched_test::make_plan(..,
// two_buckets), in bucket order: the extent picks the bucket.
struct contract_request {
  ferrum::bucket_capacity extent;
  const char* bucket;
};
inline constexpr std::array<contract_request, contract_buckets> contract_requests{{
    {{1, 1, 1}, "step@1x1x1"},
    {{1, 3, 1}, "step@1x4x1"},
}};

// Which scheduler a wave goes to.
enum class target : std::uint8_t { healthy, lost };
inline constexpr std::size_t target_count = 2;

enum class handler_kind : std::uint8_t { awaitable, strand_callback, plain_callback };
enum class cancel_at : std::uint8_t { none, submit, timer, encoder };

class contract_run;
struct producer;

struct contract_wave {
  using probe = lane_probe<contract_wave>;
  using encoder = wave_encoder<contract_wave>;

  contract_wave(contract_run& owner, std::size_t wave_index) noexcept;
  contract_wave(const contract_wave&) = delete;
  contract_wave& operator=(const contract_wave&) = delete;

  void encode(const ferrum::encode_context& c);
  [[nodiscard]] std::size_t encoded_count() const noexcept;
  // Records a broken invariant, seen on another thread, with the run.
  void violation(std::string message) noexcept;
  // Posts the emit of this wave's cancellation to its producer's strand.
  void post_cancel();

  contract_run& run;
  const std::size_t index;
  const std::uint64_t token;  // index + 1: what its encoders write into the slots
  producer* from = nullptr;

  // The plan.
  target to = target::healthy;
  std::size_t request = 0;
  handler_kind handler = handler_kind::awaitable;
  cancel_at cancel = cancel_at::none;
  boost::asio::cancellation_type_t cancel_type = boost::asio::cancellation_type::terminal;
  std::chrono::microseconds cancel_delay{0};
  std::size_t cancel_node = 0;

  encoder encode_fn{this};
  boost::asio::cancellation_signal signal;  // used on `from->strand` only
  std::optional<boost::asio::steady_timer> cancel_timer;

  // Seen by encoders (each element written by its own node's encoder call)
  // and by probes.
  std::atomic<int> bucket{-1};
  std::atomic<int> lane{-1};
  std::array<std::atomic<bool>, contract_nodes> encoded{};
  std::array<std::atomic<bool>, contract_nodes> probed{};
  std::array<probe, contract_nodes> probes{};
  std::array<std::uint64_t, contract_nodes> previous{};             // token found in the slot
  std::array<std::uint64_t, contract_nodes> completed_at_encode{};  // timeline completed() then
  std::array<std::uint8_t, contract_nodes> previous_probed{};       // the previous writer's probe had run

  // Written by its producer.
  bool submitted = false;
  bool lost_at_submit = false;  // its device was lost before async_submit
  bool initiating = false;      // inside async_submit (strand callbacks only)
  // The outcome, written by its handler.
  std::atomic<int> completions{0};
  bool right_executor = false;
  bool lost_at_completion = false;
  boost::system::error_code ec;
  ferrum::wave_report report;
  bool fence_reached_at_completion = false;
  std::size_t probes_at_completion = 0;
};

// One producer coroutine: its strand, the timer it waits on for a callback's
// completion, its waves in order.
struct producer {
  producer(contract_run& owner, std::size_t producer_index, const boost::asio::any_io_executor& executor);

  contract_run& run;
  const std::size_t index;
  boost::asio::strand<boost::asio::any_io_executor> strand;
  boost::asio::steady_timer wake;  // on `strand`
  std::vector<contract_wave*> waves;
};

class contract_run {
 public:
  contract_run(execution_kind& context, contract_options options);
  contract_run(const contract_run&) = delete;
  contract_run& operator=(const contract_run&) = delete;
  // Destroys the schedulers (every wave delivered by then), stops the
  // context (pending cancellation timers run out), then the rest.
  ~contract_run();

  // Runs every producer to its end, then awaits both schedulers'
  // async_shutdown and reads their pools' counts and stats. Aborts (after
  // printing what is pending) if that takes longer than drain_limit: a
  // scheduler with waves that never end cannot be destroyed.
  void run_all();
  // The Catch2 checks (see asio_contract_test.cpp), then a summary line.
  void check() const;

  [[nodiscard]] std::chrono::steady_clock::duration elapsed() const noexcept { return elapsed_; }

 private:
  friend struct contract_wave;
  friend struct producer;
  friend boost::asio::awaitable<void> produce(producer* p);

  void make_plans();
  void pick_fault_seeds();
  void completed(contract_wave& w, bool right_executor, boost::system::error_code ec,
                 ferrum::wave_report report) noexcept;
  void producer_done(std::exception_ptr e) noexcept;
  void violation(std::string message) noexcept;
  [[noreturn]] void hung(const char* what);
  [[nodiscard]] int bucket_index(const ferrum::bucket_id& id) const noexcept;
  [[nodiscard]] std::atomic<std::uint64_t>& lane_owner(target t, int bucket, std::uint32_t lane) noexcept {
    return lane_owners_[(static_cast<std::size_t>(t) * contract_buckets + static_cast<std::size_t>(bucket)) *
                            contract_lanes +
                        lane];
  }
  [[nodiscard]] ferrum::gpu::null_device& device(target t) const noexcept {
    return *devices_[static_cast<std::size_t>(t)];
  }
  [[nodiscard]] ferrum::scheduler& scheduler_for(target t) const noexcept {
    return *schedulers_[static_cast<std::size_t>(t)];
  }

  execution_kind& context_;
  contract_options options_;
  ferrum::plan plan_;
  std::shared_ptr<const ferrum::compiled_program> program_;
  std::array<ferrum::gpu::null_device_options, target_count> device_options_{};
  ferrum::scheduler_options scheduler_options_;

  // Declared before the devices and schedulers: probes and encoders point
  // into them until both are gone.
  std::vector<std::unique_ptr<contract_wave>> waves_;
  std::vector<std::unique_ptr<producer>> producers_;
  std::array<std::unique_ptr<ferrum::gpu::null_device>, target_count> devices_;
  std::array<std::unique_ptr<ferrum::scheduler>, target_count> schedulers_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> lane_owners_;

  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::duration elapsed_{};
  std::chrono::steady_clock::duration shutdown_time_{};

  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t producers_done_ = 0;
  std::exception_ptr producer_error_;

  violation_log violations_;

  std::array<boost::system::error_code, target_count> shutdown_ec_{};
  std::array<std::vector<ferrum::lane_counts>, target_count> final_counts_;
  std::array<ferrum::scheduler_stats, target_count> final_stats_{};
};

boost::asio::awaitable<void> produce(producer* p);

}  // namespace stress
