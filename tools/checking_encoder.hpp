// tools/checking_encoder.hpp — the encoders of `ferrum run`: every node
// writes a pattern unique to (wave, node) into its own slot and has the
// device check that slot against it (docs/interfaces.md, "ferrum.run.v1",
// violations). A node's commands reach only its own slot of its lane
// (command_list::grant), so each node checks its own.
//
//   auto checks = ferrum::tools::wave_checks::create(device, *scheduler, &stamps, 0);
//   ferrum::tools::checking_encoder encode(**checks);
//   encode.arm(wave, fault, &signal);
//   scheduler->async_submit(request, encode, handler);
//   ... after async_shutdown: (*checks)->violations()
//
// The same commands run on both devices (write_pattern and check_pattern,
// ferrum/gpu/builtin_kernels.hpp): the verification is device-side, so on
// Vulkan it reads what the GPU sees. A check runs after its node's write in
// the same list; a byte that is not what its own wave wrote (a slot reused
// before its fence, a wrong offset, a torn write) adds to a counter word of
// the wave's (bucket, lane).
// Only one wave holds a lane at a time, so no two submissions that may run
// at once add to one word. A check reads its slots from the lane's arena at
// the compiled offsets, not from what the scheduler handed the encoders, so a
// wrong slot handed out shows as violations.
//
// Word kernels check 4-byte words: a slot is written and checked over its
// largest 4-byte-aligned interior (all of it for the usual aligned slots).
#pragma once

#include "fence_stamps.hpp"
#include "wave_faults.hpp"

#include "ferrum/error.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/cancellation_signal.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
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
class wave_checks {
 public:
  // Makes the kernels and the counters arena on `device` and reads the slot
  // layout and lane arenas of `s`'s pools. `stamps` (null: none) gets a host
  // function per wave; only the null device runs those. `corrupt_wave`
  // (0: none) is a self-test of the checks: that wave's first slot gets the
  // previous wave's pattern, as if the slot had been reused before its fence,
  // so the run must report every word of it as a violation. Errors: the
  // device's (kernels, arena).
  [[nodiscard]] static result<std::unique_ptr<wave_checks>> create(gpu::device& device, const scheduler& s,
                                                                   fence_stamps* stamps, std::uint64_t corrupt_wave);

  // Records node `c.node_index`'s commands for wave `c.wave`. Throws
  // std::runtime_error when the device refuses a command.
  void record(const encode_context& c) const;

  // The sum of the counters: the run's violations. Only once no wave runs
  // (after async_shutdown): the GPU writes them until then.
  [[nodiscard]] std::uint64_t violations() const noexcept;

 private:
  struct checked_slot {
    std::size_t node;
    std::size_t offset;  // in the lane's arena, 4-byte aligned
    std::size_t size;    // a multiple of 4, not 0
  };
  struct bucket_checks {
    const bucket_id* id;  // the compiled program's: encode_context::bucket refers to it
    std::vector<checked_slot> slots;
    std::vector<const gpu::arena*> lane_arenas;  // by lane index
  };

  wave_checks() = default;
  [[nodiscard]] const bucket_checks& bucket_of(const encode_context& c, std::size_t& index) const;

  std::vector<bucket_checks> buckets_;
  std::size_t nodes_ = 0;
  std::size_t lanes_ = 0;
  std::unique_ptr<gpu::kernel> writer_;
  std::unique_ptr<gpu::kernel> checker_;
  // One u32 per (bucket, lane), bucket-major.
  std::unique_ptr<gpu::arena> counters_;
  fence_stamps* stamps_ = nullptr;
  std::uint64_t corrupt_wave_ = 0;
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
