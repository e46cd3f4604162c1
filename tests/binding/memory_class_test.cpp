// Tests of memory classes: derived per pool (upload for binding slots,
// device for the rest), declared in ferrum.plan.v2 pool options, hashed in
// the plan's trailing part, and placed as a window per class in a lane.
#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/compiled_program_file.hpp"
#include "ferrum/binding/plan_json.hpp"
#include "ferrum/binding/pool_domain.hpp"

#include "both_parsers.hpp"
#include "pinned_digests.hpp"
#include "plan_builder.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

using namespace ferrum;
using test::code_of;

namespace {

std::string readback_text() {
  std::ifstream in(std::string(FERRUM_SOURCE_DIR) + "/examples/plans/readback.json");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string readback_edited(void (*edit)(nlohmann::json&)) {
  nlohmann::json doc = nlohmann::json::parse(readback_text());
  edit(doc);
  return doc.dump();
}

// A binding pool, a device pool of 1000 bytes aligned 16 and one of 512
// aligned 256, and a pool of 300 bytes the plan declares readback.
plan three_class_plan() {
  plan p =
      test::plan_builder()
          .binding_node("node/a", "resource/a", 40)
          .resource(test::workspace_resource("resource/small", "pool/small", resource_demand::fixed(1000), 16))
          .resource(test::workspace_resource("resource/big", "pool/big", resource_demand::fixed(512), 256))
          .resource(test::workspace_resource("resource/out", "pool/out", resource_demand::fixed(300), 64))
          .use(0, "resource/small")
          .use(0, "resource/big")
          .use(0, "resource/out")
          .bucket("step", {1, 1, 1},
                  {{"pool/bindings", 0, 4096}, {"pool/small", 0, 4096}, {"pool/big", 0, 4096}, {"pool/out", 0, 4096}})
          .build();
  p.format = plan_format::v2;
  p.pools.push_back({test::id<pool_id>("pool/out"), liveness_mode::conservative, memory_class::readback});
  return p;
}

std::size_t domain_index(const compiled_program& program, std::string_view pool) {
  for (std::size_t d = 0; d < program.domains.size(); ++d)
    if (program.domains[d].pool.view() == pool) return d;
  FAIL("no pool " << pool);
  return 0;
}

}  // namespace

TEST_CASE("memory_class: names round-trip and other names are refused", "[binding][memory]") {
  for (memory_class c : memory_classes) CHECK(memory_class_from_string(to_string(c)) == c);
  CHECK_FALSE(memory_class_from_string("host").has_value());
  CHECK(host_touches(memory_class::upload));
  CHECK(host_touches(memory_class::readback));
  CHECK_FALSE(host_touches(memory_class::device));
  CHECK_FALSE(host_touches(memory_class::imported));
  CHECK_FALSE(allocated(memory_class::imported));
  CHECK(allocated(memory_class::device));
}

TEST_CASE("memory_class: the binding pool is upload, other pools device, unless declared", "[binding][memory]") {
  const plan p = both_parsers::parsed(readback_text());
  const auto domains = derive_pool_domains(p).value();
  REQUIRE(domains.size() == 3);
  CHECK(domains[0].pool.str() == "pool/bindings");
  CHECK(domains[0].memory == memory_class::upload);
  CHECK(domains[1].pool.str() == "pool/image");
  CHECK(domains[1].memory == memory_class::readback);
  CHECK(domains[2].pool.str() == "pool/state");
  CHECK(domains[2].memory == memory_class::device);
  // A v1 plan declares none and gets the derived classes.
  const auto v1 = derive_pool_domains(test::two_node_plan()).value();
  CHECK(v1[0].memory == memory_class::upload);
}

TEST_CASE("memory_class: a declared class is read with or without a liveness", "[binding][memory]") {
  const plan both = both_parsers::parsed(readback_edited([](nlohmann::json& doc) {
    doc["pools"]["pool/image"] = {{"memory", "readback"}, {"liveness", "interval"}};
  }));
  REQUIRE(both.pools.size() == 1);
  CHECK(both.pools[0].liveness == liveness_mode::interval);
  CHECK(both.pools[0].memory == memory_class::readback);
  const plan alone = both_parsers::parsed(readback_text());
  CHECK(alone.pools[0].liveness == liveness_mode::conservative);
  const plan none = both_parsers::parsed(readback_edited([](nlohmann::json& doc) {
    doc["pools"]["pool/image"] = {{"liveness", "interval"}};
  }));
  CHECK_FALSE(none.pools[0].memory.has_value());
}

TEST_CASE("memory_class: bad declarations are rejected at their paths", "[binding][memory]") {
  const error unknown = both_parsers::rejection(
      readback_edited([](nlohmann::json& doc) { doc["pools"]["pool/image"]["memory"] = "host"; }));
  CHECK(unknown.code == make_error_code(errc::unknown_value));
  CHECK(unknown.path == "/pools/pool~1image/memory");
  CHECK(unknown.detail.find("'device', 'upload', 'readback'") != std::string::npos);

  const error empty = both_parsers::rejection(
      readback_edited([](nlohmann::json& doc) { doc["pools"]["pool/image"] = nlohmann::json::object(); }));
  CHECK(empty.code == make_error_code(errc::missing_field));

  const error v1 = both_parsers::rejection(readback_edited([](nlohmann::json& doc) {
    doc["format"] = "ferrum.plan.v1";
    for (auto& node : doc["nodes"]) {
      node.erase("access");
      node.erase("after");
    }
  }));
  CHECK(v1.code == make_error_code(errc::unknown_field));
  CHECK(v1.path == "/pools/pool~1image/memory");
  CHECK(v1.detail == "field 'memory' is not defined in ferrum.plan.v1; use ferrum.plan.v2");

  const error binding = both_parsers::rejection(readback_edited([](nlohmann::json& doc) {
    doc["pools"]["pool/bindings"] = {{"memory", "device"}};
  }));
  CHECK(binding.code == make_error_code(errc::invalid_memory_class));
  CHECK(binding.path == "/pools/pool~1bindings/memory");
  CHECK(binding.detail.find("'pool/bindings'") != std::string::npos);
  CHECK(binding.detail.find("'device'") != std::string::npos);

  // A plan built in code: a v1 plan declaring a class.
  plan coded = test::two_node_plan();
  coded.pools.push_back({test::id<pool_id>("pool/bindings"), liveness_mode::conservative, memory_class::upload});
  auto r = compile(coded);
  CHECK(code_of(r) == errc::invalid_memory_class);
  CHECK(r.error().path == "/pools/pool~1bindings/memory");
}

TEST_CASE("memory_class: declaring the derived class hashes as declaring none and another class changes the hash",
          "[binding][memory]") {
  const plan_hash declared = hash_plan(both_parsers::parsed(readback_text())).value();
  CHECK(declared.str() == pinned::readback_hash.digest);
  const plan_hash none =
      hash_plan(both_parsers::parsed(readback_edited([](nlohmann::json& doc) { doc.erase("pools"); }))).value();
  CHECK(none != declared);
  const plan_hash derived =
      hash_plan(both_parsers::parsed(readback_edited([](nlohmann::json& doc) {
        doc["pools"] = {{"pool/image", {{"memory", "device"}}}, {"pool/bindings", {{"memory", "upload"}}}};
      }))).value();
  // Declaring the derived classes is no declaration, though a pool option
  // (liveness conservative) is listed for each.
  const plan_hash listed = hash_plan(both_parsers::parsed(readback_edited([](nlohmann::json& doc) {
                             doc["pools"] = {{"pool/image", {{"liveness", "conservative"}}},
                                             {"pool/bindings", {{"liveness", "conservative"}}}};
                           }))).value();
  CHECK(derived == listed);
  const plan_hash upload = hash_plan(both_parsers::parsed(readback_edited([](nlohmann::json& doc) {
                             doc["pools"]["pool/image"]["memory"] = "upload";
                           }))).value();
  CHECK(upload != declared);
  CHECK(upload != none);
  // With no access declared, the classes still make another plan than the
  // accesses alone would.
  const plan_hash no_access = hash_plan(both_parsers::parsed(readback_edited([](nlohmann::json& doc) {
                                for (auto& node : doc["nodes"]) node.erase("access");
                              }))).value();
  CHECK(no_access != declared);
}

TEST_CASE("memory_class: a lane is a window per class, upload first, each aligned to its largest alignment",
          "[binding][memory]") {
  const compiled_program program = compile(three_class_plan()).value();
  const compiled_bucket& bucket = program.buckets[0];
  const std::size_t bindings = domain_index(program, "pool/bindings");
  const std::size_t big = domain_index(program, "pool/big");
  const std::size_t small = domain_index(program, "pool/small");
  const std::size_t out = domain_index(program, "pool/out");
  CHECK(program.domains[big].memory == memory_class::device);
  CHECK(program.domains[out].memory == memory_class::readback);
  // Arenas are whole multiples of their alignment: 40 binding bytes take
  // 48 (alignment 16), pool/small 1008, pool/out 320.
  // Upload: the binding pool at 0.
  CHECK(bucket.pool_offsets[bindings] == 0);
  CHECK(bucket.window(memory_class::upload).begin == 0);
  CHECK(bucket.window(memory_class::upload).size == 48);
  // Device: at 256, the largest alignment in it (pool/big's), pools in id
  // order: pool/big at 256, pool/small after it at 768.
  CHECK(bucket.window(memory_class::device).begin == 256);
  CHECK(bucket.pool_offsets[big] == 256);
  CHECK(bucket.pool_offsets[small] == 768);
  CHECK(bucket.window(memory_class::device).size == 512 + 1008);
  // Readback last, at pool/out's alignment of 64.
  CHECK(bucket.pool_offsets[out] == 1792);
  CHECK(bucket.window(memory_class::readback).begin == 1792);
  CHECK(bucket.window(memory_class::readback).size == 320);
  CHECK(bucket.lane_bytes() == 1792 + 320);
  // Every window lies in the lane, one after the other (the plan imports
  // nothing: that window is empty).
  CHECK(bucket.window(memory_class::imported).size == 0);
  std::uint64_t end = 0;
  for (memory_class c : window_order) {
    if (!allocated(c)) continue;
    const memory_window& w = bucket.window(c);
    CHECK(w.begin >= end);
    end = w.begin + w.size;
  }
  CHECK(end <= bucket.lane_bytes());
}

TEST_CASE("memory_class: a saved program loads with the same windows and classes", "[binding][memory]") {
  const plan p = three_class_plan();
  const compiled_program program = compile(p).value();
  const auto bytes = save_compiled_program(program, p);
  REQUIRE(bytes.has_value());
  const auto loaded = load_compiled_program(*bytes, p);
  REQUIRE(loaded.has_value());
  CHECK(loaded->buckets[0].windows == program.buckets[0].windows);
  CHECK(loaded->buckets[0].pool_offsets == program.buckets[0].pool_offsets);
  for (std::size_t d = 0; d < program.domains.size(); ++d)
    CHECK(loaded->domains[d].memory == program.domains[d].memory);
}
