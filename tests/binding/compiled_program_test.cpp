#include "ferrum/binding/compiled_program.hpp"

#include "pinned_digests.hpp"
#include "plan_builder.hpp"

#include <functional>
#include <thread>

using namespace ferrum;
using test::code_of;

namespace {

std::string fingerprint_of(const plan& p) { return test::compile_ok(p).buckets.at(0).binding->fingerprint().str(); }

}  // namespace

TEST_CASE("compiled_program: the two-node plan compiles to the original module's layout", "[binding][compile]") {
  const compiled_program program = test::compile_ok(test::two_node_plan());
  CHECK(program.node_count == 2);
  REQUIRE(program.buckets.size() == 1);
  const compiled_bucket& bucket = program.buckets[0];
  CHECK(bucket.id.str() == "test.program-binding@1x1x1");
  CHECK(program.find(bucket.id) == &bucket);
  CHECK(program.find(bucket_id::make(test::id<bucket_class>("x"), {1, 1, 1}).value()) == nullptr);
  REQUIRE(bucket.binding);
  CHECK(bucket.binding->physical_size_bytes() == 192);
  CHECK(bucket.binding->plan() == program.hash);
  CHECK(bucket.lane_bytes() == 192);
  CHECK(program.admitted_bytes == 192);
}

TEST_CASE("compiled_program: the fingerprint is a fixed SHA-256 of the layout material", "[binding][compile]") {
  // Fixed across runs, processes and builds: docs/canonical-encoding.md
  // defines the bytes, and tools/canonical_digest.py recomputes this pin
  // independently from that document (tests/support/pinned_digests.hpp).
  CHECK(fingerprint_of(test::two_node_plan()) == pinned::two_nodes_fingerprint.digest);
  CHECK(pinned::two_nodes_fingerprint.what ==
        "fingerprint " + test::compile_ok(test::two_node_plan()).buckets.at(0).id.str());
}

TEST_CASE("compiled_program: compiling twice gives equal layouts and fingerprints", "[binding][compile]") {
  const plan p = test::two_node_plan();
  const compiled_program a = test::compile_ok(p);
  const compiled_program b = test::compile_ok(p);
  CHECK(a.hash == b.hash);
  CHECK(*a.buckets[0].binding == *b.buckets[0].binding);
  CHECK(a.buckets[0].capacity_layouts == b.buckets[0].capacity_layouts);
}

TEST_CASE("compiled_program: the fingerprint changes with every field it covers", "[binding][compile]") {
  const std::string base = fingerprint_of(test::two_node_plan());
  const std::vector<std::function<void(plan&)>> edits = {
      [](plan& p) { p.buckets[0].cls = test::id<bucket_class>("other"); },  // bucket id
      [](plan& p) {
        p.buckets[0].dims = {1, 2, 1};
      },                                                                    // bucket id
      [](plan& p) { p.resources[0].demand = resource_demand::fixed(80); },  // capacity, size
      [](plan& p) { p.resources[0].alignment = 64; },                       // alignment
      [](plan& p) {
        p.nodes[0].id = test::id<node_id>("node/renamed");  // node id
        p.resources[0].node = p.nodes[0].id;
      },
      [](plan& p) { std::swap(p.nodes[0], p.nodes[1]); },  // node index
      [](plan& p) {
        p.resources[1].id = test::id<resource_id>("resource/renamed");  // resource id, claim
        p.nodes[1].resources = {p.resources[1].id};
        p.nodes[1].binding = p.resources[1].id;
      },
  };
  for (std::size_t i = 0; i < edits.size(); ++i) {
    plan p = test::two_node_plan();
    edits[i](p);
    p.buckets[0].budgets[0].max = 4096;
    INFO("edit " << i);
    CHECK(fingerprint_of(p) != base);
  }
}

TEST_CASE("compiled_program: fields outside the layout material leave the fingerprint alone", "[binding][compile]") {
  const plan base_plan = test::two_node_plan();
  const std::string base = fingerprint_of(base_plan);
  const std::vector<std::function<void(plan&)>> edits = {
      [](plan& p) { p.lanes = 3; },
      [](plan& p) { p.budget_bytes = 1 << 30; },
      [](plan& p) { p.buckets[0].budgets[0].max = 4096; },
      [](plan& p) {
        for (auto& r : p.resources) r.storage.digest = test::contract_b;
      },
      [](plan& p) {
        p.resources.push_back(test::workspace_resource("resource/w", "pool/w", resource_demand::fixed(64)));
        p.nodes[0].resources.push_back(p.resources.back().id);
        p.buckets[0].budgets.push_back({p.resources.back().pool, 0, 4096});
      },
  };
  for (std::size_t i = 0; i < edits.size(); ++i) {
    plan p = base_plan;
    edits[i](p);
    INFO("edit " << i);
    CHECK(fingerprint_of(p) == base);
    CHECK(hash_plan(p).value() != hash_plan(base_plan).value());
  }
}

TEST_CASE("compiled_program: buckets come out in id order with one capacity layout per pool", "[binding][compile]") {
  const plan p = test::plan_builder()
                     .binding_node("node/a", "resource/a", 64)
                     .resource(test::workspace_resource("resource/w", "pool/w", resource_demand::scaled(0, 64, 0)))
                     .use(0, "resource/w")
                     .bucket("step", {8, 1, 1}, {{"pool/bindings", 0, 4096}, {"pool/w", 0, 1 << 20}})
                     .bucket("frame", {2, 1, 1}, {{"pool/w", 0, 1 << 20}, {"pool/bindings", 0, 4096}})
                     .lanes(3)
                     .build();
  const compiled_program program = test::compile_ok(p);
  REQUIRE(program.buckets.size() == 2);
  CHECK(program.buckets[0].id.str() == "frame@2x1x1");
  CHECK(program.buckets[1].id.str() == "step@8x1x1");
  for (const compiled_bucket& b : program.buckets) {
    REQUIRE(b.capacity_layouts.size() == 2);
    CHECK(b.capacity_layouts[0].pool.str() == "pool/bindings");
    CHECK(b.capacity_layouts[1].pool.str() == "pool/w");
  }
  // pool/w rounds 64 * capacity up to its alignment of 256, and starts at
  // 256 in each lane, after the 64 binding bytes.
  CHECK(program.admitted_bytes == 3 * ((256 + 256) + (256 + 512)));
  CHECK(program.domains.size() == program.wave_layouts.size());
}

TEST_CASE("compiled_program: the first failing check's error comes back with its path", "[binding][compile]") {
  plan p = test::two_node_plan();
  p.resources[0].storage.digest = "nope";
  auto r = compile(p);
  CHECK(code_of(r) == errc::invalid_contract);
  CHECK(r.error().what().find("(at /resources/0/storage/contract)") != std::string::npos);
}

TEST_CASE("compiled_program: compiling on several threads at once gives one result", "[binding][compile]") {
  // compile hashes the plan on a second thread; several compiles of one plan
  // at once must neither race (the tsan preset runs this) nor disagree.
  const plan p = test::two_node_plan();
  const compiled_program expected = test::compile_ok(p);
  std::vector<result<compiled_program>> results(4, make_error(errc::empty_plan));
  std::vector<std::thread> threads;
  for (auto& r : results) threads.emplace_back([&p, &r] { r = compile(p); });
  for (auto& t : threads) t.join();
  for (const auto& r : results) {
    REQUIRE(r.has_value());
    CHECK(r->hash == expected.hash);
    CHECK(*r->buckets[0].binding == *expected.buckets[0].binding);
  }
}
