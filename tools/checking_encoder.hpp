// tools/checking_encoder.hpp — the encoders of `ferrum run`: every node
// writes a pattern unique to (wave, node, resource) into every resource it
// lists, and has the device check what the layout says each of them holds
// (docs/interfaces.md, "ferrum.run.v1", violations).
//
//   ferrum::tools::device_checks checks;   // one per device of the scheduler
//   checks.push_back(ferrum::tools::wave_checks::create(device, 0, plan, *scheduler, &completion_times).value());
//   ferrum::tools::checking_encoder encode(checks);
//   encode.arm(wave, fault, &signal);
//   scheduler->async_submit(request, encode, handler);
//   ... after async_shutdown: (*checks)->violations()
//
// The same commands run on both devices (write_pattern and check_pattern,
// ferrum/gpu/builtin_kernels.hpp; copies on a transfer node): the
// verification is device-side, so on Vulkan it reads what the GPU sees. Who
// writes each resource and what each listing checks follow the plan's
// dependency graph (listing_checks.hpp: users not ordered against every other
// user only check). For each resource a compute node lists, in its list, in
// order:
//   1. what it must still hold is checked: the pattern of the last writer it
//      runs after in this wave (an invocation resource inside its live
//      interval), or, for a persistent resource with no writer before it, the
//      pattern its last writer wrote in the lane's previous wave
//      (encode_context::lane_previous_wave); nothing for an invocation
//      resource's first users, whose bytes may hold another resource's
//      leftovers where the layout aliases them;
//   2. where it writes, the node's own pattern is written through the range
//      the scheduler handed out;
//   3. and that pattern is checked at the compiled offset.
// A transfer node runs no kernel: it copies the compiled range into a
// snapshot (for 1), copies its pattern from a staging area it fills on the
// host for the wave (2; the lane, and so its staging, is the wave's alone),
// and snapshots the compiled range again (for 3); the first compute node
// that runs after it checks both snapshots, before its own resources.
// A byte that is not what the layout says (an aliased resource written
// inside another's interval, a lane reused before its fence, persistent bytes
// lost, a wrong range handed out, a torn write, a node run before what it
// depends on) adds to a counter word of the wave's (bucket, lane). Only one
// wave holds a lane at a time, so no two submissions that may run at once
// add to one word. Checks read the lane at offsets computed here from the
// compiled program, not from what the scheduler handed the encoders, so a
// wrong range handed out shows as violations.
//
// Word kernels check 4-byte words: a resource is written and checked over its
// largest 4-byte-aligned interior (all of it for the usual aligned ones).
#pragma once

#include "fence_clock.hpp"
#include "listing_checks.hpp"
#include "run_imports.hpp"
#include "wave_faults.hpp"

#include "ferrum/error.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/cancellation_signal.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ferrum::tools {

// What an injected encoder fault throws.
class injected_encoder_fault : public std::runtime_error {
 public:
  injected_encoder_fault() : std::runtime_error("injected encoder fault (--fault encoder)") {}
};

// What the checking encoders of one run share: the kernels, the counters,
// each bucket's slots and the transfer nodes' staging and
// snapshots. Immutable while waves run (but for the staging bytes, each
// lane's written only by the wave holding the lane).
// Self-tests of the checks: the wave (0: none) whose first binding slot gets
// the previous wave's pattern, as if the slot had been reused before its
// fence; and the wave whose first workspace resource with a later user gets
// it, as if another resource had written it inside its interval. The run must
// report every word of the slot (once) or of the resource (once for its own
// check and once for each later check of its pattern: twice in a v1 plan)
// as a violation. Either may be a transfer node's, whose staging then holds
// the stale pattern.
struct checks_self_test {
  std::uint64_t corrupt_slot_wave = 0;
  std::uint64_t corrupt_workspace_wave = 0;
};

class wave_checks {
 public:
  // Makes the kernels, the counters arena and, for a plan with transfer
  // nodes, the arena of their staging and snapshots on `device` (`s`'s
  // device `device_index`), and reads the resource layout and lane arenas of
  // its pools; `p` is the plan `s`'s program was compiled from. `completion_times`
  // (null: none) gets a host function per wave; only the null device runs
  // those. An imported resource is checked in its buffer of `imports`
  // (null: the plan has none), and only against this wave's writers: every
  // wave writes the one buffer, so no lane's previous wave is what it holds.
  // Errors: the device's (kernels, arenas).
  [[nodiscard]] static result<std::unique_ptr<wave_checks>> create(gpu::device& device, std::size_t device_index,
                                                                   const plan& p, const scheduler& s,
                                                                   fence_clock* completion_times,
                                                                   const run_imports* imports = nullptr,
                                                                   checks_self_test test = {});

  // The device whose waves these checks record.
  [[nodiscard]] const gpu::device& device() const noexcept { return *device_; }

  // Records node `c.node_index`'s commands for wave `c.wave`. Throws
  // std::runtime_error when the device refuses a command or the context is
  // not what the plan says (another bucket, lane or resource count).
  void record(const encode_context& c) const;

  // The resource listings each wave of bucket `bucket_index` (the
  // scheduler's pools() order) checks, and those it cannot check
  // (listing_checks.hpp), among those with at least one whole word.
  [[nodiscard]] std::size_t checked_per_wave(std::size_t bucket_index) const noexcept;
  [[nodiscard]] std::size_t unchecked_per_wave(std::size_t bucket_index) const noexcept;
  // Why each listing of the plan that is never checked is not (in node
  // order), whatever its size.
  [[nodiscard]] const std::vector<std::string>& unchecked() const noexcept { return unchecked_; }

  // The sum of the counters: the run's violations. Only once no wave runs
  // (after async_shutdown): the GPU writes them until then.
  [[nodiscard]] std::uint64_t violations() const noexcept;

 private:
  static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  // One resource a node lists (its `position` in the node's list).
  struct checked_resource {
    std::size_t position;
    // In the lane, compiled, or in `imported` (its run_imports buffer); 4-byte aligned.
    std::size_t offset;
    std::size_t size;  // a multiple of 4, not 0
    bool writes;
    // Whose pattern it holds before the node's commands, if it is checked:
    // (node, position) of this wave or, persistent, of the lane's previous.
    std::optional<std::array<std::size_t, 2>> expected;
    bool expected_from_previous_wave;
    // The target of a self-test's stale pattern, if any: the first binding
    // slot, or the first workspace resource with a later user.
    std::uint64_t self_test_wave;
    // A transfer node's: offsets in its lane's block of `transfer_` (none:
    // not used): the staging it copies its pattern from, the snapshots of
    // the compiled range before and after.
    std::size_t staging;
    std::size_t before_snapshot;
    std::size_t after_snapshot;
    const gpu::arena* imported;
  };
  // A check a compute node runs on a transfer node's snapshot.
  struct snapshot_check {
    std::size_t snapshot;  // in the lane's block of `transfer_`
    std::size_t size;
    std::array<std::size_t, 2> pattern;  // (node, position) whose pattern it holds
    bool from_previous_wave;             // the lane's previous wave's pattern
  };
  struct bucket_checks {
    const bucket_id* id = nullptr;  // the compiled program's: encode_context::bucket refers to it
    // Node n's: [begin[n], begin[n + 1]) of `resources`.
    std::vector<checked_resource> resources;
    std::vector<std::size_t> begin;
    // Per node: the snapshots it checks for transfer nodes.
    std::vector<std::vector<snapshot_check>> snapshots;
    std::size_t checked = 0;
    std::size_t unchecked = 0;
    // Its lanes' blocks of `transfer_`: lane l's at base + l * block.
    std::size_t transfer_base = 0;
    std::size_t transfer_block = 0;
  };

  wave_checks() = default;
  [[nodiscard]] static bucket_checks plan_checks(const plan& p, const std::vector<listing_check>& listings,
                                                 const lane_pool& pool, const run_imports* imports,
                                                 checks_self_test test);
  // Where resource `r` is on `on`: its compiled lane range, or its buffer's.
  [[nodiscard]] static gpu::arena_range compiled_range(const checked_resource& r, const lane_contents& on) noexcept {
    return r.imported != nullptr ? r.imported->range(r.offset, r.size) : on.range(r.offset, r.size);
  }
  [[nodiscard]] const bucket_checks& bucket_of(const encode_context& c, std::size_t& index) const;
  [[nodiscard]] std::uint32_t seed(std::uint64_t wave, std::size_t node, std::size_t position) const noexcept;
  // Node `c.node_index`'s copies, on the transfer queue.
  void record_transfer(const encode_context& c, const bucket_checks& bucket, const lane_contents& on) const;

  std::vector<bucket_checks> buckets_;
  std::vector<queue_kind> node_queues_;  // by plan index
  std::vector<std::string> unchecked_;
  std::size_t nodes_ = 0;
  std::size_t lanes_ = 0;
  std::size_t max_listed_ = 1;  // the most resources one node lists
  std::unique_ptr<gpu::kernel> writer_;
  std::unique_ptr<gpu::kernel> checker_;
  // One u32 per (bucket, lane, queue kind), bucket-major: the checks of
  // nodes on two queues of a wave run at once.
  std::unique_ptr<gpu::arena> counters_;
  // The transfer nodes' staging and snapshots, one block per (bucket, lane);
  // null when the plan has no transfer node.
  std::unique_ptr<gpu::arena> transfer_;
  fence_clock* completion_times_ = nullptr;
  const gpu::device* device_ = nullptr;
};

// The checks of each of a scheduler's devices, by its device index: a wave's
// commands, kernels and counters are on its lane's device.
using device_checks = std::vector<std::unique_ptr<wave_checks>>;

// The run's violations: every device's counters.
[[nodiscard]] std::uint64_t violations(const device_checks& checks) noexcept;

// The encoder of one wave at a time (a driver keeps one per wave in
// flight): wave_checks' commands, plus the wave's tool fault, if any.
class checking_encoder {
 public:
  explicit checking_encoder(const device_checks& checks) noexcept : checks_(&checks) {}

  // Prepares for wave `wave` (its id in the scheduler) with `fault`; `signal`
  // is the one bound to the wave's completion, emitted by a cancel fault at
  // a node. Call before async_submit, never while a wave uses the encoder.
  void arm(std::uint64_t wave, wave_fault fault, boost::asio::cancellation_signal* signal) noexcept;

  // Called by the scheduler for each node, concurrently for different nodes.
  void operator()(const encode_context& c);

  // Whether the encoder threw its injected fault / emitted its cancellation.
  // Read once the wave has completed.
  [[nodiscard]] bool threw() const noexcept { return threw_.load(std::memory_order_relaxed); }
  [[nodiscard]] bool cancelled() const noexcept { return cancelled_.load(std::memory_order_relaxed); }

 private:
  const device_checks* checks_;
  std::uint64_t wave_ = 0;
  wave_fault fault_;
  boost::asio::cancellation_signal* signal_ = nullptr;
  std::atomic<bool> threw_{false};
  std::atomic<bool> cancelled_{false};
};

}  // namespace ferrum::tools
