// compiled_plan.hpp — a plan file parsed and compiled in the test process
// itself (ferrum::compile), so that the CLI tests hold what the built
// `ferrum` prints against what the library derives for the same plan.
//
//   const cli_test::compiled_plan c = cli_test::compile_in_process(cli_test::example_plan("history.json"));
//   CHECK(doc["buckets"][0]["barriers"]["per_wave"] == c.program.buckets[0].lane.barriers_per_wave());
#pragma once

#include "ferrum_process.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/plan_json.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace cli_test {

struct compiled_plan {
  ferrum::plan plan;
  ferrum::compiled_program program;
};

// Parses and compiles the plan file at `path` (requiring both to succeed).
inline compiled_plan compile_in_process(const std::string& path) {
  ferrum::result<ferrum::plan> parsed = ferrum::parse_plan(read_file(path));
  REQUIRE(parsed.has_value());
  ferrum::result<ferrum::compiled_program> program = ferrum::compile(*parsed);
  REQUIRE(program.has_value());
  return {std::move(*parsed), std::move(*program)};
}

// The plan indices of the nodes whose command list opens with a barrier in
// a wave of `bucket`, ascending.
inline std::vector<std::size_t> barrier_nodes(const ferrum::compiled_bucket& bucket) {
  std::vector<std::size_t> nodes;
  for (std::size_t n = 0; n < bucket.lane.barrier_before.size(); ++n)
    if (bucket.lane.barrier_before[n]) nodes.push_back(n);
  return nodes;
}

}  // namespace cli_test
