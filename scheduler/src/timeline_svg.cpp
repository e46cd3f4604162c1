// write_timeline_svg: a trace as a standalone SVG timeline.
#include "ferrum/scheduler/trace.hpp"
#include "trace_layout.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <ostream>
#include <string>

namespace ferrum {
namespace {

constexpr double label_width = 190;
constexpr double plot_width = 960;
constexpr double row_height = 22;
constexpr double bar_height = 14;
constexpr double top = 34;

// One colour per phase, in wave_phase order.
constexpr std::array<const char*, wave_phase_count> phase_colours = {"#a0a0a0", "#4e79a7", "#f28e2b",
                                                                     "#e15759", "#76b7b2", "#59a14f"};

// GPU spans (a node's commands on the queue), apart from the phases.
constexpr const char* gpu_colour = "#b07aa1";

using detail::fixed;

// A tick step of 1, 2 or 5 times a power of ten giving at most ~10 ticks.
double tick_step(double total_ms) {
  const double raw = std::max(total_ms, 1e-3) / 10;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

}  // namespace

void write_timeline_svg(std::ostream& out, const trace_recorder& trace, const plan& p) {
  const detail::trace_layout layout = detail::lay_out(trace);
  const double total_us = std::max(detail::micros(layout.first, layout.last), 1.0);
  const double scale = plot_width / total_us;  // pixels per microsecond
  const std::size_t rows = layout.lanes.size() + layout.threads.size() + layout.gpu.size();
  const double axis_y = top + static_cast<double>(rows) * row_height + 6;
  const double height = axis_y + 64;
  const double width = label_width + plot_width + 20;

  out << R"(<svg xmlns="http://www.w3.org/2000/svg" width=")" << fixed(width, 0) << R"(" height=")" << fixed(height, 0)
      << R"(" font-family="sans-serif" font-size="12">)" << '\n'
      << R"(<rect width="100%" height="100%" fill="white"/>)" << '\n'
      << R"(<text x="8" y="20" font-size="14" font-weight="bold">ferrum waves: )" << fixed(total_us / 1000, 2)
      << " ms, " << layout.lanes.size() << " lanes</text>\n";

  const auto bar = [&](double y, const detail::shown_span& s) {
    const trace_span& span = s.span;
    const double x = label_width + detail::micros(layout.first, s.shown_begin) * scale;
    const double w = std::max(detail::micros(s.shown_begin, span.end) * scale, 0.5);
    std::string title =
        "wave " + std::to_string(span.wave) + ": " + std::string(span.gpu ? "gpu" : to_string(span.phase));
    if (span.node != trace_span::no_node && span.node < p.nodes.size()) title += " " + p.nodes[span.node].id.str();
    title += ", " + fixed(detail::micros(span.begin, span.end)) + " us";
    out << R"(<rect x=")" << fixed(x, 2) << R"(" y=")" << fixed(y + (row_height - bar_height) / 2) << R"(" width=")"
        << fixed(w, 2) << R"(" height=")" << fixed(bar_height) << R"(" fill=")"
        << (span.gpu ? gpu_colour : phase_colours[static_cast<std::size_t>(span.phase)])
        // A white edge keeps back-to-back bars apart; a sliver is left whole.
        << (w >= 2 ? R"(" stroke="white" stroke-width="0.4">)" : R"(">)") << "<title>" << detail::xml_escaped(title)
        << "</title></rect>\n";
  };
  const auto row = [&](std::size_t index, const std::string& name, const auto& spans) {
    const double y = top + static_cast<double>(index) * row_height;
    if (index % 2 == 0)
      out << R"(<rect x="0" y=")" << fixed(y) << R"(" width=")" << fixed(width, 0) << R"(" height=")"
          << fixed(row_height) << R"(" fill="#f4f4f4"/>)" << '\n';
    out << R"(<text x="8" y=")" << fixed(y + row_height / 2 + 4) << R"(">)" << detail::xml_escaped(name) << "</text>\n";
    for (const auto& s : spans) bar(y, s);
  };
  std::size_t index = 0;
  for (const auto& lane : layout.lanes) row(index++, lane.name, lane.spans);
  for (const auto& thread : layout.threads) row(index++, "thread " + std::to_string(thread.thread), thread.spans);
  for (const auto& track : layout.gpu) row(index++, "gpu " + track.name, track.spans);

  // The time axis, in milliseconds from the first span.
  out << R"(<line x1=")" << fixed(label_width) << R"(" y1=")" << fixed(axis_y) << R"(" x2=")"
      << fixed(label_width + plot_width) << R"(" y2=")" << fixed(axis_y) << R"(" stroke="black"/>)" << '\n';
  const double step_ms = tick_step(total_us / 1000);
  for (double t = 0; t * 1000 <= total_us + 1e-9; t += step_ms) {
    const double x = label_width + t * 1000 * scale;
    out << R"(<line x1=")" << fixed(x, 2) << R"(" y1=")" << fixed(axis_y) << R"(" x2=")" << fixed(x, 2) << R"(" y2=")"
        << fixed(axis_y + 5) << R"(" stroke="black"/>)"
        << R"(<text x=")" << fixed(x, 2) << R"(" y=")" << fixed(axis_y + 18) << R"(" text-anchor="middle">)"
        << fixed(t, step_ms < 1 ? 2 : 0) << "</text>\n";
  }
  out << R"(<text x=")" << fixed(label_width + plot_width) << R"(" y=")" << fixed(axis_y + 32)
      << R"(" text-anchor="end">ms</text>)" << '\n';

  // The legend: one swatch per phase.
  double x = label_width;
  const double legend_y = axis_y + 40;
  for (std::size_t i = 0; i < wave_phase_count; ++i) {
    out << R"(<rect x=")" << fixed(x) << R"(" y=")" << fixed(legend_y) << R"(" width="12" height="12" fill=")"
        << phase_colours[i] << R"("/><text x=")" << fixed(x + 16) << R"(" y=")" << fixed(legend_y + 10) << R"(">)"
        << to_string(static_cast<wave_phase>(i)) << "</text>\n";
    x += 90;
  }
  if (!layout.gpu.empty())
    out << R"(<rect x=")" << fixed(x) << R"(" y=")" << fixed(legend_y) << R"(" width="12" height="12" fill=")"
        << gpu_colour << R"("/><text x=")" << fixed(x + 16) << R"(" y=")" << fixed(legend_y + 10)
        << R"(">gpu (per node)</text>)" << '\n';
  out << "</svg>\n";
}

}  // namespace ferrum
