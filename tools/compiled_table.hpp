// tools/compiled_table.hpp — the human-readable report of a compiled program:
// what `ferrum compile PLAN` prints without `--json`.
//
//   ferrum::tools::write_compiled_table(std::cout, *program);
//
// The plan hash, lanes and admitted bytes, then per bucket (in id order) a
// table of its pools with their projections, and its program binding's slots.
// For people; scripts read `--json` (compiled_json.hpp).
#pragma once

#include "ferrum/binding/compiled_program.hpp"

#include <ostream>

namespace ferrum::tools {

// Writes the report of `program` to `out`.
void write_compiled_table(std::ostream& out, const compiled_program& program);

}  // namespace ferrum::tools
