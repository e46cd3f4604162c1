// tools/json_output.hpp — how the `ferrum` command prints JSON documents.
//
//   ferrum::tools::write_json(std::cout, document);  // dump(2) and a newline
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>

namespace ferrum::tools {

// Writes `document` indented by two spaces, then a newline. Bytes that are not
// UTF-8 (an invalid id quoted in an error) are replaced by U+FFFD instead of
// throwing, so no input can make the output step fail.
void write_json(std::ostream& out, const nlohmann::ordered_json& document);

}  // namespace ferrum::tools
