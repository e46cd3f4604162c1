// Tests of ferrum.plan.v2 files: nodes with `queue`, `after` and `access`,
// loaded by both parsers alike, rejected with the dependency and access codes
// at their JSON paths; v1 files keep refusing the new fields.
#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/plan_json.hpp"

#include "both_parsers.hpp"
#include "pinned_digests.hpp"
#include "plan_builder.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>
#include <vector>

using namespace ferrum;
using json = nlohmann::json;

namespace {

std::string v2_example_text(const std::string& name = "two_queues.json") {
  std::ifstream in(std::string(FERRUM_SOURCE_DIR) + "/examples/plans/" + name);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The example with `edit` applied to its JSON.
template <class Edit>
std::string edited(Edit edit) {
  json doc = json::parse(v2_example_text());
  edit(doc);
  return doc.dump();
}

// The two-queue example with accesses declared (its upload node:
// {"resource/upload.args": "read", "resource/staging": "write"}).
std::string access_text() { return v2_example_text("two_queues_access.json"); }

// The access example with `edit` applied to its JSON.
template <class Edit>
std::string access_edited(Edit edit) {
  json doc = json::parse(access_text());
  edit(doc);
  return doc.dump();
}

// The two-queue example as a v1 document: no queues or dependencies, then
// `edit` applied.
template <class Edit>
std::string v1_edited(Edit edit) {
  return edited([&](json& doc) {
    doc["format"] = "ferrum.plan.v1";
    for (json& node : doc["nodes"]) {
      node.erase("queue");
      node.erase("after");
    }
    edit(doc);
  });
}

// The detail of a v1 document's field that ferrum.plan.v2 defines.
std::string v2_field_detail(std::string_view field) {
  return "field '" + std::string(field) + "' is not defined in ferrum.plan.v1; use ferrum.plan.v2";
}

}  // namespace

TEST_CASE("plan_v2_json: the two-queue example loads its queues and dependencies", "[binding][plan_json]") {
  const plan p = parse_plan(v2_example_text()).value();
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
  const plan reference = detail::parse_plan_reference(v2_example_text()).value();
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

TEST_CASE("plan_v2_json: the async-compute example loads its queues and the kind hashes as its number 2",
          "[binding][plan_json][queues]") {
  const std::string text = v2_example_text("async_compute.json");
  const plan p = both_parsers::parsed(text);
  REQUIRE(p.nodes.size() == 5);
  CHECK(p.nodes[1].queue == queue_kind::async_compute);
  CHECK(p.nodes[3].queue == queue_kind::async_compute);
  CHECK(p.nodes[2].queue == queue_kind::compute);
  // The pin is tools/canonical_digest.py's (tests/tools/check_pinned_digests.py).
  CHECK(hash_plan(p).value().str() == pinned::async_compute_hash.digest);
  // Moving a node to another queue changes the hash.
  json doc = json::parse(text);
  doc["nodes"][1]["queue"] = "compute";
  CHECK(hash_plan(both_parsers::parsed(doc.dump())).value() != hash_plan(p).value());
  const compiled_program program = test::compile_ok(p);
  CHECK(program.dependencies.uses(queue_kind::async_compute));
  CHECK_FALSE(program.dependencies.uses_transfer());
  CHECK(program.dependencies.queue(3) == queue_kind::async_compute);
}

TEST_CASE("plan_v2_json: an async-compute node and a compute node touching one resource need an after path",
          "[binding][plan_json][queues]") {
  json doc = json::parse(v2_example_text("async_compute.json"));
  // compose reads counts, which reduce (async compute) writes.
  doc["nodes"][4]["after"] = {"node/shade"};
  const error e = both_parsers::refusal(doc.dump());
  CHECK(e == errc::unordered_hazard);
  CHECK(e.detail.find("'node/reduce'") != std::string::npos);
  CHECK(e.detail.find("'node/compose'") != std::string::npos);
}

TEST_CASE("plan_v2_json: a node without a queue runs on the compute queue", "[binding][plan_json]") {
  const plan p = parse_plan(edited([](json& doc) { doc["nodes"][0].erase("queue"); })).value();
  CHECK(p.nodes[0].queue == queue_kind::compute);
}

TEST_CASE("plan_v2_json: a v1 document refuses queue and after as unknown fields", "[binding][plan_json]") {
  const error queue = both_parsers::rejection(edited([](json& doc) { doc["format"] = "ferrum.plan.v1"; }));
  CHECK(test::code_of(queue) == errc::unknown_field);
  CHECK(queue.path == "/nodes/0/queue");
  CHECK(queue.detail == v2_field_detail("queue"));
  const error after = both_parsers::rejection(edited([](json& doc) {
    doc["format"] = "ferrum.plan.v1";
    for (json& node : doc["nodes"]) node.erase("queue");
  }));
  CHECK(test::code_of(after) == errc::unknown_field);
  CHECK(after.path == "/nodes/1/after");
  CHECK(after.detail == v2_field_detail("after"));
}

TEST_CASE("plan_v2_json: each v2 field in a v1 document says to use ferrum.plan.v2", "[binding][plan_json]") {
  // The example stripped to v1 loads; each field alone is refused at its
  // pointer, by both parsers alike.
  CHECK(both_parsers::parsed(v1_edited([](json&) {})).format == plan_format::v1);
  struct field_case {
    std::string field;
    std::string path;
    std::function<void(json&)> edit;
  };
  const std::vector<field_case> cases = {
      {"queue", "/nodes/2/queue", [](json& doc) { doc["nodes"][2]["queue"] = "compute"; }},
      {"after", "/nodes/3/after", [](json& doc) { doc["nodes"][3]["after"] = json::array({"node/simulate"}); }},
      {"access", "/nodes/1/access", [](json& doc) { doc["nodes"][1]["access"] = json::object(); }},
      {"memory", "/pools/pool~1transient/memory",
       [](json& doc) { doc["pools"]["pool/transient"]["memory"] = "device"; }},
  };
  for (const field_case& c : cases) {
    INFO(c.field);
    const error e = both_parsers::rejection(v1_edited(c.edit));
    CHECK(test::code_of(e) == errc::unknown_field);
    CHECK(e.path == c.path);
    CHECK(e.detail == v2_field_detail(c.field));
    CHECK(detail::parse_plan_reference(v1_edited(c.edit)).error().detail == e.detail);
  }
}

TEST_CASE("plan_v2_json: in a v1 document the first unknown field in key order is named, v2's or not",
          "[binding][plan_json]") {
  // "priority" < "queue": the field no format defines is named, as such.
  const error before = both_parsers::rejection(v1_edited([](json& doc) {
    doc["nodes"][2]["queue"] = "compute";
    doc["nodes"][2]["priority"] = 1;
  }));
  CHECK(test::code_of(before) == errc::unknown_field);
  CHECK(before.path == "/nodes/2/priority");
  CHECK(before.detail == "field 'priority' is not defined here");
  // "queue" < "zone": the v2 field is named, with its hint.
  const error after = both_parsers::rejection(v1_edited([](json& doc) {
    doc["nodes"][2]["queue"] = "compute";
    doc["nodes"][2]["zone"] = 1;
  }));
  CHECK(after.path == "/nodes/2/queue");
  CHECK(after.detail == v2_field_detail("queue"));
  // A v2 document knows no such field either: no hint there.
  const error v2 = both_parsers::rejection(edited([](json& doc) { doc["pools"]["pool/transient"]["colour"] = 1; }));
  CHECK(test::code_of(v2) == errc::unknown_field);
  CHECK(v2.path == "/pools/pool~1transient/colour");
  CHECK(v2.detail == "field 'colour' is not defined here");
}

TEST_CASE("plan_v2_json: bad queues and dependencies are rejected at their paths", "[binding][plan_json]") {
  SECTION("an unknown queue") {
    const error e = both_parsers::rejection(edited([](json& doc) { doc["nodes"][2]["queue"] = "graphics"; }));
    CHECK(test::code_of(e) == errc::unknown_queue);
    CHECK(e.path == "/nodes/2/queue");
    CHECK(e.detail.find("'graphics'") != std::string::npos);
    CHECK(e.detail.find("'async-compute'") != std::string::npos);
  }
  SECTION("a queue that is not a string") {
    const error e = both_parsers::rejection(edited([](json& doc) { doc["nodes"][2]["queue"] = 1; }));
    CHECK(test::code_of(e) == errc::wrong_type);
    CHECK(e.path == "/nodes/2/queue");
  }
  SECTION("after that is not an array of ids") {
    CHECK(both_parsers::rejection(edited([](json& doc) { doc["nodes"][1]["after"] = "node/upload"; })).path ==
          "/nodes/1/after");
    const error e = both_parsers::rejection(edited([](json& doc) { doc["nodes"][1]["after"][0] = "Node Upload"; }));
    CHECK(test::code_of(e) == errc::invalid_id);
    CHECK(e.path == "/nodes/1/after/0");
  }
  SECTION("a dependency on no node") {
    const error e = both_parsers::rejection(edited([](json& doc) { doc["nodes"][4]["after"][1] = "node/missing"; }));
    CHECK(test::code_of(e) == errc::dangling_dependency);
    CHECK(e.path == "/nodes/4/after/1");
  }
  SECTION("a dependency listed twice") {
    const error e = both_parsers::rejection(edited([](json& doc) { doc["nodes"][4]["after"][1] = "node/readback"; }));
    CHECK(test::code_of(e) == errc::duplicate_dependency);
    CHECK(e.path == "/nodes/4/after/1");
  }
  SECTION("a cycle") {
    const error e =
        both_parsers::rejection(edited([](json& doc) { doc["nodes"][1]["after"].push_back("node/compose"); }));
    CHECK(test::code_of(e) == errc::dependency_cycle);
    CHECK(e.path == "/nodes/2/after/0");
    CHECK(e.detail ==
          "a cycle of 3 nodes: node 'node/simulate' runs after node 'node/compose' runs after node 'node/readback' "
          "runs after node 'node/simulate'; to break it, remove node 'node/simulate' from the 'after' of node "
          "'node/readback'");
  }
  SECTION("a dependency on a node listed later") {
    const error e = both_parsers::rejection(edited([](json& doc) {
      doc["nodes"][0]["after"] = json::array({"node/shade"});
      doc["nodes"][3]["after"] = json::array();
    }));
    CHECK(test::code_of(e) == errc::dependency_not_earlier);
    CHECK(e.path == "/nodes/0/after/0");
  }
}

TEST_CASE("plan_v2_json: the access example loads its declared accesses", "[binding][plan_json]") {
  const plan p = both_parsers::parsed(access_text());
  REQUIRE(p.nodes.size() == 5);
  // Parallel to the node's resources: upload.args, staging.
  const std::vector<resource_access> upload{resource_access::read, resource_access::write};
  CHECK(p.nodes[0].access == upload);
  CHECK(p.nodes[0].access_of(1) == resource_access::write);
  // compose: compose.args, readback, image, frame ("read-write" declared).
  const std::vector<resource_access> compose{resource_access::read, resource_access::read, resource_access::read,
                                             resource_access::read_write};
  CHECK(p.nodes[4].access == compose);

  // Its hash is the one tools/canonical_digest.py computes, and not the
  // hash of the same plan without accesses.
  CHECK(hash_plan(p).value().str() == pinned::two_queues_access_hash.digest);
  CHECK(hash_plan(p).value().str() != pinned::two_queues_hash.digest);
  CHECK(test::compile_ok(p).hash == hash_plan(p).value());
}

TEST_CASE("plan_v2_json: a node without access declares none", "[binding][plan_json]") {
  const plan p = both_parsers::parsed(v2_example_text());
  for (const plan_node& node : p.nodes) {
    CHECK(node.access.empty());
    for (std::size_t k = 0; k < node.resources.size(); ++k) CHECK(node.access_of(k) == resource_access::read_write);
  }
  // An empty object declares every resource read-write.
  const plan empty = both_parsers::parsed(edited([](json& doc) { doc["nodes"][1]["access"] = json::object(); }));
  CHECK(empty.nodes[1].access == std::vector<resource_access>(3, resource_access::read_write));
}

TEST_CASE("plan_v2_json: declaring read-write hashes as declaring nothing", "[binding][plan_json]") {
  const plan_hash none = hash_plan(both_parsers::parsed(v2_example_text())).value();
  CHECK(none.str() == pinned::two_queues_hash.digest);
  CHECK(hash_plan(both_parsers::parsed(edited([](json& doc) {
          doc["nodes"][1]["access"] = json::object();
        }))).value() == none);
  const plan all = both_parsers::parsed(edited([](json& doc) {
    for (json& node : doc["nodes"])
      for (const json& r : node["resources"]) node["access"][r.get<std::string>()] = "read-write";
  }));
  CHECK(all.nodes[4].access.size() == 4);
  CHECK(hash_plan(all).value() == none);
  // And in the access example, dropping compose's "read-write" entry too.
  CHECK(hash_plan(
            both_parsers::parsed(access_edited([](json& doc) { doc["nodes"][4]["access"].erase("resource/frame"); })))
            .value()
            .str() == pinned::two_queues_access_hash.digest);
}

TEST_CASE("plan_v2_json: changing a declared access changes the hash", "[binding][plan_json]") {
  const plan_hash base = hash_plan(both_parsers::parsed(access_text())).value();
  const std::vector<std::function<void(json&)>> edits = {
      [](json& doc) { doc["nodes"][0]["access"]["resource/staging"] = "read"; },
      [](json& doc) { doc["nodes"][0]["access"]["resource/staging"] = "read-write"; },
      [](json& doc) { doc["nodes"][0]["access"].erase("resource/staging"); },
      [](json& doc) { doc["nodes"][4]["access"]["resource/frame"] = "write"; },
      [](json& doc) { doc["nodes"][3]["access"]["resource/image"] = "read-write"; },
      [](json& doc) { doc["nodes"][1].erase("access"); },
  };
  for (std::size_t i = 0; i < edits.size(); ++i) {
    INFO("edit " << i);
    CHECK(hash_plan(both_parsers::parsed(access_edited(edits[i]))).value() != base);
  }
}

TEST_CASE("plan_v2_json: the order of an access object's keys does not change the plan", "[binding][plan_json]") {
  // nlohmann writes keys sorted; the file lists upload.args before staging.
  const std::string text = access_text();
  const std::string listed = R"({"resource/upload.args": "read", "resource/staging": "write"})";
  const std::size_t at = text.find(listed);
  REQUIRE(at != std::string::npos);
  std::string swapped = text;
  swapped.replace(at, listed.size(), R"({"resource/staging": "write", "resource/upload.args": "read"})");
  const plan a = both_parsers::parsed(text);
  const plan b = both_parsers::parsed(swapped);
  CHECK(b.nodes[0].access == a.nodes[0].access);
  CHECK(hash_plan(b).value() == hash_plan(a).value());
  CHECK(hash_plan(both_parsers::parsed(access_edited([](json&) {}))).value() == hash_plan(a).value());
}

TEST_CASE("plan_v2_json: bad accesses are rejected at their paths", "[binding][plan_json]") {
  SECTION("a resource the node does not list") {
    const error e =
        both_parsers::rejection(access_edited([](json& doc) { doc["nodes"][0]["access"]["resource/state"] = "read"; }));
    CHECK(test::code_of(e) == errc::dangling_reference);
    CHECK(e.path == "/nodes/0/access/resource~1state");
    CHECK(e.detail.find("'node/upload'") != std::string::npos);
    CHECK(e.detail.find("'resource/state'") != std::string::npos);
  }
  SECTION("a key that is no resource id at all") {
    const error e =
        both_parsers::rejection(access_edited([](json& doc) { doc["nodes"][1]["access"]["Staging ~x"] = "read"; }));
    CHECK(test::code_of(e) == errc::dangling_reference);
    CHECK(e.path == "/nodes/1/access/Staging ~0x");
  }
  SECTION("of two bad keys, the first in key order") {
    const error e = both_parsers::rejection(access_edited([](json& doc) {
      doc["nodes"][0]["access"]["resource/z"] = "read";
      doc["nodes"][0]["access"]["resource/image"] = "read";
    }));
    CHECK(e.path == "/nodes/0/access/resource~1image");
  }
  SECTION("an unknown access") {
    const error e = both_parsers::rejection(
        access_edited([](json& doc) { doc["nodes"][0]["access"]["resource/staging"] = "readwrite"; }));
    CHECK(test::code_of(e) == errc::unknown_value);
    CHECK(e.path == "/nodes/0/access/resource~1staging");
    CHECK(e.detail.find("'read', 'write', 'read-write'") != std::string::npos);
  }
  SECTION("an access that is not a string") {
    const error e =
        both_parsers::rejection(access_edited([](json& doc) { doc["nodes"][0]["access"]["resource/staging"] = 1; }));
    CHECK(test::code_of(e) == errc::wrong_type);
    CHECK(e.path == "/nodes/0/access/resource~1staging");
  }
  SECTION("access that is not an object") {
    const error e = both_parsers::rejection(access_edited([](json& doc) {
      doc["nodes"][2]["access"] = json::array({"read", "write"});
    }));
    CHECK(test::code_of(e) == errc::wrong_type);
    CHECK(e.path == "/nodes/2/access");
  }
}

TEST_CASE("plan_v2_json: a v1 document refuses access as an unknown field", "[binding][plan_json]") {
  // "access" comes before "after" and "queue" in key order.
  const error e = both_parsers::rejection(access_edited([](json& doc) { doc["format"] = "ferrum.plan.v1"; }));
  CHECK(test::code_of(e) == errc::unknown_field);
  CHECK(e.path == "/nodes/0/access");
  CHECK(e.detail == v2_field_detail("access"));
  const error alone = both_parsers::rejection(access_edited([](json& doc) {
    doc["format"] = "ferrum.plan.v1";
    for (json& node : doc["nodes"]) {
      node.erase("queue");
      node.erase("after");
    }
    doc["nodes"][0].erase("access");
  }));
  CHECK(test::code_of(alone) == errc::unknown_field);
  CHECK(alone.path == "/nodes/1/access");
  CHECK(alone.detail == v2_field_detail("access"));
}
