// tools/compiled_json.hpp — the `ferrum.compiled.v1` document of a compiled
// program (docs/interfaces.md, "ferrum.compiled.v1").
//
//   ferrum::tools::write_compiled_json(std::cout, *program, plan);
//
// Keys are in a fixed order and arrays in the program's stable order (buckets
// by id, domains by pool id, projections by resource id, slots by node index),
// so the same plan always gives byte-identical output. Beyond the format's
// fields, each domain also carries its `liveness`. Written as it goes (a
// 1M-node program's document is ~200 MB), laid out as the other reports.
#pragma once

#include "ferrum/binding/compiled_program.hpp"

#include <cstddef>
#include <optional>
#include <ostream>
#include <string_view>

namespace ferrum::tools {

// The name in the document's `format` field.
inline constexpr const char* compiled_format = "ferrum.compiled.v1";

// The program file `ferrum compile --out` wrote beside the document.
struct program_file_summary {
  std::string_view path;
  std::size_t bytes = 0;
};

// Writes the `ferrum.compiled.v1` document of `program`, compiled from `p`
// (which names its nodes: the `culled` array), and a newline; with `file`, a
// last `program_file` member names it.
void write_compiled_json(std::ostream& out, const compiled_program& program, const plan& p,
                         const std::optional<program_file_summary>& file = std::nullopt);

}  // namespace ferrum::tools
