// example_plans.hpp — a plan of examples/plans/, parsed, for tests that
// run on one (the path relative to the source tree).
#pragma once

#include "test_namespace.hpp"

#include "ferrum/binding/plan_json.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace ferrum::test {

// The text of the file at `path` (relative to the source tree); fails the
// test when it cannot be read.
inline std::string source_text(std::string_view path) {
  std::ifstream in(std::string(FERRUM_SOURCE_DIR) + "/" + std::string(path));
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The plan at `path` (relative to the source tree), parsed; fails the test
// when it cannot be read or parsed.
inline ferrum::plan load_source_plan(std::string_view path) {
  auto parsed = ferrum::parse_plan(source_text(path));
  REQUIRE(parsed.has_value());
  return std::move(*parsed);
}

}  // namespace ferrum::test
