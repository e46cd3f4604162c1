// tools/run_options.hpp — the options of `ferrum run` and their checks: the
// `--fault SPEC` grammar, ranges, and which faults a device can inject
// (docs/interfaces.md, "The ferrum command").
//
//   ferrum::tools::run_options options;
//   options.fault_text = "delay:0.1,encoder:0.05";
//   options.fault_given = true;
//   if (std::string problem = ferrum::tools::check_run_options(options); !problem.empty())
//     return usage_error(problem);  // options.faults is filled in otherwise
#pragma once

#include <boost/system/result.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace ferrum::tools {

// Per-wave fault probabilities, each in [0, 1]. delay, hang and lost are the
// null device's (decided per submission); encoder and cancel are the tool's
// own (decided per wave).
struct fault_spec {
  double delay = 0;
  double hang = 0;
  double lost = 0;
  double encoder = 0;
  double cancel = 0;

  // Whether any fault needs the null device's injection.
  [[nodiscard]] bool device_faults() const noexcept { return delay > 0 || hang > 0 || lost > 0; }
};

// Parses `kind:probability[,kind:probability...]`, kinds delay, hang, lost,
// encoder, cancel, each at most once; a probability is a decimal number in
// [0, 1]. The error says what is wrong with which item.
[[nodiscard]] boost::system::result<fault_spec, std::string> parse_fault_spec(std::string_view text);

// The hardware's threads, 1..8: more rarely helps waves of a few nodes.
[[nodiscard]] unsigned default_threads() noexcept;

struct run_options {
  // The plan file to run.
  std::string plan_path;
  // --program FILE: the plan's compiled program, saved by `ferrum compile
  // --out`, loaded (and checked) instead of compiling; empty: compile.
  std::string program_path;
  // "null" or "vulkan".
  std::string device = "null";
  // --devices K: one scheduler over K such devices (Vulkan: K logical
  // devices of one physical device); device d's faults are seeded with
  // seed + d.
  unsigned devices = 1;
  std::uint64_t waves = 1000;
  // Executor threads, also the encoder tasks per wave.
  unsigned threads = default_threads();
  // Seeds the device's and the tool's fault decisions.
  std::uint64_t seed = 1;
  // `--fault` as given (fault_given: the option was there, even empty) and
  // as parsed by check_run_options.
  std::string fault_text;
  bool fault_given = false;
  fault_spec faults;
  std::uint64_t fence_timeout_ms = 5000;
  // Print a `ferrum.run.v1` document (and errors as JSON) instead of a summary.
  bool json = false;
  // --trace (Chrome trace-event JSON) and --timeline (SVG); empty: not written.
  std::string trace_path;
  std::string timeline_path;
  // --gpu-timestamps: GPU time per node (scheduler_options::gpu_timestamps),
  // reported per wave and drawn on the trace's GPU track.
  bool gpu_timestamps = false;
  // --reorder (null device): runs what no barrier orders last to first
  // (null_device_options::reorder_unordered), so that a barrier the plan's
  // hazards needed and did not get shows as a violation.
  bool reorder = false;
  // --split-barriers: scheduler_options::split_barriers (events instead of
  // barriers where a producer runs two nodes or levels before its consumer,
  // on one queue).
  bool split_barriers = false;
  // --discrete-layout: the device lays memory out as a discrete GPU must
  // (null_device_options / vulkan_device_options::discrete_layout): device
  // memory unmapped, upload and readback memory staged by the lanes'
  // staging lists.
  bool discrete_layout = false;
};

// Bounds of the numeric options (checked by check_run_options).
inline constexpr std::uint64_t max_waves = 10'000'000;  // latency samples are kept per wave
inline constexpr unsigned max_threads = 256;
inline constexpr unsigned max_devices = 8;
// A hang lasts five fence timeouts; an hour keeps that far from overflow.
inline constexpr std::uint64_t max_fence_timeout_ms = 3'600'000;

// Checks `options` and parses its fault text into `options.faults`. Returns
// "" when they are usable, else a one-line usage message.
[[nodiscard]] std::string check_run_options(run_options& options);

}  // namespace ferrum::tools
