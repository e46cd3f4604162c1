// tools/run_report.hpp — what `ferrum run` prints: a summary for people, or
// the `ferrum.run.v1` document (docs/interfaces.md, "ferrum.run.v1"), and
// whether the run failed.
//
//   ferrum::tools::run_summary summary = ...;
//   if (json) write_json(std::cout, ferrum::tools::run_json(summary));
//   else ferrum::tools::write_run_summary(std::cout, summary);
//   if (std::string why = ferrum::tools::run_failure(summary); !why.empty()) ...  // exit 3
#pragma once

#include "run_accounting.hpp"

#include "ferrum/binding/compiled_program.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace ferrum::tools {

// The name in the document's `format` field.
inline constexpr const char* run_format = "ferrum.run.v1";

struct latency_figures {
  double wave_p50 = 0;
  double wave_p99 = 0;
  double fence_wake_p50 = 0;
  double fence_wake_p99 = 0;
  // Whether the fence wake figures were measured (the null device's host
  // functions time submissions; Vulkan cannot run host functions): 0 otherwise.
  bool fence_wake_measured = false;
  // GPU time per wave (--gpu-timestamps): first node's begin to last node's
  // end; gpu_measured false without the option.
  double gpu_p50 = 0;
  double gpu_p99 = 0;
  bool gpu_measured = false;
};

// One pool's arena in a lane of a bucket.
struct pool_memory {
  std::string pool;
  std::string memory;  // its class
  std::string liveness;
  std::uint64_t offset = 0;  // in the lane
  std::uint64_t bytes = 0;
  std::uint64_t unaliased_bytes = 0;
  // Its members are images: `bytes` are their texels, which the lane's
  // image memory holds (bucket_memory::image_bytes), not its buffer.
  bool images = false;
};

// One bucket's lane memory, and what a wave of it checks.
struct bucket_memory {
  std::string bucket;
  std::uint64_t lane_bytes = 0;
  std::uint64_t unaliased_lane_bytes = 0;
  std::vector<pool_memory> pools;
  // Per memory class (index_of), its window of the lane (size 0: unused).
  std::array<memory_window, memory_class_count> classes{};
  std::size_t resources_checked_per_wave = 0;
  // Listings the checks cannot check (checking_encoder.hpp); reported for v2
  // plans only.
  std::size_t resources_unchecked_per_wave = 0;
  // The nodes whose list opens with a barrier in a wave, as compiled
  // (compiled_bucket::lane.barriers_per_wave()).
  std::size_t barriers_per_wave = 0;
  // With split barriers on one queue (lane_recipe::ordered_split, or
  // one_queue_split in plan order): its events and barriers per wave.
  std::size_t split_events_per_wave = 0;
  std::size_t split_barriers_per_wave = 0;
  // Those barriers, in plan order: the node each opens, and its scope
  // (compiled_bucket::lane.barrier_scopes).
  struct barrier_line {
    std::string node;
    barrier_scope scope;
  };
  std::vector<barrier_line> barriers;
  // Its lanes that exist at the end, on every device, and their memory
  // (buffers and images).
  std::uint32_t lanes_made = 0;
  std::uint64_t made_bytes = 0;
  // The image memory a lane makes on the run's (first) device, and what it
  // would take with no image sharing (lane_image_placement); 0 without images.
  std::uint64_t image_bytes = 0;
  std::uint64_t unaliased_image_bytes = 0;
};

// What `bucket` of `program` takes per lane, by pool.
[[nodiscard]] bucket_memory bucket_memory_of(const plan& p, const compiled_program& program,
                                             const compiled_bucket& bucket, std::size_t resources_checked_per_wave,
                                             std::size_t resources_unchecked_per_wave = 0);

// One bucket's critical path (--gpu-timestamps; ferrum/binding/critical_path.hpp):
// from each node's mean GPU time over the bucket's completed waves.
struct bucket_gpu_path {
  std::string bucket;
  std::uint64_t waves = 0;  // the completed waves timed
  double serial_us = 0;
  double critical_path_us = 0;
  std::vector<std::string> critical_path;  // node ids, first to last
  double async_bound_us = 0;
};

// `bucket`'s critical path from `times` (its entry of run_tally::bucket_gpu),
// node ids from `p`.
[[nodiscard]] bucket_gpu_path gpu_path_of(const compiled_program& program, const compiled_bucket& bucket, const plan& p,
                                          const run_tally::node_gpu_times& times);

// One of the device's distinct queues, in a run of a v2 plan.
struct queue_use {
  std::size_t queue = 0;           // device::queue_at(queue); 0 is the compute queue
  std::vector<std::string> kinds;  // the kinds the device runs on it
  std::size_t nodes = 0;           // the plan's nodes placed on it: per wave
  std::uint64_t submissions = 0;   // submitted to it during the run
};

// One device of a run over several (--devices K): what it ran.
struct device_use {
  std::string name;
  device_tally waves;             // waves handed one of its lanes, by outcome
  std::uint64_t submissions = 0;  // to its compute queue during the run
  bool lost = false;
  std::uint32_t quarantined = 0;  // its lanes quarantined at the end
};

struct run_summary {
  std::string plan_path;
  std::string plan_hash;
  std::string device_kind;       // "null" or "vulkan"
  bool discrete_layout = false;  // --discrete-layout
  std::string device_name;
  std::uint64_t requested = 0;
  unsigned threads = 0;
  std::uint64_t seed = 0;
  std::uint64_t fence_timeout_ms = 0;
  double seconds = 0;
  std::size_t buckets = 0;
  std::uint32_t lanes_per_bucket = 0;
  std::uint32_t max_in_flight = 0;
  std::uint32_t quarantined = 0;
  latency_figures latency;
  // --gpu-timestamps: per bucket with completed waves, in the program's order.
  std::vector<bucket_gpu_path> gpu_paths;
  double allocations_per_wave = 0;
  std::uint64_t steady_waves = 0;
  std::uint64_t violations = 0;
  // On the null device: the commands that met an image in another layout
  // than they expected (gpu::null_device::image_layout_errors), and the first.
  std::uint64_t image_layout_errors = 0;
  std::string first_image_layout_error;
  std::vector<bucket_memory> memory;  // per bucket, in the scheduler's order
  // A ferrum.plan.v2 plan: the report adds `queues` and each bucket's
  // unchecked listings.
  bool v2 = false;
  std::vector<queue_use> queues;       // v2: per distinct device queue
  std::vector<std::string> unchecked;  // why listings are not checked
  // --devices K above 1: per device, by index (the report adds `devices`).
  std::vector<device_use> devices;
  run_tally tally;
  // Where --trace and --timeline went ("" when not asked), and the spans
  // written and dropped (the recorder keeps the newest).
  std::string trace_path;
  std::string timeline_path;
  std::uint64_t trace_spans = 0;
  std::uint64_t trace_dropped = 0;
};

// The p-th percentile (0 < p <= 100, nearest rank) of `samples`, which it
// sorts; 0 for none.
[[nodiscard]] double percentile(std::vector<double>& samples, double p);

// The `ferrum.run.v1` document, keys in the documented order.
[[nodiscard]] nlohmann::ordered_json run_json(const run_summary& summary);

// The summary for people: waves, lanes, memory, latencies, allocations,
// violations, faults by kind, failures by code.
void write_run_summary(std::ostream& out, const run_summary& summary);

// Why the run failed (exit 3): violations, faults that did not surface,
// unexplained failures; "" when it did not.
[[nodiscard]] std::string run_failure(const run_summary& summary);

}  // namespace ferrum::tools
