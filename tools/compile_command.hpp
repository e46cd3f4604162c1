// tools/compile_command.hpp — `ferrum compile PLAN [--json] [--out FILE]
// [--graph FILE.svg]`: reads a plan file, runs the whole cold path, prints the
// compiled program, with --out saves it as a ferrum.program.v1 file and with
// --graph draws it (graph_svg.hpp).
//
//   ferrum::tools::compile_options options{"examples/plans/two_nodes.json", true};
//   return static_cast<int>(ferrum::tools::run_compile(options, std::cout, std::cerr));
#pragma once

#include "exit_code.hpp"

#include <ostream>
#include <string>

namespace ferrum::tools {

struct compile_options {
  // The plan file to compile.
  std::string plan_path;
  // Print a `ferrum.compiled.v1` document (and errors as JSON) instead of a table.
  bool json = false;
  // --out FILE: also write the compiled program there (ferrum.program.v1);
  // empty: not written.
  std::string out_path;
  // --graph FILE: also draw the compiled plan there as SVG (per bucket its
  // nodes, dependencies, barriers, resources' lifetimes and aliasing);
  // empty: not drawn.
  std::string graph_path;
};

// Compiles the plan at `options.plan_path`; the report goes to `out`, errors
// to `err` (one line) and, with `json`, as an error object to `out` too.
// With `out_path`, also saves the program there and says so (the table's
// last line, the document's `program_file`); with `graph_path`, also draws
// it there (the table says so on its last line). Returns exit_code::ok,
// usage_or_io (the plan cannot be read or the program or graph file written:
// `io_error`; Graphviz cannot lay out or render the drawing: `graph_failed`)
// or plan_rejected (parse_plan or compile failed: that error's code and
// path).
[[nodiscard]] exit_code run_compile(const compile_options& options, std::ostream& out, std::ostream& err);

}  // namespace ferrum::tools
