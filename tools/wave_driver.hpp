// tools/wave_driver.hpp — submits a run's waves to the scheduler, round
// robin over the plan's buckets, keeping a bounded window of them
// outstanding, and hands each outcome to the run's accounting.
//
//   ferrum::tools::wave_driver driver(*scheduler, *checks, accounting, settings);
//   driver.run([&](std::uint64_t completed) { bar.update(completed); });
//
// The window (e.g. two waves per lane of all buckets) keeps every lane busy
// and lets the lane pools apply backpressure, without asking the scheduler
// to hold all N waves at once. Each window slot owns an encoder and a
// cancellation signal, reused by the next wave once its wave completed.
//
// Submissions, completions, the progress ticks and the scheduler's shutdown
// all run on the thread that calls run(), through an io_context of its own;
// the waves run on the scheduler's executor. One thread needs no lock, and
// a completion posted to an io_context fits the scheduler's one-operation
// post buffer per wave; a strand would post a second operation (its
// invoker) with the same allocator, and that one would come from the heap.
// A wave's completion clears its cancellation slot on this thread, before
// the handler arms the slot for the next wave.
#pragma once

#include "checking_encoder.hpp"
#include "run_accounting.hpp"
#include "run_options.hpp"

#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace ferrum::tools {

struct driver_settings {
  std::uint64_t waves = 0;
  // The most waves outstanding at once (at least 1).
  std::size_t window = 1;
  fault_spec faults;
  std::uint64_t seed = 0;
  // The engine's buffers every wave names (run_imports.hpp).
  std::span<const imported_buffer> imports{};
};

class wave_driver {
 public:
  wave_driver(scheduler& s, const device_checks& checks, run_accounting& accounting, const driver_settings& settings);
  wave_driver(const wave_driver&) = delete;
  wave_driver& operator=(const wave_driver&) = delete;

  // Runs every wave, then the scheduler's async_shutdown; returns once that
  // completed. Meanwhile calls `tick` about ten times a second with the
  // number of waves completed so far. Once only.
  void run(const std::function<void(std::uint64_t completed)>& tick);

  // Allocations (allocation_counter.hpp) over the steady-state part of the
  // run, and the waves completed in it: from the end of the warm-up (a
  // tenth of the run, at least one window) to the last completion.
  [[nodiscard]] std::uint64_t steady_allocations() const noexcept { return steady_end_ - steady_begin_; }
  [[nodiscard]] std::uint64_t steady_waves() const noexcept { return settings_.waves - warm_up_; }

 private:
  struct window_entry {
    explicit window_entry(const device_checks& checks) : encoder(checks) {}
    checking_encoder encoder;
    boost::asio::cancellation_signal signal;
    std::uint64_t wave = 0;
    bool cancel_before_start = false;
  };

  // Starts the next wave in slot `index`, if any is left.
  void submit(std::size_t index);
  // The wave of slot `index` completed.
  void completed(std::size_t index, boost::system::error_code ec, const wave_report& report);
  void schedule_tick();

  scheduler& scheduler_;
  run_accounting& accounting_;
  driver_settings settings_;
  boost::asio::io_context context_;
  boost::asio::steady_timer ticker_;
  const std::function<void(std::uint64_t)>* tick_ = nullptr;
  bool finished_ = false;
  std::vector<std::unique_ptr<window_entry>> slots_;
  std::vector<wave_request> requests_;  // one per bucket, in the program's order
  std::size_t nodes_;

  std::uint64_t next_wave_ = 1;
  std::uint64_t done_ = 0;
  std::uint64_t warm_up_ = 0;
  std::uint64_t steady_begin_ = 0;
  std::uint64_t steady_end_ = 0;
};

}  // namespace ferrum::tools
