// tools/report_error.hpp — how the `ferrum` command reports an error: one
// stderr line `ferrum: error: <code>: <message>[ (at <path>)]`, and with
// `--json` also `{"error": {"code", "message", "path"}}` on stdout
// (docs/interfaces.md, "The ferrum command").
//
//   if (!program) {
//     ferrum::tools::report_error(ferrum::tools::command_error::from(program.error()), json, std::cout, std::cerr);
//     return ...;
//   }
#pragma once

#include "ferrum/error.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

namespace ferrum::tools {

// An error as the command reports it.
struct command_error {
  // The stable snake_case code name (`invalid_alignment`, `io_error`).
  std::string code;
  // What was wrong, with its detail; neither code nor path.
  std::string message;
  // The JSON pointer of the offending element; "" where there is none.
  std::string path;

  // A library error: its code name, `<code message>[: <detail>]`, its path.
  [[nodiscard]] static command_error from(const ferrum::error& e);
  // An I/O error, code `io_error` (the library has no errc for I/O).
  [[nodiscard]] static command_error io(std::string message);
  // A command-line usage error, code `usage_error`.
  [[nodiscard]] static command_error usage(std::string message);
};

// `ferrum: error: <code>: <message>[ (at <path>)]` without a newline; for a
// library error this is `"ferrum: error: " + e.what()`. Control characters
// (which an invalid id quoted in the message may hold) are written as `\xNN`
// so that the report stays one line.
[[nodiscard]] std::string error_line(const command_error& e);

// `{"error": {"code": ..., "message": ..., "path": ...}}`.
[[nodiscard]] nlohmann::ordered_json error_json(const command_error& e);

// Writes error_line(e) to `err`, and with `json` error_json(e) to `out`.
void report_error(const command_error& e, bool json, std::ostream& out, std::ostream& err);

}  // namespace ferrum::tools
