// Tests of ferrum.plan.v2 files: nodes with `queue` and `after`, loaded by
// both parsers alike, rejected with the dependency codes at their JSON paths;
// v1 files keep refusing the new fields.
#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/plan_json.hpp"

#include "pinned_digests.hpp"
#include "plan_builder.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace ferrum;
using json = nlohmann::json;

namespace {

std::string example_text() {
  std::ifstream in(std::string(FERRUM_SOURCE_DIR) + "/examples/plans/two_queues.json");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The example with `edit` applied to its JSON.
template <class Edit>
std::string edited(Edit edit) {
  json doc = json::parse(example_text());
  edit(doc);
  return doc.dump();
}

error rejection_of(const std::string& text) {
  auto p = parse_plan(text);
  REQUIRE_FALSE(p.has_value());
  // The reference parser agrees on code and path.
  auto reference = detail::parse_plan_reference(text);
  REQUIRE_FALSE(reference.has_value());
  CHECK(reference.error().code == p.error().code);
  CHECK(reference.error().path == p.error().path);
  return p.error();
}

}  // namespace

TEST_CASE("plan_v2_json: the two-queue example loads its queues and dependencies", "[binding][plan_json]") {
  const plan p = parse_plan(example_text()).value();
  CHECK(p.format == plan_format::v2);
  REQUIRE(p.nodes.size() == 5);
  CHECK(p.nodes[0].queue == queue_kind::transfer);
  CHECK(p.nodes[0].after.empty());
  CHECK(p.nodes[1].queue == queue_kind::compute);
  CHECK(p.nodes[2].queue == queue_kind::transfer);
  REQUIRE(p.nodes[4].after.size() == 2);
  CHECK(p.nodes[4].after[0].str() == "node/readback");
  CHECK(p.nodes[4].after[1].str() == "node/shade");

  // Both parsers build the same plan, and its hash is the one
  // tools/canonical_digest.py computes from docs/canonical-encoding.md.
  const plan reference = detail::parse_plan_reference(example_text()).value();
  CHECK(hash_plan(reference).value() == hash_plan(p).value());
  CHECK(hash_plan(p).value().str() == pinned::two_queues_hash.digest);

  // And so are its buckets' fingerprints.
  const compiled_program program = test::compile_ok(p);
  REQUIRE(program.buckets.size() == 2);
  for (const pinned::pinned_digest& pin : {pinned::two_queues_fingerprint_1, pinned::two_queues_fingerprint_4}) {
    const auto bucket = std::find_if(program.buckets.begin(), program.buckets.end(),
                                     [&](const compiled_bucket& b) { return pin.what == "fingerprint " + b.id.str(); });
    REQUIRE(bucket != program.buckets.end());
    CHECK(bucket->binding->fingerprint().str() == pin.digest);
  }
  CHECK(program.dependencies.uses_transfer());
  CHECK(program.dependencies.after(4).size() == 2);
}

TEST_CASE("plan_v2_json: a node without a queue runs on the compute queue", "[binding][plan_json]") {
  const plan p = parse_plan(edited([](json& doc) { doc["nodes"][0].erase("queue"); })).value();
  CHECK(p.nodes[0].queue == queue_kind::compute);
}

TEST_CASE("plan_v2_json: a v1 document refuses queue and after as unknown fields", "[binding][plan_json]") {
  const error queue = rejection_of(edited([](json& doc) { doc["format"] = "ferrum.plan.v1"; }));
  CHECK(test::code_of(queue) == errc::unknown_field);
  CHECK(queue.path == "/nodes/0/queue");
  const error after = rejection_of(edited([](json& doc) {
    doc["format"] = "ferrum.plan.v1";
    for (json& node : doc["nodes"]) node.erase("queue");
  }));
  CHECK(test::code_of(after) == errc::unknown_field);
  CHECK(after.path == "/nodes/1/after");
}

TEST_CASE("plan_v2_json: bad queues and dependencies are rejected at their paths", "[binding][plan_json]") {
  SECTION("an unknown queue") {
    const error e = rejection_of(edited([](json& doc) { doc["nodes"][2]["queue"] = "graphics"; }));
    CHECK(test::code_of(e) == errc::unknown_queue);
    CHECK(e.path == "/nodes/2/queue");
    CHECK(e.detail.find("'graphics'") != std::string::npos);
  }
  SECTION("a queue that is not a string") {
    const error e = rejection_of(edited([](json& doc) { doc["nodes"][2]["queue"] = 1; }));
    CHECK(test::code_of(e) == errc::wrong_type);
    CHECK(e.path == "/nodes/2/queue");
  }
  SECTION("after that is not an array of ids") {
    CHECK(rejection_of(edited([](json& doc) { doc["nodes"][1]["after"] = "node/upload"; })).path == "/nodes/1/after");
    const error e = rejection_of(edited([](json& doc) { doc["nodes"][1]["after"][0] = "Node Upload"; }));
    CHECK(test::code_of(e) == errc::invalid_id);
    CHECK(e.path == "/nodes/1/after/0");
  }
  SECTION("a dependency on no node") {
    const error e = rejection_of(edited([](json& doc) { doc["nodes"][4]["after"][1] = "node/missing"; }));
    CHECK(test::code_of(e) == errc::dangling_dependency);
    CHECK(e.path == "/nodes/4/after/1");
  }
  SECTION("a dependency listed twice") {
    const error e = rejection_of(edited([](json& doc) { doc["nodes"][4]["after"][1] = "node/readback"; }));
    CHECK(test::code_of(e) == errc::duplicate_dependency);
    CHECK(e.path == "/nodes/4/after/1");
  }
  SECTION("a cycle") {
    const error e = rejection_of(edited([](json& doc) { doc["nodes"][1]["after"].push_back("node/compose"); }));
    CHECK(test::code_of(e) == errc::dependency_cycle);
    CHECK(e.detail.find("'node/simulate'") != std::string::npos);
    CHECK(e.detail.find("'node/compose'") != std::string::npos);
  }
  SECTION("a dependency on a node listed later") {
    const error e = rejection_of(edited([](json& doc) {
      doc["nodes"][0]["after"] = json::array({"node/shade"});
      doc["nodes"][3]["after"] = json::array();
    }));
    CHECK(test::code_of(e) == errc::dependency_not_earlier);
    CHECK(e.path == "/nodes/0/after/0");
  }
}
