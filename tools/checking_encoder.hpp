// tools/checking_encoder.hpp — the encoders of `ferrum run`: every node
// writes a pattern unique to (wave, node, resource) into every resource it
// lists, and has the device check what the layout says each of them holds
// (docs/interfaces.md, "ferrum.run.v1", violations).
//
//   auto checks = ferrum::tools::wave_checks::create(device, plan, *scheduler, &stamps, 0);
//   ferrum::tools::checking_encoder encode(**checks);
//   encode.arm(wave, fault, &signal);
//   scheduler->async_submit(request, encode, handler);
//   ... after async_shutdown: (*checks)->violations()
//
// The same commands run on both devices (write_pattern and check_pattern,
// ferrum/gpu/builtin_kernels.hpp): the verification is device-side, so on
// Vulkan it reads what the GPU sees. For each resource a node lists, in its
// list, in order:
//   1. what it must still hold is checked: the pattern of its previous user
//      in this wave (an invocation resource inside its live interval), or,
//      for a persistent resource's first user, the pattern its last user
//      wrote in the lane's previous wave (encode_context::lane_previous_wave);
//      nothing for an invocation resource's first user, whose bytes may hold
//      another resource's leftovers where the layout aliases them;
//   2. the node's own pattern is written through the range the scheduler
//      handed out;
//   3. that pattern is checked at the compiled offset.
// A byte that is not what the layout says (an aliased resource written
// inside another's interval, a lane reused before its fence, persistent bytes
// lost, a wrong range handed out, a torn write) adds to a counter word of the
// wave's (bucket, lane). Only one wave holds a lane at a time, so no two
// submissions that may run at once add to one word. Checks read the lane at
// offsets computed here from the compiled program, not from what the
// scheduler handed the encoders, so a wrong range handed out shows as
// violations.
//
// Word kernels check 4-byte words: a resource is written and checked over its
// largest 4-byte-aligned interior (all of it for the usual aligned ones).
#pragma once

#include "fence_stamps.hpp"
#include "wave_faults.hpp"

#include "ferrum/error.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/cancellation_signal.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

namespace ferrum::tools {

// What an injected encoder fault throws.
class injected_encoder_fault : public std::runtime_error {
 public:
  injected_encoder_fault() : std::runtime_error("injected encoder fault (--fault encoder)") {}
};

// What the checking encoders of one run share: the kernels, the counters,
// each bucket's slots and each lane's arena. Immutable while waves run.
// Self-tests of the checks: the wave (0: none) whose first binding slot gets
// the previous wave's pattern, as if the slot had been reused before its
// fence; and the wave whose first workspace resource with a later user gets
// it, as if another resource had written it inside its interval. The run must
// report every word of the slot (once) or of the resource (twice: its own
// check and its next user's) as a violation.
struct checks_self_test {
  std::uint64_t corrupt_slot_wave = 0;
  std::uint64_t corrupt_workspace_wave = 0;
};

class wave_checks {
 public:
  // Makes the kernels and the counters arena on `device` and reads the
  // resource layout and lane arenas of `s`'s pools; `p` is the plan `s`'s
  // program was compiled from. `stamps` (null: none) gets a host function
  // per wave; only the null device runs those. Errors: the device's
  // (kernels, arena).
  [[nodiscard]] static result<std::unique_ptr<wave_checks>> create(gpu::device& device, const plan& p,
                                                                   const scheduler& s, fence_stamps* stamps,
                                                                   checks_self_test test = {});

  // Records node `c.node_index`'s commands for wave `c.wave`. Throws
  // std::runtime_error when the device refuses a command or the context is
  // not what the plan says (another bucket, lane or resource count).
  void record(const encode_context& c) const;

  // The resources each wave of bucket `bucket_index` (the scheduler's
  // pools() order) checks: resource listings with at least one whole word.
  [[nodiscard]] std::size_t checked_per_wave(std::size_t bucket_index) const noexcept;

  // The sum of the counters: the run's violations. Only once no wave runs
  // (after async_shutdown): the GPU writes them until then.
  [[nodiscard]] std::uint64_t violations() const noexcept;

 private:
  // One resource a node lists (its `position` in the node's list).
  struct checked_resource {
    std::size_t position;
    std::size_t offset;  // in the lane's arena, compiled; 4-byte aligned
    std::size_t size;    // a multiple of 4, not 0
    // The previous node of the wave listing it, and its position there.
    std::optional<std::array<std::size_t, 2>> previous;
    // A persistent resource's last user in a wave, and its position there.
    std::optional<std::array<std::size_t, 2>> persistent_last;
    // The target of a self-test's stale pattern, if any: the first binding
    // slot, or the first workspace resource with a later user.
    std::uint64_t self_test_wave;
  };
  struct bucket_checks {
    const bucket_id* id;  // the compiled program's: encode_context::bucket refers to it
    // Node n's: [begin[n], begin[n + 1]) of `resources`.
    std::vector<checked_resource> resources;
    std::vector<std::size_t> begin;
    std::vector<const gpu::arena*> lane_arenas;  // by lane index
  };

  wave_checks() = default;
  [[nodiscard]] static bucket_checks plan_checks(const plan& p, const compiled_program& program, const lane_pool& pool,
                                                 checks_self_test test);
  [[nodiscard]] const bucket_checks& bucket_of(const encode_context& c, std::size_t& index) const;
  [[nodiscard]] std::uint32_t seed(std::uint64_t wave, std::size_t node, std::size_t position) const noexcept;

  std::vector<bucket_checks> buckets_;
  std::size_t nodes_ = 0;
  std::size_t lanes_ = 0;
  std::size_t max_listed_ = 1;  // the most resources one node lists
  std::unique_ptr<gpu::kernel> writer_;
  std::unique_ptr<gpu::kernel> checker_;
  // One u32 per (bucket, lane), bucket-major.
  std::unique_ptr<gpu::arena> counters_;
  fence_stamps* stamps_ = nullptr;
};

// The encoder of one wave at a time (a driver keeps one per wave in
// flight): wave_checks' commands, plus the wave's tool fault, if any.
class checking_encoder {
 public:
  explicit checking_encoder(const wave_checks& checks) noexcept : checks_(&checks) {}

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
  const wave_checks* checks_;
  std::uint64_t wave_ = 0;
  wave_fault fault_;
  boost::asio::cancellation_signal* signal_ = nullptr;
  std::atomic<bool> threw_{false};
  std::atomic<bool> cancelled_{false};
};

}  // namespace ferrum::tools
