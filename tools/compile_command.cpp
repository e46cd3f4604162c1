#include "compile_command.hpp"

#include "compiled_json.hpp"
#include "compiled_table.hpp"
#include "read_text_file.hpp"
#include "report_error.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/plan_json.hpp"

namespace ferrum::tools {

exit_code run_compile(const compile_options& options, std::ostream& out, std::ostream& err) {
  const boost::system::result<std::string> text = read_text_file(options.plan_path);
  if (!text) {
    report_error(command_error::io("cannot read '" + options.plan_path + "': " + text.error().message()), options.json,
                 out, err);
    return exit_code::usage_or_io;
  }

  result<plan> parsed = parse_plan(*text);
  if (!parsed) {
    report_error(command_error::from(parsed.error()), options.json, out, err);
    return exit_code::plan_rejected;
  }
  const result<compiled_program> program = compile(*parsed);
  if (!program) {
    report_error(command_error::from(program.error()), options.json, out, err);
    return exit_code::plan_rejected;
  }

  if (options.json)
    write_compiled_json(out, *program);
  else
    write_compiled_table(out, *program);
  return exit_code::ok;
}

}  // namespace ferrum::tools
