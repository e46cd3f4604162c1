// tools/exit_code.hpp — the exit statuses of the `ferrum` command
// (docs/interfaces.md, "Exit codes").
//
//   return static_cast<int>(ferrum::tools::exit_code::plan_rejected);
#pragma once

namespace ferrum::tools {

enum class exit_code : int {
  ok = 0,
  // A usage error (unknown option, missing argument) or an I/O error.
  usage_or_io = 1,
  // The plan was rejected: bad input.
  plan_rejected = 2,
  // A run failed (`ferrum run`).
  run_failed = 3,
};

}  // namespace ferrum::tools
