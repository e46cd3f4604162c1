// tools/trace_output.hpp — `ferrum run --trace FILE --timeline FILE.svg`:
// the recorder the scheduler records into, and the files it is written to.
// The files are opened before the run, so that a path that cannot be
// written fails before any wave.
//
//   auto trace = ferrum::tools::trace_output::open(options, spans);
//   if (!trace) return usage_error(trace.error());     // names the file
//   settings.trace = *trace ? &(*trace)->recorder : nullptr;
//   ... run ...
//   if (*trace) problem = (*trace)->write(plan);
#pragma once

#include "run_options.hpp"

#include "ferrum/binding/plan.hpp"
#include "ferrum/scheduler/trace.hpp"

#include <boost/system/result.hpp>

#include <cstddef>
#include <fstream>
#include <memory>
#include <string>

namespace ferrum::tools {

class trace_output {
 public:
  // Null when neither --trace nor --timeline was given; an error naming the
  // file that cannot be opened for writing.
  [[nodiscard]] static boost::system::result<std::unique_ptr<trace_output>, std::string> open(
      const run_options& options, std::size_t spans);

  // Writes the Chrome trace and/or the SVG timeline; an error naming the
  // file that could not be written, "" otherwise.
  [[nodiscard]] std::string write(const plan& p);

  trace_recorder recorder;

 private:
  explicit trace_output(std::size_t spans) : recorder(spans) {}

  std::string trace_path_;
  std::string timeline_path_;
  std::ofstream trace_file_;
  std::ofstream timeline_file_;
};

// The spans kept for a run of `waves` waves of `nodes` nodes (with `gpu`,
// each node's GPU span too): every one, up to a bound on the recorder's
// memory.
[[nodiscard]] std::size_t trace_spans_for(std::uint64_t waves, std::size_t nodes, bool gpu) noexcept;

}  // namespace ferrum::tools
