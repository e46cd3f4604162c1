// tools/run_accounting.hpp — explains every wave's outcome of a `ferrum run`
// by the faults injected into it, and counts which faults surfaced
// (docs/interfaces.md, "ferrum.run.v1", faults).
//
//   ferrum::tools::run_accounting accounting(devices, device_faults, &completion_times, waves, gpu_timed);
//   accounting.record(ec, report, {.wave = 7, .encoder_threw = true});  // per completion
//   accounting.settle(null_device->injected_faults());                  // after shutdown
//   const ferrum::tools::run_tally& t = accounting.tally();
//
// How each outcome is explained:
// * success: nothing to explain (a tool fault armed for the wave that did
//   not show stays unsurfaced);
// * encoder_failed: the wave's encoder threw its injected fault;
// * operation_aborted: the wave was cancelled by its injected fault;
// * fence_timeout: a hang was injected at a timeline value at or below the
//   wave's (a hang stalls everything behind it on the timeline);
// * device_lost: a loss was injected and the device is lost;
// * all_lanes_quarantined: a loss or a hang was injected (only fence
//   timeouts and losses quarantine lanes);
// anything else (or one of these without its cause) is unexplained.
//
// When a fault surfaced:
// * encoder, cancel: its wave failed with encoder_failed / was cancelled, or
//   failed because an injected loss overtook it (device_lost);
// * hang: its wave failed with fence_timeout (a hang lasts five fence
//   timeouts);
// * lost: its wave failed, for an explained reason;
// * delay: a delay is at most min(1 ms, half the fence timeout), so it cannot
//   fail a wave by itself; it surfaced when its wave's fence was seen at
//   least that much after the wave finished encoding, or when its wave failed
//   for an explained reason.
// Over several devices, each device's faults are its own (its options, its
// submissions) and a wave's are those of the device it ran on
// (wave_report::device). The device's faults are known per submission, and a
// wave's submission number is its fence value (only the scheduler submits, once per wave:
// with device faults, run_command runs a plan's transfer nodes on the
// compute queue's device queue, so that no wave makes two): decide_fault
// (ferrum/gpu/null_device.hpp) says which fault each wave got. Injected
// counts are the device's own (null_device::injected_faults) plus the
// encoders that threw and the cancellations emitted.
//
// Thread safety: none; one thread (the driver's strand) records, and reads
// happen after the last record.
#pragma once

#include "fence_clock.hpp"
#include "run_options.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/gpu/null_device.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <boost/system/error_code.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ferrum::tools {

struct fault_tally {
  std::uint64_t injected = 0;
  std::uint64_t surfaced = 0;
};

// The waves one device ran (those that were handed one of its lanes).
struct device_tally {
  std::uint64_t completed = 0;
  std::uint64_t failed = 0;
  std::uint64_t cancelled = 0;
};

// What the driver knows about a wave beyond its report.
struct wave_facts {
  // The id the wave was armed for (the scheduler numbers waves from 1 in
  // submission order; the driver is its only client).
  std::uint64_t wave = 0;
  bool encoder_threw = false;
  bool cancel_emitted = false;
};

// What the accounting found: counts, per-kind faults, latency samples.
struct run_tally {
  std::uint64_t completed = 0;
  std::uint64_t failed = 0;
  std::uint64_t cancelled = 0;
  // Per device of the scheduler, by index.
  std::vector<device_tally> devices;
  fault_tally delay, hang, lost, encoder, cancel;
  // Failures and cancellations by code name, in first-seen order.
  std::vector<std::pair<std::string, std::uint64_t>> outcomes;
  std::uint64_t unexplained = 0;
  // The first few unexplained outcomes, one line each.
  std::vector<std::string> unexplained_examples;
  // Per completed wave, in µs: from its start to its release; and where it
  // can be measured (the null device, a submission without delay or hang),
  // from the time the worker's host function recorded at the end of the submission to the wave
  // resuming after its fence (the timeline advance, the fence wait's
  // completion posted to the executor and a thread picking it up).
  std::vector<double> wave_us;
  std::vector<double> fence_wake_us;
  // Per wave with GPU times (--gpu-timestamps), in µs: from its first node's
  // begin to its last node's end on the GPU.
  std::vector<double> gpu_us;
  // With --gpu-timestamps, per bucket of the program (its order): the
  // completed waves timed, and per node (plan order) their GPU times
  // summed, in ns — each node's mean over them, without a sample kept.
  struct node_gpu_times {
    std::uint64_t waves = 0;
    std::vector<std::uint64_t> node_ns;
  };
  std::vector<node_gpu_times> bucket_gpu;

  [[nodiscard]] std::uint64_t injected() const noexcept;
  [[nodiscard]] std::uint64_t surfaced() const noexcept;
  // Whether every kind's surfaced count equals its injected count.
  [[nodiscard]] bool all_surfaced() const noexcept;
};

class run_accounting {
 public:
  // For a run of `waves` waves on `devices` (the scheduler's, by index);
  // `device_faults` are each null device's fault options (empty on other
  // devices); `completion_times` (or null) the null devices' fence clock, for the
  // fence wake latency; `gpu_timed`: waves report GPU times, each node's
  // summed per bucket of `program` (run_tally::bucket_gpu).
  run_accounting(std::vector<const gpu::device*> devices, std::vector<gpu::null_fault_options> device_faults,
                 const fence_clock* completion_times, std::uint64_t waves, bool gpu_timed,
                 const compiled_program* program = nullptr);

  // Records one completed wave. Allocates only for failures.
  void record(boost::system::error_code ec, const wave_report& report, const wave_facts& facts);

  // Takes the devices' injected counts (summed), once every wave completed
  // and the devices ran or dropped all their work.
  void settle(const gpu::fault_counts& device_injected) noexcept;

  [[nodiscard]] const run_tally& tally() const noexcept { return tally_; }

 private:
  // One device: its faults, decided up to `scanned`.
  struct device_state {
    const gpu::device* device;
    std::optional<gpu::null_fault_options> faults;
    std::uint64_t scanned = 0;
    std::optional<std::uint64_t> first_hang;
    std::optional<std::uint64_t> first_lost;

    // Decides the device's faults of submissions up to `value`.
    void scan(std::uint64_t value) noexcept;
    // Whether the device ran submission `value` (or lost itself there):
    // nothing after a loss runs.
    [[nodiscard]] bool reached(std::uint64_t value) const noexcept;
    [[nodiscard]] bool loss_injected() const noexcept;
    [[nodiscard]] bool hang_injected_at_or_below(std::uint64_t value) const noexcept;
  };
  void count_outcome(const boost::system::error_code& ec);
  void note_unexplained(const boost::system::error_code& ec, const wave_report& report, const wave_facts& facts);

  void add_node_times(const wave_report& report);

  std::vector<device_state> devices_;
  const fence_clock* completion_times_;
  const compiled_program* program_;
  run_tally tally_;
};

}  // namespace ferrum::tools
