// ferrum/gpu/null_device.hpp — a device whose GPU is a CPU thread.
//
// A worker thread plays the GPU: it runs submitted command lists in order
// (kernels as their CPU form over the arena bytes, fills, copies, host
// functions, timestamps from its steady_clock), waits the configured latency, then advances the timeline. Most
// tests and benchmarks run on it. With `inline_completion` there is no
// worker: the submitting thread runs each submission inside queue::submit.
//
// Faults are injected per submission, decided by a hash of (seed, submission
// number) alone, so the same options give the same faults on every run
// whatever the timing:
// * delay: the submission takes up to `max_delay` longer (uniform jitter);
// * hang: its value is not signalled for `hang_duration` (forever when zero,
//   until the device shuts down) — and, as on a real queue, neither is any
//   value submitted after it;
// * lost: the device is lost when the worker reaches the submission; its work
//   does not run, and every pending and later wait completes with device_lost.
//
//   ferrum::gpu::null_device_options options;
//   options.faults = {.seed = 7, .hang = 0.01, .hang_duration = std::chrono::milliseconds(50)};
//   auto dev = ferrum::gpu::null_device::create(options);
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/device.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace ferrum::gpu {

enum class fault_kind { delay, hang, lost };

struct null_fault_options {
  std::uint64_t seed = 0;
  // Probabilities per submission, each in [0, 1]; checked in that order.
  double lost = 0;
  double hang = 0;
  double delay = 0;
  std::chrono::microseconds max_delay{1000};
  std::chrono::milliseconds hang_duration{0};
};

// The fault (and for delay, its length) that submission `submission` (1 for
// the first) gets under `options`; none for most.
struct fault_decision {
  fault_kind kind;
  std::chrono::microseconds delay{0};
};
[[nodiscard]] std::optional<fault_decision> decide_fault(const null_fault_options& options,
                                                         std::uint64_t submission) noexcept;

struct fault_counts {
  std::uint64_t delay = 0;
  std::uint64_t hang = 0;
  std::uint64_t lost = 0;
};

struct null_device_options {
  // Time the worker takes per submission, on top of running its commands.
  std::chrono::microseconds latency{0};
  null_fault_options faults;
  std::size_t max_arena_bytes = std::size_t{1} << 32;
  // Runs each submission inside queue::submit / submit_next, on the submitting
  // thread under the queue's lock, and reaches its value before submit
  // returns: no worker thread, no hand-off, so a benchmark measures the
  // scheduler's own machinery. Anything that would make the submitter sleep
  // is refused at create (invalid_device_option naming the fields): latency,
  // faults.delay and faults.hang. A lost fault still applies: submit succeeds,
  // the submission's work does not run and its waits fail with device_lost,
  // as when the worker reaches it. Host functions run under the queue's lock
  // and must not submit.
  bool inline_completion = false;
  // Whether the queue writes timestamps (with the worker's steady_clock, or
  // the submitting thread's with inline_completion). Off: a device that has
  // none, as some GPUs' queues: create_timestamp_pool fails with
  // timestamps_unsupported.
  bool timestamps = true;
};

class null_device : public device {
 public:
  // Starts the worker thread (none with inline_completion). Errors:
  // invalid_device_option (a probability outside [0, 1], a negative duration,
  // inline_completion with a latency, delay or hang).
  [[nodiscard]] static result<std::unique_ptr<null_device>> create(const null_device_options& options);

  // Faults injected so far (counted when the worker, or submit with
  // inline_completion, reaches the submission).
  [[nodiscard]] virtual fault_counts injected_faults() const noexcept = 0;

  // Loses the device now, as an injected `lost` fault would.
  virtual void lose() noexcept = 0;

 protected:
  using device::device;
};

}  // namespace ferrum::gpu
