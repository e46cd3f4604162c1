// both_parsers.hpp — parses a plan with the fast parser and the reference
// parser (plan_json.hpp), requiring that they agree.
//
//   const ferrum::plan p = both_parsers::parsed(text);
//   const ferrum::error e = both_parsers::rejection(bad_text);
//   const ferrum::error f = both_parsers::refusal(text_compile_refuses);
#pragma once

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/plan_json.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace both_parsers {

// Requires that both accept `text` and read plans of one hash, with the
// same declared accesses and ranges.
inline ferrum::plan parsed(const std::string& text) {
  auto fast = ferrum::parse_plan(text);
  REQUIRE(fast.has_value());
  auto reference = ferrum::detail::parse_plan_reference(text);
  REQUIRE(reference.has_value());
  CHECK(ferrum::hash_plan(*reference).value() == ferrum::hash_plan(*fast).value());
  for (std::size_t i = 0; i < fast->nodes.size(); ++i) {
    CHECK(reference->nodes[i].access == fast->nodes[i].access);
    CHECK(reference->nodes[i].ranges == fast->nodes[i].ranges);
  }
  return std::move(*fast);
}

// Requires that both reject `text` with one code and path; the fast
// parser's error.
inline ferrum::error rejection(const std::string& text) {
  auto p = ferrum::parse_plan(text);
  REQUIRE_FALSE(p.has_value());
  auto reference = ferrum::detail::parse_plan_reference(text);
  REQUIRE_FALSE(reference.has_value());
  CHECK(reference.error().code == p.error().code);
  CHECK(reference.error().path == p.error().path);
  return p.error();
}

// The error `text` is refused with: by the parsers (both alike) where they
// see it, else by compile (the rules of pools, buckets and images).
inline ferrum::error refusal(const std::string& text) {
  if (!ferrum::parse_plan(text)) return rejection(text);
  auto program = ferrum::compile(ferrum::parse_plan(text).value());
  REQUIRE_FALSE(program.has_value());
  return program.error();
}

}  // namespace both_parsers
