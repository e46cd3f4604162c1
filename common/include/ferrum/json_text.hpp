// ferrum/json_text.hpp — text as a JSON string's contents: what the plan
// writer (write_plan_json) and the Chrome trace write.
//
//   out += '"' + ferrum::json_escaped(id) + '"';
#pragma once

#include <string>
#include <string_view>

namespace ferrum {

// `text` with '"' and '\' escaped and control characters as \u00XX.
[[nodiscard]] std::string json_escaped(std::string_view text);

}  // namespace ferrum
