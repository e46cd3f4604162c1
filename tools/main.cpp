// tools/main.cpp — the `ferrum` command: `compile`, `run`, `help [COMMAND]`,
// `--version` (docs/interfaces.md, "The ferrum command").
//
// Every failure is one stderr line `ferrum: error: <code>: <message>` and an
// exit status from exit_code.hpp; command-line mistakes are `usage_error`
// with exit status 1, whatever status CLI11 gives them.

#include "compile_command.hpp"
#include "exit_code.hpp"
#include "report_error.hpp"
#include "run_command.hpp"

#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <map>
#include <string>

#ifndef FERRUM_VERSION
#error "FERRUM_VERSION must be defined (tools/CMakeLists.txt passes PROJECT_VERSION)"
#endif

namespace {

using ferrum::tools::command_error;
using ferrum::tools::exit_code;

int status(exit_code code) { return static_cast<int>(code); }

int usage_error(std::string message) {
  ferrum::tools::report_error(command_error::usage(std::move(message)), false, std::cout, std::cerr);
  return status(exit_code::usage_or_io);
}

int run(int argc, char** argv) {
  CLI::App app{"ferrum: compiles GPU submission plans and runs them through the scheduler.", "ferrum"};
  app.set_version_flag("--version", "ferrum " FERRUM_VERSION);
  // At most one command, so that `help compile` reads `compile` as help's
  // argument. At least one is checked after parsing: CLI11 checks that before
  // unexpected arguments, and `ferrum --bogus` should name --bogus.
  app.require_subcommand(0, 1);
  // One line in the command's error format; `ferrum help` says the rest.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return ferrum::tools::error_line(command_error::usage(std::string(e.what()) + " (see 'ferrum help')")) + '\n';
  });

  std::map<std::string, CLI::App*> commands;

  ferrum::tools::compile_options compile_options;
  CLI::App* compile =
      app.add_subcommand("compile", "Compile a ferrum.plan.v1 or ferrum.plan.v2 plan and print its layouts.");
  compile->add_option("PLAN", compile_options.plan_path, "The plan file (ferrum.plan.v1 or v2 JSON).")->required();
  compile->add_flag("--json", compile_options.json, "Print a ferrum.compiled.v1 document instead of a table.");
  compile
      ->add_option("--out", compile_options.out_path,
                   "Also write the compiled program to FILE (ferrum.program.v1), for 'ferrum run --program'.")
      ->type_name("FILE");
  compile
      ->add_option("--graph", compile_options.graph_path,
                   "Also draw the compiled plan to FILE as SVG: per bucket its nodes and dependencies, where "
                   "barriers fall, each resource's users and lifetime, and which resources alias.")
      ->type_name("FILE");
  commands["compile"] = compile;

  ferrum::tools::run_options run_options;
  CLI::App* run_command =
      app.add_subcommand("run", "Run waves of checking encoders through the scheduler on a device and report.");
  run_command->add_option("PLAN", run_options.plan_path, "The plan file (ferrum.plan.v1 or v2 JSON).")->required();
  run_command
      ->add_option("--program", run_options.program_path,
                   "Load the plan's compiled program from FILE (written by 'ferrum compile --out') instead of "
                   "compiling; it is checked against the plan.")
      ->type_name("FILE");
  run_command->add_option("--device", run_options.device, "The device: null (a CPU thread, the default) or vulkan.");
  // Checks the text before CLI11 converts it: an unsigned option would take
  // "-3" as 2^64 - 3.
  const CLI::Validator whole_number(
      [](std::string& text) -> std::string {
        if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) return {};
        return "'" + text + "' is not a whole number";
      },
      "");
  run_command
      ->add_option("--waves", run_options.waves,
                   "Waves to run, 1.." + std::to_string(ferrum::tools::max_waves) + " (default " +
                       std::to_string(run_options.waves) + ").")
      ->check(whole_number);
  run_command
      ->add_option(
          "--threads", run_options.threads,
          "Executor threads, also encoder tasks per wave (default " + std::to_string(run_options.threads) + " here).")
      ->check(whole_number);
  run_command
      ->add_option("--devices", run_options.devices,
                   "Devices the scheduler runs over, 1.." + std::to_string(ferrum::tools::max_devices) +
                       " (default 1): waves go to whichever device's lane frees first.")
      ->check(whole_number);
  run_command->add_option("--seed", run_options.seed, "Seeds every fault decision (default 1).")->check(whole_number);
  run_command->add_option("--fault", run_options.fault_text,
                          "Faults to inject: comma-separated kind:probability, kinds delay, hang, lost, encoder, "
                          "cancel (see below).");
  run_command
      ->add_option("--fence-timeout", run_options.fence_timeout_ms,
                   "Milliseconds a wave awaits its fence before it fails and its lane is quarantined "
                   "(default 5000).")
      ->check(whole_number);
  run_command->add_flag("--json", run_options.json, "Print a ferrum.run.v1 document instead of a summary.");
  run_command->add_option("--trace", run_options.trace_path,
                          "Write the waves' spans as Chrome trace-event JSON (Perfetto, chrome://tracing).");
  run_command->add_option("--timeline", run_options.timeline_path,
                          "Write the waves' spans as an SVG timeline: lanes as rows, phases as coloured bars.");
  run_command->add_flag("--gpu-timestamps", run_options.gpu_timestamps,
                        "Time every node on the GPU: GPU time per wave in the report, a GPU track in the trace.");
  run_command->add_flag("--reorder", run_options.reorder,
                        "Null device: run what no barrier orders last to first, as a GPU may, so that a missing "
                        "barrier shows as a violation.");
  run_command->add_flag("--split-barriers", run_options.split_barriers,
                        "On one queue, wait for an event the producer set instead of a barrier where a producer "
                        "runs two nodes (levels) before its consumer, so that the nodes between are not drained.");
  run_command->add_flag(
      "--discrete-layout", run_options.discrete_layout,
      "Lay memory out as on a discrete GPU, whatever the device: device memory unmapped, upload and "
      "readback memory copied by staging lists. Device faults (delay, hang, lost) are refused with it.");
  run_command->footer(
      "Waves go to the plan's buckets in turn, at most two per lane outstanding; nodes run on their plan's\n"
      "queue. For each resource a node lists (its slot and its workspace resources), the device checks what it\n"
      "must still hold (the pattern of the last writer it runs after in the wave; for a persistent resource,\n"
      "the lane's previous wave's), then, where the dependency graph orders the node against every other user\n"
      "of the resource, the node writes a pattern unique to (wave, node, resource) and the device checks it.\n"
      "Transfer nodes copy; a later compute node checks their snapshots. A word that is not what the layout\n"
      "says is a violation; what cannot be checked is reported as unchecked.\n"
      "\n"
      "Faults (probabilities per wave, decided by --seed alone):\n"
      "  delay    null device: the submission finishes up to min(1 ms, half the fence timeout) late. It cannot\n"
      "           fail a wave; it surfaces as that wave's fence arriving at least that late.\n"
      "  hang     null device: the submission, and all behind it, stalls for five fence timeouts; surfaces as\n"
      "           its wave's fence_timeout (waves stalled behind it fail too, lanes come back afterwards).\n"
      "  lost     null device: the device is lost at the submission; its wave and all later ones fail.\n"
      "  encoder  one encoder of the wave throws; surfaces as the wave's encoder_failed.\n"
      "  cancel   the wave is cancelled before it starts or from inside one of its encoders; surfaces as\n"
      "           operation_aborted.\n"
      "\n"
      "Exit status: 0 ok; 1 usage or I/O error, or no device; 2 the plan was rejected; 3 the run failed: a\n"
      "violation, an image layout error (null device), a fault that did not surface, or a wave failing for\n"
      "a reason no injected fault explains.\n");
  commands["run"] = run_command;

  std::string topic;
  CLI::App* help = app.add_subcommand("help", "Print help for ferrum or one of its commands.");
  help->add_option("COMMAND", topic, "The command to describe.");
  commands["help"] = help;

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every parse failure is a usage error.
    return app.exit(e) == 0 ? status(exit_code::ok) : status(exit_code::usage_or_io);
  }

  if (compile->parsed()) return status(ferrum::tools::run_compile(compile_options, std::cout, std::cerr));
  if (run_command->parsed()) {
    run_options.fault_given = run_command->count("--fault") > 0;
    return status(ferrum::tools::run_run(std::move(run_options), std::cout, std::cerr));
  }
  if (!help->parsed()) return usage_error("a command is required (see 'ferrum help')");

  if (topic.empty()) {
    // Not app.help(): that would describe the selected subcommand, `help`.
    std::cout << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
    return status(exit_code::ok);
  }
  const auto command = commands.find(topic);
  if (command == commands.end()) return usage_error("unknown command '" + topic + "' (see 'ferrum help')");
  std::cout << command->second->help(app.get_name());
  return status(exit_code::ok);
}

}  // namespace

int main(int argc, char** argv) {
  // Nothing a user types may end in std::terminate: a failure that escapes the
  // commands (out of memory on a huge plan) is still reported as one line.
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << ferrum::tools::error_line(command_error{"internal_error", e.what(), {}}) << '\n';
  } catch (...) {
    std::cerr << ferrum::tools::error_line(command_error{"internal_error", "unknown exception", {}}) << '\n';
  }
  return status(exit_code::usage_or_io);
}
