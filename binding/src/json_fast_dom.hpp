// json_fast_dom — the plan loader's fast parse: simdjson's DOM, then the
// checks simdjson does not make.
//
// simdjson parses at about a gigabyte a second but keeps the last of
// duplicate keys, nests to 1024 levels and reports errors without a byte, so
// after it accepts a text a walk in document order rejects duplicate keys and
// nesting deeper than max_plan_json_depth exactly as the reference parse
// (json_reference_dom.hpp) would, with the same pointers. Where simdjson
// refuses a text, or the text may hold the number -0 (which simdjson reads as
// the integer 0, the reference as a negative number), it declines, and
// parse_plan takes the reference parse, which names the error by its byte.
#pragma once

#include <simdjson.h>

#include <optional>
#include <string_view>

namespace ferrum::detail {

// The root of `text`'s DOM, held by `parser` (valid until its next parse);
// nullopt where the reference parse must decide. Throws `rejection`
// (plan_rejection.hpp) with duplicate_key or json_too_deep.
[[nodiscard]] std::optional<simdjson::dom::element> parse_fast_dom(simdjson::dom::parser& parser,
                                                                   std::string_view text);

}  // namespace ferrum::detail
