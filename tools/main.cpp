// tools/main.cpp — the `ferrum` command: `compile`, `help [COMMAND]`,
// `--version` (docs/INTERFACES.md, "The ferrum command").
//
// Every failure is one stderr line `ferrum: error: <code>: <message>` and an
// exit status from exit_code.hpp; command-line mistakes are `usage_error`
// with exit status 1, whatever status CLI11 gives them.

#include "compile_command.hpp"
#include "exit_code.hpp"
#include "report_error.hpp"

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
  CLI::App* compile = app.add_subcommand("compile", "Compile a ferrum.plan.v1 plan and print its layouts.");
  compile->add_option("PLAN", compile_options.plan_path, "The plan file (ferrum.plan.v1 JSON).")->required();
  compile->add_flag("--json", compile_options.json, "Print a ferrum.compiled.v1 document instead of a table.");
  commands["compile"] = compile;

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
