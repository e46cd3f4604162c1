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

// A v2 plan of compute nodes: node/0 writes resource/own.0, `gap` nodes
// write their own, and the last reads resource/own.0 after node/0 — a
// consumer `gap` + 1 nodes after its producer: an event on one queue with
// split barriers. Nothing is culled: the nodes between write what nothing
// reads.
inline std::string split_plan_json(std::size_t gap) {
  const auto storage = std::string(R"("storage": {"allocator": "linear-arena", "view": "contiguous", "contract": ")") +
                       std::string(64, 'a') + "\"}";
  std::string nodes;
  std::string resources;
  for (std::size_t n = 0; n < gap + 2; ++n) {
    const std::string id = "node/" + std::to_string(n);
    const std::string args = "resource/args." + std::to_string(n);
    const bool reads = n == gap + 1;
    const std::string own = "resource/own." + std::to_string(reads ? 0 : n);
    nodes += std::string(n == 0 ? "" : ",\n") + R"({"id": ")" + id + R"(", "resources": [")" + args + R"(", ")" + own +
             R"("], "binding": ")" + args + R"(", )" + (reads ? R"("after": ["node/0"], )" : "") + R"("access": {")" +
             args + R"(": "read", ")" + own + R"(": ")" + (reads ? "read" : "write") + R"("}})";
    resources += std::string(n == 0 ? "" : ",\n") + R"({"id": ")" + args +
                 R"(", "pool": "pool/bindings", "kind": "binding", "node": ")" + id +
                 R"(", "demand": {"fixed": 64}, "alignment": 64, "lifetime": "invocation", "usage": "binding", )"
                 R"("element": "u8", )" +
                 storage + "}";
    if (!reads)
      resources += R"(,
{"id": ")" + own +
                   R"(", "pool": "pool/own", "kind": "workspace", "demand": {"fixed": 256}, "alignment": 256, )"
                   R"("lifetime": "invocation", "usage": "storage", "element": "f32", )" +
                   storage + "}";
  }
  return R"({"format": "ferrum.plan.v2", "cull": false, "nodes": [)" + nodes + R"(], "resources": [)" + resources +
         R"(], "buckets": [{"class": "step", "capacity": [1, 1, 1], "budgets": [{"pool": "pool/bindings", "min": 0, )"
         R"("max": 4096}, {"pool": "pool/own", "min": 0, "max": 65536}]}], "lanes": 1, "budget_bytes": 1048576})";
}

}  // namespace cli_test
