// ferrum/scheduler/trace.hpp — what a scheduler records of its waves when
// asked to: one span per phase of every wave on its lane, and one per node's
// encoder on the thread that ran it; written out as Chrome trace-event JSON
// (Perfetto, chrome://tracing) or as a standalone SVG timeline.
//
//   ferrum::trace_recorder trace(1 << 16);   // spans kept: a ring, the newest win
//   options.trace = &trace;                  // ferrum::scheduler_options
//   ... run waves ...
//   std::ofstream json("trace.json");
//   ferrum::write_chrome_trace(json, trace, plan);
//   std::ofstream svg("timeline.svg");
//   ferrum::write_timeline_svg(svg, trace, plan);
//
// A wave's spans (its phases, its nodes' encoders and, with GPU timestamps,
// its nodes' GPU times) are recorded together just
// before its completion is posted, so they are in the recorder by the time
// its handler runs — except for a wave cancelled after submit, which
// completes at once and records its spans when its fence is reached. Node
// spans wait in the wave until then: recording takes the recorder's lock
// once per wave, copying into memory reserved up front, so a wave allocates
// nothing for its trace. Without a recorder the scheduler records nothing
// and reads no clock for it.
#pragma once

#include "ferrum/binding/ids.hpp"
#include "ferrum/binding/plan.hpp"
#include "ferrum/queue_kind.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <span>
#include <vector>

namespace ferrum {

struct trace_span {
  static constexpr std::uint32_t no_node = 0xFFFFFFFFu;

  // A phase of a wave, on its lane (node == no_node); or, with phase
  // `encode` and a node, that node's encoder on worker thread `thread`; or,
  // with `gpu` (phase `fence`: what the wave awaits), that node's commands
  // on the device's queue (scheduler_options::gpu_timestamps).
  wave_phase phase = wave_phase::acquire;
  std::uint32_t node = no_node;
  bool gpu = false;
  // A GPU span whose node's list opened with a barrier (derived from a
  // hazard, or every node's with barrier_placement::every_node): the device
  // ordered it after every command before it on its queue.
  bool barrier = false;
  // A GPU span's device queue, named by the first kind it runs (compute on a
  // device whose one queue runs both kinds).
  queue_kind queue = queue_kind::compute;
  std::uint64_t wave = 0;
  // The wave's bucket (owned by the compiled program), device (its index in
  // the scheduler's devices) and lane there.
  const bucket_id* bucket = nullptr;
  std::uint32_t device = 0;
  std::uint32_t lane = 0;
  // A small number per thread of the process, from 1 (node spans only).
  std::uint32_t thread = 0;
  std::chrono::steady_clock::time_point begin;
  std::chrono::steady_clock::time_point end;
};

// A bounded, thread-safe ring of spans. Once full, each new span replaces
// the oldest (counted in dropped()).
class trace_recorder {
 public:
  // `capacity` >= 1 spans, reserved now.
  explicit trace_recorder(std::size_t capacity);
  trace_recorder(const trace_recorder&) = delete;
  trace_recorder& operator=(const trace_recorder&) = delete;

  void record(const trace_span& span) noexcept;
  // Several spans under one lock.
  void record(std::span<const trace_span> spans) noexcept;

  // The spans kept, oldest first (a copy, taken under the lock).
  [[nodiscard]] std::vector<trace_span> spans() const;
  [[nodiscard]] std::size_t capacity() const noexcept { return ring_.size(); }
  [[nodiscard]] std::uint64_t recorded() const noexcept;
  [[nodiscard]] std::uint64_t dropped() const noexcept;
  // The spans in the ring now: recorded() - dropped().
  [[nodiscard]] std::size_t kept() const noexcept;
  // Time zero of the written trace: when the recorder was made.
  [[nodiscard]] std::chrono::steady_clock::time_point epoch() const noexcept { return epoch_; }

  // The calling thread's number as recorded in node spans (1, 2, ...).
  [[nodiscard]] static std::uint32_t this_thread_number() noexcept;

 private:
  [[nodiscard]] std::size_t kept_locked() const noexcept;

  mutable std::mutex mutex_;
  std::vector<trace_span> ring_;
  std::uint64_t recorded_ = 0;
  std::chrono::steady_clock::time_point epoch_;
};

// Chrome trace-event JSON ({"traceEvents": [...]}, complete events "X" in
// microseconds): one track per lane (process "lanes", thread "<bucket> lane
// <n>"), one per worker thread (process "encoder threads") and, with GPU
// timestamps, one per device queue (process "gpu", thread "queue" and
// "transfer queue"); with several devices, lane and queue names begin with
// "device <d> "; spans
// named `acquire`, `bind`, `encode`, `submit`, `fence`, `release`,
// `encode <node>` and, on the GPU track (category "gpu"), `<node>`, with
// args {"wave", "bucket", "lane"} (and "node"). Node names come from `p`,
// the plan the scheduler runs.
void write_chrome_trace(std::ostream& out, const trace_recorder& trace, const plan& p);

// The same as a standalone SVG: one row per lane, each wave's phases as
// coloured bars, rows for the encoder threads and the GPU queue, a time
// axis in milliseconds and a legend.
void write_timeline_svg(std::ostream& out, const trace_recorder& trace, const plan& p);

}  // namespace ferrum
