// ferrum/scheduler/scheduler_options.hpp — what a scheduler is made with
// (scheduler::create) and the counters it keeps (scheduler::stats). Kept
// apart from the facade so that the scheduler's own code reads them without
// it.
#pragma once

#include "ferrum/error.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace ferrum {

class trace_recorder;
struct lane_state_context;

// The engine's object of one lane (ferrum/scheduler/lane_state.hpp): derive
// from it. Made by a factory each time a lane's memory is made, destroyed
// before that memory is freed.
class lane_state {
 public:
  lane_state() = default;
  lane_state(const lane_state&) = delete;
  lane_state& operator=(const lane_state&) = delete;
  virtual ~lane_state() = default;
};

using lane_state_result = result<std::unique_ptr<lane_state>>;
using lane_state_factory = std::function<lane_state_result(const lane_state_context&)>;

// Where a scheduler runs each node: on the queue the plan names (a v2 plan's
// `queue`; the device maps it onto one of its queues), or every node on the
// compute queue in plan order, as for a v1 plan (for encoders that record
// compute work in every node).
enum class queue_placement : std::uint8_t { plan, compute_only };

// Where a scheduler's waves put barriers between their nodes: only where
// the compiler found a hazard (compiled_bucket::lane.barrier_before,
// ferrum/binding/barriers.hpp) — and before any command that reaches outside
// its node's resources — or before every node's first command, as ferrum did
// before it derived them (the benchmarks' baseline, and for encoders whose
// nodes share memory the plan does not declare).
// derived_all_stages: where derived puts them, each over every stage, as
// ferrum recorded them before it derived their scopes (the benchmarks'
// baseline for the stages a barrier drains).
enum class barrier_placement : std::uint8_t { derived, every_node, derived_all_stages };

// The order a wave submits its nodes in where they all run on one queue:
// by dependency level (lane_recipe::order, ferrum/binding/node_order.hpp:
// fewer barriers, each serving a whole level), or the plan's own order (for
// encoders whose nodes share state the plan does not declare). A wave over
// several queues keeps plan order either way.
enum class node_order : std::uint8_t { levels, plan };

// When a lane pool makes its lanes' memory: every lane when the pool is made
// (the cold path pays it all, and create fails on what the device refuses), or
// a lane when a holder waits and no free lane is left (made on the lane
// pool's executor while the holder waits; a failure fails that holder).
enum class lane_making : std::uint8_t { at_create, when_needed };

struct scheduler_options {
  // How long a wave awaits its fence before it fails with
  // fence_timeout and its lane is quarantined.
  std::chrono::milliseconds fence_timeout{5000};
  // Encoder tasks per wave: nodes are split into at most this many
  // contiguous chunks, one posted per chunk and the last run by the wave
  // itself. Match it to the executor's threads; 1 encodes inline.
  std::size_t encoder_tasks = 1;
  // Replay: each lane's command lists are recorded by the first wave that
  // succeeds on it and submitted again, unchanged, by the lane's later waves
  // (encode_context::replay), so that a wave's CPU cost no longer grows with
  // the commands it records. Any failure before submit makes the lane's next
  // wave record afresh.
  bool replay = false;
  // GPU time per node: each lane gets a timestamp pool (two slots per node,
  // made once) and each node's list a timestamp before and after its
  // commands, read back after the wave's fence into wave_report::gpu_nodes
  // and the trace's GPU track. Off: one branch per node. A device without
  // timestamps fails create with timestamps_unsupported. Waves only: lanes
  // driven through async_acquire are not timed.
  bool gpu_timestamps = false;
  // Where nodes run (queue_placement, above). With `plan`, a wave's
  // nodes go to their queues' in segments that wait for each other's
  // timeline values where the plan's dependencies cross queues, and a wave
  // that used another queue than compute ends with a join on the compute
  // queue: its submitted value, which the lane's release waits for.
  queue_placement queues = queue_placement::plan;
  // Where barriers go between a wave's nodes (barrier_placement, above).
  barrier_placement barriers = barrier_placement::derived;
  // The order of a wave's nodes on one queue (node_order, above).
  node_order order = node_order::levels;
  // Split barriers: where a wave's nodes all run on one queue and barriers
  // are `derived`, a node whose hazards all come from two or more nodes
  // (in level order: levels) back opens with no barrier and waits for an
  // event the last of those nodes set after its commands instead
  // (lane_recipe::one_queue_split, ordered_split; gpu::event), so that the
  // nodes in between are not drained. The wave's last list resets the
  // events after its closing barrier. Off: barriers only.
  bool split_barriers = false;
  // When each bucket's lanes are made (lane_making, above). at_create,
  // the default: create makes every lane of every bucket, so that it fails
  // on what the device refuses and no wave ever waits for a lane to be made.
  // when_needed: a bucket's lane is made when a wave finds none free and
  // fewer than the program's lanes exist — on the executor, while the wave
  // waits for it as for any lane (cancellable; a lane the device refuses
  // fails that wave with the device's code) — so that buckets no wave uses
  // take no memory. trim() gives free lanes' memory back either way.
  lane_making make_lanes = lane_making::at_create;
  // The engine's per-lane state (ferrum/scheduler/lane_state.hpp): called
  // once each time a lane's memory is made, its object reachable from every
  // encode context on that lane (encode_context::state) and destroyed before
  // the lane's memory is freed. Empty: lanes have no state.
  lane_state_factory make_lane_state{};
  // Where the waves' spans go (ferrum/scheduler/trace.hpp); none when null.
  // Must outlive the scheduler.
  trace_recorder* trace = nullptr;
  // Waves made at create, each with its coroutine frame, so that up to this
  // many alive at once allocate nothing; 0: twice the lanes plus two. A wave
  // is alive from async_submit until its handler has returned and its
  // coroutine has ended, so a program that keeps N waves submitted and
  // submits the next one from a completion handler has up to N + D + E
  // alive: D threads delivering a completion, E executor threads ending a
  // coroutine whose completion ran first. Beyond it, each new peak of waves
  // alive at once makes one more wave (then kept, and reused).
  std::size_t reserved_waves = 0;
};

// Counters over the scheduler's life.
struct scheduler_stats {
  std::uint64_t started = 0;
  std::uint64_t completed = 0;      // completed successfully
  std::uint64_t failed = 0;         // completed with an error other than operation_aborted
  std::uint64_t cancelled = 0;      // completed with operation_aborted
  std::uint32_t max_in_flight = 0;  // most waves holding a lane at once, over all buckets
  std::uint32_t in_flight = 0;      // waves holding a lane now
  std::uint64_t live = 0;           // waves accepted and not yet completed and delivered
  std::uint32_t lanes = 0;          // lanes that exist (made, not trimmed), over all buckets and devices
  std::uint64_t lane_bytes = 0;     // their memory
};

}  // namespace ferrum
