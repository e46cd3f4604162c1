#include "trace_output.hpp"

#include <algorithm>

namespace ferrum::tools {
namespace {

// About 64 MiB of spans at most.
constexpr std::size_t max_spans = std::size_t{1} << 20;

bool open_for_writing(std::ofstream& file, const std::string& path) {
  if (path.empty()) return true;
  file.open(path, std::ios::out | std::ios::trunc);
  return file.is_open();
}

}  // namespace

boost::system::result<std::unique_ptr<trace_output>, std::string> trace_output::open(const run_options& options,
                                                                                     std::size_t spans) {
  if (options.trace_path.empty() && options.timeline_path.empty()) return std::unique_ptr<trace_output>();
  std::unique_ptr<trace_output> out(new trace_output(spans));
  out->trace_path_ = options.trace_path;
  out->timeline_path_ = options.timeline_path;
  if (!open_for_writing(out->trace_file_, out->trace_path_)) return "cannot write '" + out->trace_path_ + "'";
  if (!open_for_writing(out->timeline_file_, out->timeline_path_)) return "cannot write '" + out->timeline_path_ + "'";
  return out;
}

std::string trace_output::write(const plan& p) {
  if (!trace_path_.empty()) {
    write_chrome_trace(trace_file_, recorder, p);
    trace_file_.close();
    if (!trace_file_) return "cannot write '" + trace_path_ + "'";
  }
  if (!timeline_path_.empty()) {
    write_timeline_svg(timeline_file_, recorder, p);
    timeline_file_.close();
    if (!timeline_file_) return "cannot write '" + timeline_path_ + "'";
  }
  return {};
}

std::size_t trace_spans_for(std::uint64_t waves, std::size_t nodes, bool gpu) noexcept {
  const std::uint64_t per_wave = wave_phase_count + nodes * (gpu ? 2 : 1);
  if (waves > max_spans / per_wave) return max_spans;
  return std::max<std::size_t>(static_cast<std::size_t>(waves * per_wave), 1);
}

}  // namespace ferrum::tools
