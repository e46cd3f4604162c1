// The order across queues a plan must state (docs/design.md, "Order across
// queues"): two nodes on different queues that touch one resource, one
// writing it or the two needing an image in different layouts, are refused
// unless a path of `after` joins them; reads in one layout need none.
// Refused alike by parse_plan and compile (load_compiled_program:
// tests/binding/compiled_program_file_test.cpp).
#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/plan_json.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>

using namespace ferrum;

namespace {

nlohmann::json source_plan(std::string_view path) {
  std::ifstream in(std::string(FERRUM_SOURCE_DIR) + "/" + std::string(path));
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

nlohmann::json& node_of(nlohmann::json& doc, std::string_view id) {
  for (auto& n : doc["nodes"])
    if (n["id"] == id) return n;
  FAIL("no node " << id);
  return doc;
}

// The plan `doc` holds, its rules left to compile.
plan parsed(const nlohmann::json& doc) {
  auto p = parse_plan(doc.dump(), plan_checks::schema_only);
  REQUIRE(p.has_value());
  return std::move(*p);
}

// compile's error for `doc`, which parse_plan (validating) must give too.
error refusal(const nlohmann::json& doc) {
  auto program = compile(parsed(doc));
  REQUIRE_FALSE(program.has_value());
  const auto validated = parse_plan(doc.dump());
  REQUIRE_FALSE(validated.has_value());
  CHECK(validated.error().code == program.error().code);
  CHECK(validated.error().path == program.error().path);
  return program.error();
}

}  // namespace

TEST_CASE("queue order: a plan whose accesses across queues are ordered compiles", "[binding][queues]") {
  // two_queues_access.json: node/readback (transfer) and node/shade (compute)
  // both read resource/state with no path between them, which is no hazard.
  const nlohmann::json doc = source_plan("examples/plans/two_queues_access.json");
  CHECK(compile(parsed(doc)).has_value());
}

TEST_CASE("queue order: a write and a read of a buffer on two queues with no path are refused", "[binding][queues]") {
  nlohmann::json doc = source_plan("examples/plans/two_queues_access.json");
  // node/readback (transfer) reads resource/state, which node/simulate
  // (compute) writes: without its `after`, either may run first.
  node_of(doc, "node/readback")["after"] = nlohmann::json::array();
  // node/compose still waits for node/readback, and node/readback for
  // nothing, so node/upload's staging (read by node/simulate only) is fine.
  const error e = refusal(doc);
  CHECK(e == errc::unordered_hazard);
  CHECK(e.path == "/nodes/2/resources/1");
  INFO(e.detail);
  CHECK(e.detail.find("'resource/state'") != std::string::npos);
  CHECK(e.detail.find("'node/simulate' (queue 'compute', 'write')") != std::string::npos);
  CHECK(e.detail.find("'node/readback' (queue 'transfer', 'read')") != std::string::npos);
}

TEST_CASE("queue order: a path through a node of either queue orders two uses", "[binding][queues]") {
  nlohmann::json doc = source_plan("examples/plans/two_queues_access.json");
  // node/compose (compute) reads resource/readback, written by node/readback
  // (transfer): after node/shade alone, which runs after node/readback.
  node_of(doc, "node/shade")["after"] = {"node/simulate", "node/readback"};
  node_of(doc, "node/compose")["after"] = {"node/shade"};
  CHECK(compile(parsed(doc)).has_value());
  // Without node/shade's wait, nothing orders them.
  node_of(doc, "node/shade")["after"] = {"node/simulate"};
  const auto refused = compile(parsed(doc));
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error() == errc::unordered_hazard);
  CHECK(refused.error().path == "/nodes/4/resources/1");
}

TEST_CASE("queue order: two reads of an image in different layouts on two queues are refused",
          "[binding][queues][image]") {
  // images.json: node/keep copies image/resolved (transfer-src) and
  // node/tonemap reads it as storage (general), both after node/taa only.
  // On two queues the layout each needs is a write the other may overlap.
  nlohmann::json valid = source_plan("examples/plans/images.json");
  node_of(valid, "node/keep")["queue"] = "transfer";
  node_of(valid, "node/tonemap")["after"] = {"node/taa", "node/keep"};
  CHECK(compile(parsed(valid)).has_value());
  nlohmann::json doc = valid;
  node_of(doc, "node/tonemap")["after"] = {"node/taa"};
  const error e = refusal(doc);
  CHECK(e == errc::unordered_hazard);
  CHECK(e.path == "/nodes/5/resources/0");
  INFO(e.detail);
  CHECK(e.detail.find("image 'image/resolved'") != std::string::npos);
  CHECK(e.detail.find("'node/keep' (queue 'transfer', 'transfer-src')") != std::string::npos);
  // On one queue, plan order and the derived barriers order them.
  node_of(doc, "node/keep")["queue"] = "compute";
  CHECK(compile(parsed(doc)).has_value());
}
