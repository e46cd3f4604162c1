// trace_layout.hpp (private) — how the trace writers lay spans out: one
// track per lane (by device, bucket id, then lane), one per encoder thread
// and one per device queue.
#pragma once

#include "ferrum/scheduler/trace.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace ferrum::detail {

// A span as drawn. A wave may ask for a lane long before its previous wave
// is done with it: its acquire span is shown from the moment the lane's
// previous span ended (`shown_begin`), the whole wait being end - span.begin.
struct shown_span {
  trace_span span;
  std::chrono::steady_clock::time_point shown_begin;
};

struct lane_track {
  std::string name;               // "<bucket id> lane <n>", after "device <d> " with several
  std::vector<shown_span> spans;  // in time order, not overlapping
};

struct thread_track {
  std::uint32_t thread = 0;
  std::vector<shown_span> spans;  // node spans, by begin
};

struct gpu_track {
  std::uint32_t device = 0;
  queue_kind queue = queue_kind::compute;
  // "queue" (compute) or "transfer queue", after "device <d> " with several.
  std::string name;
  std::vector<shown_span> spans;  // by begin
};

struct trace_layout {
  std::vector<lane_track> lanes;
  std::vector<thread_track> threads;
  // The nodes' GPU spans, one track per device queue, by device and kind
  // (none without GPU timestamps).
  std::vector<gpu_track> gpu;
  // The earliest shown begin and latest end (both the recorder's epoch when
  // there is no span).
  std::chrono::steady_clock::time_point first;
  std::chrono::steady_clock::time_point last;
};

[[nodiscard]] trace_layout lay_out(const trace_recorder& trace);

// `value` with `decimals` digits after the point.
[[nodiscard]] std::string fixed(double value, int decimals = 1);

// Microseconds from `from` to `to`, as a double.
[[nodiscard]] double micros(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to);

// `text` with XML's special characters escaped (JSON's: ferrum/json_text.hpp).
[[nodiscard]] std::string xml_escaped(std::string_view text);

}  // namespace ferrum::detail
