// write_chrome_trace: the Chrome trace-event JSON of a trace.
#include "ferrum/json_text.hpp"
#include "ferrum/scheduler/trace.hpp"
#include "trace_layout.hpp"

#include <ostream>
#include <string>

namespace ferrum {
namespace {

constexpr int lanes_pid = 1;
constexpr int threads_pid = 2;
constexpr int gpu_pid = 3;

// Metadata events naming a process or thread, and fixing its order.
void name_event(std::ostream& out, const char* what, int pid, std::uint32_t tid, const std::string& name, bool& first) {
  out << (first ? "\n  " : ",\n  ") << R"({"name": ")" << what << R"(", "ph": "M", "pid": )" << pid << R"(, "tid": )"
      << tid << R"(, "args": {"name": ")" << json_escaped(name) << R"("}})";
  first = false;
}

}  // namespace

void write_chrome_trace(std::ostream& out, const trace_recorder& trace, const plan& p) {
  const detail::trace_layout layout = detail::lay_out(trace);
  out << R"({"displayTimeUnit": "ms", "traceEvents": [)";
  bool first = true;
  name_event(out, "process_name", lanes_pid, 0, "lanes", first);
  name_event(out, "process_name", threads_pid, 0, "encoder threads", first);
  if (!layout.gpu.empty()) name_event(out, "process_name", gpu_pid, 0, "gpu", first);
  const auto span_event = [&](const detail::shown_span& s, int pid, std::uint32_t tid) {
    const trace_span& span = s.span;
    // A GPU span is named after its node alone: its track says where it ran.
    std::string name(span.gpu ? "" : to_string(span.phase));
    if (span.node != trace_span::no_node) {
      if (!span.gpu) name += ' ';
      name += span.node < p.nodes.size() ? p.nodes[span.node].id.str() : std::to_string(span.node);
    }
    out << ",\n  "
        << R"({"name": ")" << json_escaped(name) << R"(", "cat": ")" << (span.gpu ? "gpu" : "wave")
        << R"(", "ph": "X", "ts": )" << detail::fixed(detail::micros(trace.epoch(), s.shown_begin), 3) << R"(, "dur": )"
        << detail::fixed(detail::micros(s.shown_begin, span.end), 3) << R"(, "pid": )" << pid << R"(, "tid": )" << tid
        << R"(, "args": {"wave": )" << span.wave << R"(, "bucket": ")"
        << json_escaped(span.bucket != nullptr ? span.bucket->str() : "") << R"(", "lane": )" << span.lane;
    if (span.node != trace_span::no_node) out << R"(, "node": )" << span.node;
    if (span.phase == wave_phase::acquire && span.node == trace_span::no_node)
      out << R"(, "waited_us": )" << detail::fixed(detail::micros(span.begin, span.end), 3);
    if (span.barrier) out << R"(, "barrier": true)";
    out << "}}";
    // A barrier point: where the node's list began, after everything before
    // it on its queue.
    if (span.barrier)
      out << ",\n  "
          << R"({"name": "barrier", "cat": "barrier", "ph": "i", "s": "t", "ts": )"
          << detail::fixed(detail::micros(trace.epoch(), s.shown_begin), 3) << R"(, "pid": )" << pid << R"(, "tid": )"
          << tid << R"(, "args": {"wave": )" << span.wave << R"(, "node": )" << span.node << "}}";
  };
  for (std::uint32_t i = 0; i < layout.lanes.size(); ++i) {
    name_event(out, "thread_name", lanes_pid, i + 1, layout.lanes[i].name, first);
    for (const auto& s : layout.lanes[i].spans) span_event(s, lanes_pid, i + 1);
  }
  for (const auto& track : layout.threads) {
    name_event(out, "thread_name", threads_pid, track.thread, "thread " + std::to_string(track.thread), first);
    for (const auto& s : track.spans) span_event(s, threads_pid, track.thread);
  }
  for (const auto& track : layout.gpu) {
    // The first device's compute queue keeps the name and thread id it had
    // before there were other queues and devices.
    const auto tid = static_cast<std::uint32_t>(1 + index_of(track.queue) + track.device * queue_kind_count);
    name_event(out, "thread_name", gpu_pid, tid, track.name, first);
    for (const auto& s : track.spans) span_event(s, gpu_pid, tid);
  }
  out << "\n]}\n";
}

}  // namespace ferrum
