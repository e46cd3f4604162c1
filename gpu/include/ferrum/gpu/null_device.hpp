// ferrum/gpu/null_device.hpp — a device whose GPU is a CPU thread.
//
// A worker thread per queue plays the GPU: it runs its queue's submissions in
// order (kernels as their CPU form over the arena bytes, fills, copies, host
// functions, timestamps from its steady_clock), waits the configured latency,
// then advances the queue's timeline. A submission that waits on another
// queue's value blocks its worker (and no other) until that value is reached.
// By default compute and transfer have a queue each (`queues = 2`, async
// compute on the compute queue); `queues = 3` gives async compute its own;
// with `queues = 1` every kind runs on one. Most tests and benchmarks run on it.
// With `inline_completion` there are no workers: the submitting thread runs
// each submission inside queue::submit.
//
// Faults are injected per submission, decided by a hash of (seed, queue
// index, submission number on that queue) alone, so the same options give the
// same faults on every run whatever the timing; queue 0 (compute) gets the
// decisions decide_fault(options, submission) gives:
// * delay: the submission takes up to `max_delay` longer (uniform jitter);
// * hang: its value is not signalled for `hang_duration` (forever when zero,
//   until the device shuts down) — and, as on a real queue, neither is any
//   value submitted after it;
// * lost: the device (every queue) is lost when the worker reaches the
//   submission; its work does not run, and every pending and later wait
//   completes with device_lost.
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
#include <string>
#include <vector>

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
// The same for submission `submission` on the queue of index `queue_index`;
// for queue 0 the decision above.
[[nodiscard]] std::optional<fault_decision> decide_fault(const null_fault_options& options, std::size_t queue_index,
                                                         std::uint64_t submission) noexcept;

struct fault_counts {
  std::uint64_t delay = 0;
  std::uint64_t hang = 0;
  std::uint64_t lost = 0;
};

// Errors the null device found while running commands: how many, and the
// first few, described.
struct error_report {
  static constexpr std::size_t kept = 8;
  std::uint64_t count = 0;
  std::vector<std::string> first;
};
// The commands that met an image in another layout than they expected
// (null_device::image_layout_errors).
using image_layout_report = error_report;
// The barriers whose accesses were too narrow for what they ordered
// (null_device::barrier_access_errors).
using barrier_access_report = error_report;

struct null_device_options {
  // Time a queue's worker takes per submission, on top of running its
  // commands.
  std::chrono::microseconds latency{0};
  // 2: compute and transfer each have a queue (a worker and a timeline),
  // async_compute runs on the compute queue (as on a GPU with one compute
  // queue); 3: async_compute has a queue of its own too (queue_at(2));
  // 1: every kind runs on one queue.
  std::size_t queues = 2;
  null_fault_options faults;
  std::size_t max_arena_bytes = std::size_t{1} << 32;
  // Runs each submission inside queue::submit / submit_next, on the submitting
  // thread under the queue's lock, and reaches its value before submit
  // returns (so every submitted value a submission waits on is reached
  // already): no worker thread, no hand-off, so a benchmark measures the
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
  // Runs a submission's commands (across its lists) in the order farthest
  // from submission order that its barriers allow, as a GPU may run what no
  // barrier orders in any order or at once: a barrier a hazard needed and
  // did not get shows as a read before the write it should see. A barrier
  // orders only its stages (ferrum/sync_scope.hpp): the earlier commands of
  // a stage in its `before` before the later ones of a stage in its
  // `after`, and barriers chain through a stage in one's `after` and the
  // next one's `before`; so a barrier missing a stage on either side shows
  // too. Commands no barrier divides run last to first (with full
  // barriers: each stretch between two barriers last to first). A host
  // function, a timestamp or a layout transition runs after every command
  // before it and before every one after it (as a GPU's timestamp does).
  // A barrier that orders a write before a command reaching its memory
  // without the write's access in its `before` or the command's in its
  // `after` is counted (null_device::barrier_access_errors). Off: commands
  // run in submission order.
  bool reorder_unordered = false;
  // Lays memory out as a discrete GPU does (gpu::arena): the host bytes of
  // upload and readback arenas are a buffer of their own, which only
  // command_list::stage copies, so a missing copy shows as wrong data.
  // Off: they are the memory commands use. Device arenas have no host
  // bytes either way.
  bool discrete_layout = false;
  // Whether the compute queue has graphics (device_limits::graphics), as
  // every desktop GPU's does. Off: a compute-only device, which refuses
  // graphics lists (and a scheduler, plans with attachment accesses). The
  // null device records no native commands, graphics or not.
  bool graphics = true;
  // Format features (gpu::format_feature bits) the device lacks: each
  // entry's `features` of its `format` (device::format_features has every
  // other one), as a GPU lacks storage on some formats; a scheduler over
  // it refuses a plan whose images need them (format_unsupported).
  struct withheld_features {
    image_format format = image_format::rgba8_unorm;
    std::uint32_t features = 0;
  };
  std::vector<withheld_features> withheld{};
};

class null_device : public device {
 public:
  // Starts a worker thread per queue (none with inline_completion). Errors:
  // invalid_device_option (a probability outside [0, 1], a negative duration,
  // queues other than 1, 2 or 3, inline_completion with a latency, delay or
  // hang).
  [[nodiscard]] static result<std::unique_ptr<null_device>> create(const null_device_options& options);

  // Faults injected so far on every queue (counted when a worker, or submit
  // with inline_completion, reaches the submission).
  [[nodiscard]] virtual fault_counts injected_faults() const noexcept = 0;

  // Loses the device (every queue) now, as an injected `lost` fault would.
  virtual void lose() noexcept = 0;

  // Every command so far that met an image in another layout than the one
  // it expects (a transition's `from`, a copy's layout): what the
  // validation layers report on Vulkan. The command runs all the same, as
  // on a GPU, where the image's contents are then undefined.
  [[nodiscard]] virtual image_layout_report image_layout_errors() const = 0;

  // With reorder_unordered: every pair of commands so far where a barrier
  // orders a command's write before another command reaching the same
  // memory (an overlapping range of one arena or one image) directly (the
  // writer's stage in its `before`, the other's in its `after`), and no
  // barrier that does has the write's accesses in its `before` and the
  // other command's in its `after`: what the validation layers report as a
  // hazard on Vulkan. The commands run all the same.
  [[nodiscard]] virtual barrier_access_report barrier_access_errors() const = 0;

  // Marks `a` or `i` as shared with the queues of `kinds` alone (queue_bit
  // each; arena::queues, image::queues): the null device's stand-in for an
  // engine's resource made EXCLUSIVE on a Vulkan device whose queues are of
  // several families (gpu::vulkan_sharing), which a wave refuses to use on
  // another queue (import_not_shared). Commands still reach it on any queue.
  static void share_with(arena& a, std::uint32_t kinds) noexcept { a.set_queues(kinds); }
  // (An image_memory hands its images out const; a device made each one.)
  static void share_with(const image& i, std::uint32_t kinds) noexcept { const_cast<image&>(i).set_queues(kinds); }

 protected:
  using device::device;
};

}  // namespace ferrum::gpu
