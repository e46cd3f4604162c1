// ferrum/binding/plan_json.hpp — reads `ferrum.plan.v1` and `ferrum.plan.v2` plan files.
//
// Strict: malformed or truncated JSON, duplicate keys, unknown or missing
// fields, wrong types, numbers that are negative, fractional or beyond their
// range, bad ids, unknown enum strings — each is rejected with its errc and the
// JSON pointer of the offending element (`/resources/3/alignment`). A parsed
// plan is then checked by validate_plan (duplicate ids, dangling references,
// ...), so a plan that loads is structurally sound. Never crashes, aborts or
// hangs on any input.
//
//   ferrum::result<ferrum::plan> p = ferrum::parse_plan(text);
#pragma once

#include "ferrum/binding/plan.hpp"

#include <string>
#include <string_view>

namespace ferrum {

// JSON nesting deeper than this is rejected (errc::json_too_deep); a plan
// needs five levels.
inline constexpr std::size_t max_plan_json_depth = 32;

// Parses and validates a plan document. Linear in the text: simdjson reads
// it where it accepts it; a text it refuses is read again by the reference
// parser, which names the error by its byte.
[[nodiscard]] result<plan> parse_plan(std::string_view text);

// Which checks parse_plan makes after the schema's.
enum class plan_checks {
  validated,    // validate_plan as well: parse_plan(text)
  schema_only,  // none: for a caller that compiles the plan next, as compile
                // runs validate_plan itself (same errors); on a 1M-node plan
                // the second index and validation cost ~10% of
                // `ferrum compile`
};

// parse_plan, with validate_plan left to the caller when `checks` is
// schema_only: a plan returned may then hold dangling references or
// duplicate ids, so pass it to compile (or validate_plan) before anything
// else.
[[nodiscard]] result<plan> parse_plan(std::string_view text, plan_checks checks);

// The plan as a plan file of its format (`ferrum.plan.v1` or `v2`), which
// parse_plan reads back to a plan of the same hash_plan: one node, resource
// and bucket a line, in the plan's order, pools in id order, fields at their
// defaults left out where the format allows. Stable: a plan always gives
// the same text. A node's repeated listings of one resource are written as
// its access array, so they come back listed right after its first
// listing. For `ferrum compile --graph`, `ferrum run` and bug reports of a
// plan built in code (frame_builder.hpp).
[[nodiscard]] std::string write_plan_json(const plan& p);

namespace detail {
// parse_plan through the reference parser (nlohmann) only: for tests and the
// fuzzer, which check that both parses give the same plan or the same error.
[[nodiscard]] result<plan> parse_plan_reference(std::string_view text);
[[nodiscard]] result<plan> parse_plan_reference(std::string_view text, plan_checks checks);
}  // namespace detail

}  // namespace ferrum
