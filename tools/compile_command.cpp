#include "compile_command.hpp"

#include "compiled_json.hpp"
#include "compiled_table.hpp"
#include "graph_svg.hpp"
#include "plan_picture.hpp"
#include "read_text_file.hpp"
#include "report_error.hpp"

#include <fstream>
#include <optional>

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/compiled_program_file.hpp"
#include "ferrum/binding/plan_json.hpp"

namespace ferrum::tools {
namespace {

// Writes `size` bytes at `data` to the file at `path`, replacing it; whether
// every byte was written.
bool write_file(const std::string& path, const char* data, std::size_t size) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(data, static_cast<std::streamsize>(size));
  file.close();
  return static_cast<bool>(file);
}

}  // namespace

exit_code run_compile(const compile_options& options, std::ostream& out, std::ostream& err) {
  const boost::system::result<std::string> text = read_text_file(options.plan_path);
  if (!text) {
    report_error(command_error::io("cannot read '" + options.plan_path + "': " + text.error().message()), options.json,
                 out, err);
    return exit_code::usage_or_io;
  }

  // compile validates the plan (the same errors, reported the same way), so
  // the parse leaves it to compile rather than index and validate it twice.
  result<plan> parsed = parse_plan(*text, plan_checks::schema_only);
  if (!parsed) {
    report_error(command_error::from(parsed.error()), options.json, out, err);
    return exit_code::plan_rejected;
  }
  const result<compiled_program> program = compile(*parsed);
  if (!program) {
    report_error(command_error::from(program.error()), options.json, out, err);
    return exit_code::plan_rejected;
  }

  std::size_t written = 0;
  if (!options.out_path.empty()) {
    const result<std::vector<std::byte>> bytes = save_compiled_program(*program, *parsed);
    if (!bytes) {
      report_error(command_error::from(bytes.error()), options.json, out, err);
      return exit_code::plan_rejected;
    }
    if (!write_file(options.out_path, reinterpret_cast<const char*>(bytes->data()), bytes->size())) {
      report_error(command_error::io("cannot write '" + options.out_path + "'"), options.json, out, err);
      return exit_code::usage_or_io;
    }
    written = bytes->size();
  }

  if (!options.graph_path.empty()) {
    const graph_svg drawn = draw_graph_svg(make_plan_picture(*program, *parsed));
    if (!drawn.failure.empty()) {
      report_error(command_error{"graph_failed", "cannot draw '" + options.graph_path + "': " + drawn.failure, {}},
                   options.json, out, err);
      return exit_code::usage_or_io;
    }
    if (!write_file(options.graph_path, drawn.svg.data(), drawn.svg.size())) {
      report_error(command_error::io("cannot write '" + options.graph_path + "'"), options.json, out, err);
      return exit_code::usage_or_io;
    }
  }

  if (options.json) {
    std::optional<program_file_summary> file;
    if (!options.out_path.empty()) file = program_file_summary{options.out_path, written};
    write_compiled_json(out, *program, *parsed, file);
  } else {
    write_compiled_table(out, *program, *parsed);
    if (!options.out_path.empty())
      out << "\nprogram   written to " << options.out_path << " (" << written << " bytes, ferrum.program.v1)\n";
    if (!options.graph_path.empty()) out << "\ngraph     written to " << options.graph_path << " (SVG)\n";
  }
  return exit_code::ok;
}

}  // namespace ferrum::tools
