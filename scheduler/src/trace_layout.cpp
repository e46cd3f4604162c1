// Laying a trace out in tracks, for the Chrome and SVG writers.
#include "trace_layout.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

namespace ferrum::detail {

trace_layout lay_out(const trace_recorder& trace) {
  using clock = std::chrono::steady_clock;
  trace_layout layout;
  std::map<std::tuple<std::uint32_t, std::string, std::uint32_t>, std::vector<trace_span>> by_lane;
  std::map<std::uint32_t, std::vector<trace_span>> by_thread;
  std::map<std::tuple<std::uint32_t, queue_kind>, std::vector<trace_span>> gpu;
  bool several_devices = false;
  for (const trace_span& s : trace.spans()) {
    several_devices = several_devices || s.device != 0;
    if (s.gpu) {
      gpu[{s.device, s.queue}].push_back(s);
    } else if (s.node != trace_span::no_node) {
      by_thread[s.thread].push_back(s);
    } else {
      by_lane[{s.device, s.bucket != nullptr ? s.bucket->str() : std::string("?"), s.lane}].push_back(s);
    }
  }
  const auto on_device = [&](std::uint32_t device) {
    return several_devices ? "device " + std::to_string(device) + " " : std::string();
  };
  layout.first = clock::time_point::max();
  layout.last = clock::time_point::min();
  const auto extend = [&](const shown_span& s) {
    layout.first = std::min(layout.first, s.shown_begin);
    layout.last = std::max(layout.last, s.span.end);
  };
  for (auto& [key, spans] : by_lane) {
    // One wave at a time holds a lane, and a wave's phases end in order: by
    // end time, the spans of a lane follow each other.
    std::stable_sort(spans.begin(), spans.end(),
                     [](const trace_span& a, const trace_span& b) { return a.end < b.end; });
    lane_track track{on_device(std::get<0>(key)) + std::get<1>(key) + " lane " + std::to_string(std::get<2>(key)), {}};
    clock::time_point previous_end = clock::time_point::min();
    for (const trace_span& s : spans) {
      const clock::time_point begin = std::min(std::max(s.begin, previous_end), s.end);
      track.spans.push_back({s, begin});
      extend(track.spans.back());
      previous_end = s.end;
    }
    layout.lanes.push_back(std::move(track));
  }
  const auto by_begin = [&](std::vector<trace_span>& spans, std::vector<shown_span>& shown) {
    std::stable_sort(spans.begin(), spans.end(),
                     [](const trace_span& a, const trace_span& b) { return a.begin < b.begin; });
    for (const trace_span& s : spans) {
      shown.push_back({s, s.begin});
      extend(shown.back());
    }
  };
  for (auto& [thread, spans] : by_thread) by_begin(spans, layout.threads.emplace_back(thread_track{thread, {}}).spans);
  for (auto& [key, spans] : gpu) {
    const auto [device, queue] = key;
    const std::string name = queue == queue_kind::compute ? "queue" : std::string(to_string(queue)) + " queue";
    by_begin(spans, layout.gpu.emplace_back(gpu_track{device, queue, on_device(device) + name, {}}).spans);
  }
  if (layout.first > layout.last) layout.first = layout.last = trace.epoch();
  return layout;
}

std::string fixed(double value, int decimals) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

double micros(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double, std::micro>(to - from).count();
}

std::string xml_escaped(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace ferrum::detail
