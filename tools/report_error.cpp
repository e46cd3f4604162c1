#include "report_error.hpp"

#include "json_output.hpp"

namespace ferrum::tools {
namespace {

void append_escaped(std::string& out, const std::string& text) {
  static constexpr char hex[] = "0123456789abcdef";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += hex[byte >> 4];
      out += hex[byte & 0xf];
    } else {
      out += c;
    }
  }
}

}  // namespace

command_error command_error::from(const ferrum::error& e) {
  // The same pieces as ferrum::error::what(), kept apart for the JSON object.
  std::string message = e.code.message();
  if (!e.detail.empty()) {
    message += ": ";
    message += e.detail;
  }
  return {error_code_name(e.code), std::move(message), e.path};
}

command_error command_error::io(std::string message) { return {"io_error", std::move(message), {}}; }

command_error command_error::usage(std::string message) { return {"usage_error", std::move(message), {}}; }

std::string error_line(const command_error& e) {
  std::string line = "ferrum: error: ";
  append_escaped(line, e.code);
  line += ": ";
  append_escaped(line, e.message);
  if (!e.path.empty()) {
    line += " (at ";
    append_escaped(line, e.path);
    line += ')';
  }
  return line;
}

nlohmann::ordered_json error_json(const command_error& e) {
  nlohmann::ordered_json object;
  object["code"] = e.code;
  object["message"] = e.message;
  object["path"] = e.path;
  nlohmann::ordered_json document;
  document["error"] = std::move(object);
  return document;
}

void report_error(const command_error& e, bool json, std::ostream& out, std::ostream& err) {
  if (json) write_json(out, error_json(e));
  err << error_line(e) << '\n' << std::flush;
}

}  // namespace ferrum::tools
