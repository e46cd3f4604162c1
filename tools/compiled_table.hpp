// tools/compiled_table.hpp — the human-readable report of a compiled program:
// what `ferrum compile PLAN` prints without `--json`.
//
//   ferrum::tools::write_compiled_table(std::cout, *program, plan);
//
// The plan hash, lanes and admitted bytes, then per bucket (in id order) a
// table of its pools with their projections, its program binding's slots,
// and the barriers a wave records between its nodes (how many, and the first
// few nodes whose list opens with one). For people; scripts read `--json`
// (compiled_json.hpp).
#pragma once

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/plan.hpp"

#include <ostream>

namespace ferrum::tools {

// Writes the report of `program`, compiled from `p` (which names its nodes),
// to `out`.
void write_compiled_table(std::ostream& out, const compiled_program& program, const plan& p);

}  // namespace ferrum::tools
