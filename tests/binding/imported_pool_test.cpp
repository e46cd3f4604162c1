// Tests of imported pools (memory class `imported`): the engine's buffers in
// a plan — placed in a window no lane allocates, listed per bucket with
// their sizes and whether a node writes them, ordered by the same barriers
// as lane memory, and the rules a pool of them follows.
#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/compiled_program_file.hpp"
#include "ferrum/binding/plan_json.hpp"

#include "imported_plan.hpp"
#include "pinned_digests.hpp"

#include "ferrum/binding/access_scope.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>

using namespace ferrum;
using test::code_of;

namespace {

const lane_import& import_named(const compiled_bucket& bucket, std::string_view id) {
  const auto it = std::find_if(bucket.lane.imports.begin(), bucket.lane.imports.end(),
                               [&](const lane_import& i) { return i.resource.view() == id; });
  REQUIRE(it != bucket.lane.imports.end());
  return *it;
}

}  // namespace

TEST_CASE("imported pools: a window past the lane's end that no lane allocates", "[binding][memory][imported]") {
  const compiled_program program = compile(test::imported_plan()).value();
  plan without = test::imported_plan();
  without.pools.clear();  // pool/engine a device pool, as derived
  without.cull = false;   // its writers live though nothing then reads it
  const compiled_program allocated = compile(without).value();
  for (std::size_t b = 0; b < program.buckets.size(); ++b) {
    const compiled_bucket& bucket = program.buckets[b];
    const memory_window& window = bucket.window(memory_class::imported);
    CHECK(window.size > 0);
    CHECK(window.begin >= bucket.lane_bytes());
    // The lane is what the plan takes without pool/engine's bytes.
    CHECK(bucket.lane_bytes() < allocated.buckets[b].lane_bytes());
    CHECK(bucket.window(memory_class::device).begin + bucket.window(memory_class::device).size <= bucket.lane_bytes());
    // Every use of an imported resource lies in the imported window.
    for (const lane_use& use : bucket.lane.uses)
      if (program.domains[use.domain].memory == memory_class::imported) {
        CHECK(use.offset >= window.begin);
        CHECK(use.offset + use.size <= window.begin + window.size);
      }
  }
  // Admission counts the allocated lanes only.
  CHECK(program.admitted_bytes < allocated.admitted_bytes);
}

TEST_CASE("imported pools: each bucket lists its imported resources, sizes and writers", "[binding][imported]") {
  const compiled_program program = compile(test::imported_plan()).value();
  REQUIRE(program.buckets.size() == 2);
  const compiled_bucket& one = program.buckets[0];
  const compiled_bucket& four = program.buckets[1];
  CHECK(one.id.str() == "step@1x1x1");
  REQUIRE(one.lane.imports.size() == 3);
  CHECK(import_named(one, "resource/lut").size == 64);
  CHECK_FALSE(import_named(one, "resource/lut").written);
  CHECK(import_named(one, "resource/mesh").size == 256);
  CHECK(import_named(one, "resource/mesh").written);
  CHECK(import_named(one, "resource/out").size == 64 + 16);
  CHECK(import_named(one, "resource/out").written);
  CHECK(import_named(four, "resource/out").size == 64 + 4 * 16);
  // Program order: pool/engine's members in id order.
  CHECK(one.lane.imports[0].resource.view() == "resource/lut");
  CHECK(one.lane.imports[1].resource.view() == "resource/mesh");
  CHECK(one.lane.imports[2].resource.view() == "resource/out");
  // A plan without imported pools has none.
  CHECK(compile(test::two_node_plan()).value().buckets[0].lane.imports.empty());
}

TEST_CASE(
    "imported pools: a write of an imported resource and a later read get a barrier, and so does a wave's "
    "first use of one the plan writes",
    "[binding][imported]") {
  // node/produce writes the mesh (and is the wave's first use of it: it
  // waits for what the wave before did with it); node/consume reads it.
  const compiled_program program = compile(test::imported_plan()).value();
  CHECK(program.buckets[0].lane.barrier_before == std::vector<bool>{true, true});
  const barrier_scope& first = program.buckets[0].lane.barrier_scopes[0];
  CHECK((first.before.accesses & accesses::writes) != 0);
  CHECK(first.after.covers(access_scope(resource_access::write, node_stages::compute)));
  // Read-only there, produce needs none: consume's first use of `out`,
  // which it writes, still does.
  plan reads = test::imported_plan();
  reads.nodes[0].access[2] = resource_access::read;
  CHECK(compile(reads).value().buckets[0].lane.barrier_before == std::vector<bool>{false, true});
  // Nothing written: no barrier at all.
  reads.nodes[1].access = std::vector<resource_access>(reads.nodes[1].access.size(), resource_access::read);
  reads.nodes[1].access[0] = resource_access::read_write;  // its slot
  CHECK(compile(reads).value().buckets[0].lane.barrier_before == std::vector<bool>{false, false});
}

TEST_CASE("imported pools: a saved program loads with the same imports", "[binding][imported]") {
  const plan p = test::imported_plan();
  const compiled_program program = compile(p).value();
  const auto loaded = load_compiled_program(save_compiled_program(program, p).value(), p);
  REQUIRE(loaded.has_value());
  for (std::size_t b = 0; b < program.buckets.size(); ++b) {
    CHECK(loaded->buckets[b].windows == program.buckets[b].windows);
    CHECK(loaded->buckets[b].lane_bytes() == program.buckets[b].lane_bytes());
    REQUIRE(loaded->buckets[b].lane.imports.size() == program.buckets[b].lane.imports.size());
    for (std::size_t i = 0; i < program.buckets[b].lane.imports.size(); ++i) {
      CHECK(loaded->buckets[b].lane.imports[i].resource == program.buckets[b].lane.imports[i].resource);
      CHECK(loaded->buckets[b].lane.imports[i].size == program.buckets[b].lane.imports[i].size);
      CHECK(loaded->buckets[b].lane.imports[i].written == program.buckets[b].lane.imports[i].written);
    }
  }
}

TEST_CASE("imported pools: declaring one changes the plan's hash", "[binding][imported]") {
  plan device = test::imported_plan();
  device.pools[0].memory = memory_class::device;
  CHECK(hash_plan(device).value() != hash_plan(test::imported_plan()).value());
}

TEST_CASE("imported pools: the binding pool and an interval pool cannot be imported", "[binding][imported]") {
  plan binding = test::imported_plan();
  binding.pools.push_back({test::id<pool_id>("pool/bindings"), liveness_mode::conservative, memory_class::imported});
  auto refused = compile(binding);
  CHECK(code_of(refused) == errc::invalid_memory_class);
  CHECK(refused.error().path == "/pools/pool~1bindings/memory");
  CHECK(refused.error().detail.find("'imported'") != std::string::npos);

  plan interval = test::imported_plan();
  interval.pools[0].liveness = liveness_mode::interval;
  auto aliased = compile(interval);
  CHECK(code_of(aliased) == errc::invalid_liveness);
  CHECK(aliased.error().path == "/pools/pool~1engine/liveness");
  CHECK(aliased.error().detail.find("'pool/engine' is imported") != std::string::npos);
}

TEST_CASE("imported pools: a plan file declares one as \"memory\": \"imported\"", "[binding][imported]") {
  const std::string text = R"({
    "format": "ferrum.plan.v2",
    "nodes": [{"id": "node/a", "resources": ["resource/slot", "resource/mesh"], "binding": "resource/slot",
               "access": {"resource/slot": "read", "resource/mesh": "read"}}],
    "resources": [
      {"id": "resource/slot", "pool": "pool/bindings", "kind": "binding", "node": "node/a",
       "demand": {"fixed": 16}, "alignment": 16, "lifetime": "invocation", "usage": "binding", "element": "u8",
       "storage": {"allocator": "linear-arena", "view": "contiguous",
                   "contract": "1111111111111111111111111111111111111111111111111111111111111111"}},
      {"id": "resource/mesh", "pool": "pool/mesh", "kind": "workspace",
       "demand": {"fixed": 4096}, "alignment": 16, "lifetime": "persistent", "usage": "storage", "element": "f32",
       "storage": {"allocator": "linear-arena", "view": "contiguous",
                   "contract": "2222222222222222222222222222222222222222222222222222222222222222"}}],
    "buckets": [{"class": "frame", "capacity": [1, 1, 1],
                 "budgets": [{"pool": "pool/bindings", "min": 0, "max": 64},
                             {"pool": "pool/mesh", "min": 0, "max": 4096}]}],
    "pools": {"pool/mesh": {"memory": "imported"}},
    "lanes": 1,
    "budget_bytes": 65536
  })";
  const auto parsed = parse_plan(text);
  REQUIRE(parsed.has_value());
  const compiled_program program = compile(*parsed).value();
  CHECK(program.domains[1].memory == memory_class::imported);
  // 4096 bytes of mesh, none of them in the lane: its 16 binding bytes.
  CHECK(program.buckets[0].lane_bytes() == 16);
  CHECK(program.buckets[0].lane.imports.size() == 1);
}

TEST_CASE("imported pools: examples/plans/imported.json hashes as pinned, which canonical_digest.py recomputes",
          "[binding][imported]") {
  std::ifstream in(std::string(FERRUM_SOURCE_DIR) + "/examples/plans/imported.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const plan p = parse_plan(text).value();
  CHECK(hash_plan(p).value().str() == pinned::imported_hash.digest);
}

TEST_CASE("imported pools: draws' reads of a buffer are reads, listed per queue, and hash by their number",
          "[binding][imported]") {
  plan p = test::imported_plan();
  // consume reads the mesh as vertices; produce reads the lut as uniforms.
  p.nodes[1].access[1] = resource_access::vertex;
  p.nodes[0].access[1] = resource_access::uniform;
  const compiled_program program = compile(p).value();
  const lane_import& mesh = import_named(program.buckets[0], "resource/mesh");
  CHECK(mesh.takes(resource_access::vertex));
  CHECK(mesh.takes(resource_access::write));
  CHECK(mesh.transfer_accesses == 0);
  CHECK_FALSE(import_named(program.buckets[0], "resource/lut").written);
  CHECK(import_named(program.buckets[0], "resource/lut").takes(resource_access::uniform));
  // A draw's read after produce's write still gets its barrier (and
  // produce, the wave's first use of the mesh, one).
  CHECK(program.buckets[0].lane.barrier_before == std::vector<bool>{true, true});
  CHECK(to_string(resource_access::vertex) == "vertex");
  CHECK(enum_from_string<resource_access>("indirect") == resource_access::indirect);
  CHECK(hash_plan(p).value() != hash_plan(test::imported_plan()).value());
  // A transfer node's accesses are listed apart.
  plan transfer = test::imported_plan();
  transfer.nodes[0].queue = queue_kind::transfer;
  const compiled_program moved = compile(transfer).value();
  CHECK(import_named(moved.buckets[0], "resource/mesh").transfer_accesses ==
        1u << static_cast<unsigned>(resource_access::write));
}

TEST_CASE("imported pools: a transfer node takes no draw's or shader's read, at the access's pointer",
          "[binding][imported]") {
  for (const resource_access a :
       {resource_access::vertex, resource_access::index, resource_access::indirect, resource_access::uniform}) {
    INFO(to_string(a));
    plan p = test::imported_plan();
    p.nodes[0].queue = queue_kind::transfer;
    p.nodes[0].access[1] = a;
    const auto refused = validate_plan(p);
    CHECK(code_of(refused) == errc::invalid_access);
    CHECK(refused.error().path == "/nodes/0/access/resource~1lut");
    CHECK_THAT(refused.error().detail, Catch::Contains("not '" + std::string(to_string(a)) + "'"));
    p.nodes[0].queue = queue_kind::compute;
    CHECK(validate_plan(p).has_value());
  }
}

TEST_CASE("imported pools: an imported buffer's size is its bytes, not rounded up to its alignment",
          "[binding][imported]") {
  plan p = test::imported_plan();
  for (resource_descriptor& r : p.resources)
    if (r.id.view() == "resource/lut") {
      r.demand = resource_demand::fixed(96);
      r.alignment = 64;
    }
  const compiled_program program = compile(p).value();
  CHECK(import_named(program.buckets[0], "resource/lut").size == 96);
}
