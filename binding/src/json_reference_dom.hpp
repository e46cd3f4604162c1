// json_reference_dom — the plan loader's reference parse: nlohmann's parser
// and a DOM builder of ours, linear in the text.
//
// It names every syntax error by its byte and rejects duplicate keys and
// nesting deeper than max_plan_json_depth with the pointer of the offending
// element, in the order they appear. parse_plan uses it where the fast parse
// (json_fast_dom.hpp) declines a text, so it is the loader's definition of
// what a text means; the tests and the fuzzer compare the two.
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

namespace ferrum::detail {

// Parses `text`; throws `rejection` (plan_rejection.hpp) with json_syntax,
// duplicate_key, json_too_deep or number_out_of_range (a literal beyond a
// double's range).
[[nodiscard]] nlohmann::json parse_reference_dom(std::string_view text);

}  // namespace ferrum::detail
