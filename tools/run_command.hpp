// tools/run_command.hpp — `ferrum run PLAN ...`: compiles a plan, runs N
// waves of checking encoders through the scheduler on a device, with faults
// injected on request, and reports what happened (docs/interfaces.md, "The
// ferrum command" and "ferrum.run.v1").
//
//   ferrum::tools::run_options options;
//   options.plan_path = "examples/plans/multi_bucket.json";
//   options.waves = 300;
//   return static_cast<int>(ferrum::tools::run_run(options, std::cout, std::cerr));
#pragma once

#include "exit_code.hpp"
#include "run_options.hpp"

#include <ostream>

namespace ferrum::tools {

// The environment variables of the checks' self-tests: `ferrum run` with
// FERRUM_RUN_CORRUPT_WAVE=K writes a stale pattern into wave K's first slot,
// with FERRUM_RUN_CORRUPT_WORKSPACE_WAVE=K into wave K's first workspace
// resource that a later node checks (checks_self_test,
// checking_encoder.hpp); the device-side checks must count them as
// violations (exit 3). For tests of the checks themselves; not part of the
// command's interface.
inline constexpr const char* corrupt_wave_variable = "FERRUM_RUN_CORRUPT_WAVE";
inline constexpr const char* corrupt_workspace_wave_variable = "FERRUM_RUN_CORRUPT_WORKSPACE_WAVE";

// Runs `options` (checked with check_run_options first). The summary or the
// `ferrum.run.v1` document goes to `out`, errors to `err` (one line) and,
// with `json`, those that end the command before the run as an error object
// to `out`. Returns exit_code::ok; usage_or_io (bad options: usage_error;
// the plan file cannot be read: io_error; the device cannot be made or
// refuses what the run needs: its code); plan_rejected (parse, compile, or a
// plan the scheduler cannot run: no_binding_layout); run_failed (violations,
// a fault that did not surface, an unexplained failure: `run_failed` on
// stderr, the report on stdout as usual).
[[nodiscard]] exit_code run_run(run_options options, std::ostream& out, std::ostream& err);

}  // namespace ferrum::tools
