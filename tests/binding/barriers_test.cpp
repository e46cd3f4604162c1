// The barriers a wave needs (ferrum/binding/barriers.hpp): derived per
// bucket from the nodes' bytes in a lane, their accesses and queues.
#include "hazard_plans.hpp"
#include "plan_builder.hpp"

#include "ferrum/binding/barriers.hpp"
#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/compiled_program_file.hpp"
#include "ferrum/sync_scope.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

using namespace ferrum;

namespace barriers_test {

constexpr auto R = resource_access::read;
constexpr auto W = resource_access::write;

// A v2 plan: node i uses uses[i] (resource/r<k> of pool/p, conservative
// unless `interval`) with accesses[i], runs after[i] on queues[i].
struct node_spec {
  std::vector<int> uses;
  std::vector<resource_access> access;
  std::vector<int> after{};
  queue_kind queue = queue_kind::compute;
};

plan v2_plan(const std::vector<node_spec>& nodes, int resources, bool interval = false) {
  test::plan_builder b;
  for (int r = 0; r < resources; ++r)
    b.resource(test::workspace_resource("resource/r" + std::to_string(r), "pool/p", resource_demand::fixed(256)));
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    std::vector<std::string> names;
    for (int r : nodes[n].uses) names.push_back("resource/r" + std::to_string(r));
    b.node("node/" + std::to_string(n), {});
    for (const std::string& name : names) b.use(n, name);
  }
  if (interval) b.interval("pool/p");
  plan p = b.bucket("step", {1, 1, 1}, {{"pool/p", 0, 1 << 20}}).budget(1 << 24).build();
  p.format = plan_format::v2;
  p.cull = false;  // their last writes are read by nothing: every node, for its barriers
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    p.nodes[n].access = nodes[n].access;
    p.nodes[n].queue = nodes[n].queue;
    for (int d : nodes[n].after) p.nodes[n].after.push_back(p.nodes[static_cast<std::size_t>(d)].id);
  }
  return p;
}

std::vector<bool> barriers_of(const plan& p) { return test::compile_ok(p).buckets.at(0).lane.barrier_before; }

}  // namespace barriers_test

using namespace barriers_test;

TEST_CASE("barriers: two independent nodes on their own bytes have no barrier between them", "[binding][barriers]") {
  const compiled_program program = test::compile_ok(v2_plan({{{0}, {W}}, {{1}, {W}}}, 2));
  CHECK(program.buckets[0].lane.barrier_before == std::vector<bool>{false, false});
  CHECK(program.buckets[0].lane.barriers_per_wave() == 0);
}

TEST_CASE("barriers: a read after a write, a write after a read and two writes of one resource each get one",
          "[binding][barriers]") {
  CHECK(barriers_of(v2_plan({{{0}, {W}}, {{0}, {R}, {0}}}, 1)) == std::vector<bool>{false, true});
  CHECK(barriers_of(v2_plan({{{0}, {R}}, {{0}, {W}}}, 1)) == std::vector<bool>{false, true});
  CHECK(barriers_of(v2_plan({{{0}, {W}}, {{0}, {W}}}, 1)) == std::vector<bool>{false, true});
  // Two reads are no hazard.
  CHECK(barriers_of(v2_plan({{{0}, {R}}, {{0}, {R}}}, 1)) == std::vector<bool>{false, false});
}

TEST_CASE("barriers: resources that share bytes by aliasing are a hazard, as a v1 plan's read-write uses are",
          "[binding][barriers]") {
  // A chain (v1, read-write throughout): r0, r1, r2 of an interval pool,
  // each used by one node.
  plan p = v2_plan({{{0}, {}}, {{1}, {}}, {{2}, {}}}, 3, true);
  p.format = plan_format::v1;
  p.cull = true;  // a v1 plan culls nothing, and says nothing of it
  const compiled_program program = test::compile_ok(p);
  const lane_recipe& lane = program.buckets[0].lane;
  // Disjoint intervals: all three at the same bytes.
  REQUIRE(lane.node_uses(0)[0].offset == lane.node_uses(1)[0].offset);
  REQUIRE(lane.node_uses(1)[0].offset == lane.node_uses(2)[0].offset);
  CHECK(lane.barrier_before == std::vector<bool>{false, true, true});
}

TEST_CASE("barriers: one barrier serves a whole dependency level", "[binding][barriers]") {
  // Level 0: nodes 0 and 1 write r0, r1. Level 1: node 2 reads r0, node 3
  // reads r1. One barrier, before node 2, stands between both pairs.
  const plan p = v2_plan({{{0}, {W}}, {{1}, {W}}, {{0}, {R}, {0}}, {{1}, {R}, {1}}}, 2);
  CHECK(barriers_of(p) == std::vector<bool>{false, false, true, false});
}

TEST_CASE("barriers: a hazard between nodes of one kind is stood between by a barrier of that kind",
          "[binding][barriers]") {
  // Node 0 (compute) writes r0, node 1 (transfer) writes r1, node 2
  // (compute) reads both: its barrier stands between it and either.
  const plan p = v2_plan({{{0}, {W}}, {{1}, {W}, {}, queue_kind::transfer}, {{0, 1}, {R, R}, {0, 1}}}, 2);
  CHECK(barriers_of(p) == std::vector<bool>{false, false, true});
  // Node 1 reads r0 as well: it gets a barrier (on a device with one queue
  // for both kinds, it runs after node 0 there). Node 2 still needs one of
  // its own: on a device with a transfer queue, node 1's barrier is on that
  // queue, and orders nothing of node 0.
  const plan q = v2_plan({{{0}, {W}}, {{0, 1}, {R, W}, {0}, queue_kind::transfer}, {{0, 1}, {R, R}, {0, 1}}}, 2);
  CHECK(barriers_of(q) == std::vector<bool>{false, true, true});
  // Node 1 only reading r0: on a device that runs both kinds on one queue,
  // its barrier is enough for node 2, which reads r0 too.
  const plan r = v2_plan({{{0}, {W}}, {{0}, {R}, {0}, queue_kind::transfer}, {{0}, {R}, {0, 1}}}, 1);
  const compiled_program program = test::compile_ok(r);
  CHECK(program.buckets[0].lane.barrier_before == std::vector<bool>{false, true, true});
  CHECK(program.buckets[0].lane.one_queue_barrier_before == std::vector<bool>{false, true, false});
  CHECK(derive_barriers(program.buckets[0].lane, program.dependencies, barrier_queues::one) ==
        std::vector<bool>{false, true, false});
}

TEST_CASE("barriers: a hazard between nodes of different kinds is stood between by any barrier",
          "[binding][barriers]") {
  // transfer writes r0; compute writes r1, then a compute node reads both:
  // its barrier (of its kind) serves the transfer writer too.
  const plan p = v2_plan({{{0}, {W}, {}, queue_kind::transfer}, {{1}, {W}}, {{0, 1}, {R, R}, {0, 1}}}, 2);
  CHECK(barriers_of(p) == std::vector<bool>{false, false, true});
  // A transfer node after a compute writer: a barrier before it.
  const plan q = v2_plan({{{0}, {W}}, {{0}, {R}, {0}, queue_kind::transfer}}, 1);
  CHECK(barriers_of(q) == std::vector<bool>{false, true});
}

TEST_CASE("barriers: over generated plans every hazard has a barrier between its nodes, and each barrier is needed",
          "[binding][barriers]") {
  std::mt19937_64 rng(17);
  std::size_t barriers = 0;
  std::size_t aliased = 0;
  for (int trial = 0; trial < 40; ++trial) {
    INFO("trial " << trial);
    const plan p = hazard_plans::generate(rng, {});
    const compiled_program program = test::compile_ok(p);
    const compiled_bucket& bucket = program.buckets[0];
    CHECK(hazard_plans::unseparated_hazards(bucket).empty());
    // Compute nodes only: one queue or not, the same barriers.
    CHECK(bucket.lane.one_queue_barrier_before == bucket.lane.barrier_before);
    aliased += bucket.lane_size_bytes < bucket.unaliased_lane_size_bytes ? 1 : 0;
    // Greedy, as late as each hazard allows: dropping any one barrier
    // leaves a hazard unseparated.
    for (std::size_t n = 0; n < p.nodes.size(); ++n) {
      if (!bucket.lane.barrier_before[n]) continue;
      ++barriers;
      compiled_bucket dropped = bucket;
      dropped.lane.barrier_before[n] = false;
      CHECK_FALSE(hazard_plans::unseparated_hazards(dropped).empty());
    }
  }
  // Exercised, not vacuous: barriers were placed, and plans aliased.
  CHECK(barriers > 40);
  CHECK(aliased > 10);
}

TEST_CASE("barriers: a program loaded from its file has the barriers compile derived", "[binding][barriers]") {
  std::mt19937_64 rng(3);
  const plan p = hazard_plans::generate(rng, {});
  const compiled_program program = test::compile_ok(p);
  const auto bytes = save_compiled_program(program, p);
  REQUIRE(bytes.has_value());
  const auto loaded = load_compiled_program(*bytes, p);
  REQUIRE(loaded.has_value());
  CHECK(loaded->buckets[0].lane.barrier_before == program.buckets[0].lane.barrier_before);
  CHECK(loaded->buckets[0].lane.barriers_per_wave() == program.buckets[0].lane.barriers_per_wave());
}

TEST_CASE("barriers: derive_barriers on a recipe of no nodes derives none", "[binding][barriers]") {
  lane_recipe empty;
  empty.use_begin = {0};
  CHECK(derive_barriers(empty, dependency_graph{}).empty());
}

namespace barriers_test {

std::vector<barrier_scope> scopes_of(const plan& p) { return test::compile_ok(p).buckets.at(0).lane.barrier_scopes; }

// A buffer read or write on the compute queue: a shader's or a copy's.
constexpr sync_scope compute_read{stages::compute_shader | stages::transfer,
                                  accesses::storage_read | accesses::transfer_read};
constexpr sync_scope compute_write{stages::compute_shader | stages::transfer,
                                   accesses::storage_write | accesses::transfer_write};

}  // namespace barriers_test

TEST_CASE("barrier scopes: a read after a write waits for the write's stages and makes its writes visible",
          "[binding][barriers]") {
  const auto scopes = scopes_of(v2_plan({{{0}, {W}}, {{0}, {R}, {0}}}, 1));
  REQUIRE(scopes.size() == 2);
  CHECK(scopes[0].empty());
  CHECK(scopes[1] == barrier_scope{compute_write, compute_read});
  CHECK(scope_text(scopes[1]) ==
        "compute-shader|transfer storage-write|transfer-write -> "
        "compute-shader|transfer storage-read|transfer-read");
}

TEST_CASE("barrier scopes: a write after a read waits for the read's stages and flushes nothing",
          "[binding][barriers]") {
  const auto scopes = scopes_of(v2_plan({{{0}, {R}}, {{0}, {W}}}, 1));
  CHECK(scopes[1] == barrier_scope{{compute_read.stages, 0}, compute_write});
}

TEST_CASE("barrier scopes: a transfer node's side names the transfer stage alone", "[binding][barriers]") {
  const auto scopes = scopes_of(v2_plan({{{0}, {W}}, {{0}, {R}, {0}, queue_kind::transfer}}, 1));
  CHECK(scopes[1] == barrier_scope{compute_write, {stages::transfer, accesses::transfer_read}});
}

TEST_CASE("barrier scopes: a later node that needs no barrier of its own widens the one it relies on",
          "[binding][barriers]") {
  // Node 1 reads r0 after node 0 wrote it (a barrier); node 2 reads r0 as a
  // uniform buffer: no hazard with node 1's read, so no barrier of its own,
  // but node 1's must block its uniform read too.
  const auto scopes = scopes_of(v2_plan({{{0}, {W}}, {{0}, {R}, {0}}, {{0}, {resource_access::uniform}, {0}}}, 1));
  REQUIRE(scopes.size() == 3);
  CHECK(scopes[2].empty());
  CHECK(scopes[1].before == compute_write);
  CHECK(scopes[1].after.covers({stages::compute_shader, accesses::uniform_read}));
  CHECK(scopes[1].after.covers(compute_read));
}

TEST_CASE(
    "barrier scopes: over generated plans every hazard is ordered by the scopes, and weakening a barrier "
    "leaves one unordered",
    "[binding][barriers]") {
  std::mt19937_64 rng(29);
  std::size_t weakened = 0;
  for (int trial = 0; trial < 30; ++trial) {
    INFO("trial " << trial);
    const compiled_program program = test::compile_ok(hazard_plans::generate(rng, {}));
    const compiled_bucket& bucket = program.buckets[0];
    CHECK(hazard_plans::unscoped_hazards(bucket).empty());
    CHECK(bucket.lane.one_queue_barrier_scopes == bucket.lane.barrier_scopes);
    for (std::size_t n = 0; n < bucket.lane.barrier_before.size(); ++n) {
      if (!bucket.lane.barrier_before[n]) {
        CHECK(bucket.lane.barrier_scopes[n].empty());
        continue;
      }
      // Each side's stages, and the writes it flushes, are needed.
      for (int side = 0; side < 3; ++side) {
        compiled_bucket weak = bucket;
        barrier_scope& b = weak.lane.barrier_scopes[n];
        if (side == 0) b.before.stages = 0;
        if (side == 1) b.after.stages = 0;
        if (side == 2) b.after.accesses = 0;
        CHECK_FALSE(hazard_plans::unscoped_hazards(weak).empty());
        ++weakened;
      }
    }
  }
  CHECK(weakened > 90);
}

TEST_CASE("split barriers: a consumer three nodes after its producer waits for an event instead of a barrier",
          "[binding][barriers][split]") {
  // Node 0 writes r0; nodes 1 and 2 write their own; node 3 reads r0.
  const compiled_program program = test::compile_ok(v2_plan({{{0}, {W}}, {{1}, {W}}, {{2}, {W}}, {{0}, {R}, {0}}}, 3));
  const lane_recipe& r = program.buckets.at(0).lane;
  REQUIRE(r.one_queue_barrier_before[3]);
  const split_barriers& s = r.one_queue_split;
  CHECK_FALSE(s.barrier_before[3]);
  CHECK(s.barriers_per_wave() == 0);
  REQUIRE(s.events.size() == 1);
  CHECK(s.events[0].producer == 0);
  CHECK(s.events[0].scope == r.one_queue_barrier_scopes[3]);
  CHECK(s.set_by(0) == 0);
  CHECK(s.set_by(1) == split_barriers::no_event);
  CHECK(std::vector<std::size_t>(s.node_waits(3).begin(), s.node_waits(3).end()) == std::vector<std::size_t>{0});
  CHECK(s.node_waits(1).empty());
  CHECK(hazard_plans::unscoped_hazards(r, {}, r.one_queue_barrier_before, r.one_queue_barrier_scopes, &s).empty());
  // Without the wait, or with it emptied, the read is unordered.
  split_barriers dropped = s;
  dropped.events[0].scope = {};
  CHECK_FALSE(
      hazard_plans::unscoped_hazards(r, {}, r.one_queue_barrier_before, r.one_queue_barrier_scopes, &dropped).empty());
}

TEST_CASE("split barriers: a hazard one node back keeps the barrier, which then serves the far ones too",
          "[binding][barriers][split]") {
  // Node 2 reads r0 (node 0's, two back) and r1 (node 1's, one back).
  const compiled_program program = test::compile_ok(v2_plan({{{0}, {W}}, {{1}, {W}}, {{0, 1}, {R, R}, {0, 1}}}, 2));
  const lane_recipe& r = program.buckets.at(0).lane;
  const split_barriers& s = r.one_queue_split;
  CHECK(s.events.empty());
  CHECK(s.barrier_before == r.one_queue_barrier_before);
  CHECK(s.barrier_scopes == r.one_queue_barrier_scopes);
  // Adjacent: node 1 reads what node 0 wrote.
  const compiled_program adjacent = test::compile_ok(v2_plan({{{0}, {W}}, {{0}, {R}, {0}}}, 1));
  CHECK(adjacent.buckets.at(0).lane.one_queue_split.events.empty());
}

TEST_CASE(
    "split barriers: over generated plans every hazard is ordered by the barriers and events left, and dropping or "
    "weakening an event or barrier leaves one unordered",
    "[binding][barriers][split]") {
  std::mt19937_64 rng(31);
  std::size_t events = 0;
  std::size_t waits = 0;
  std::size_t barriers = 0;
  std::size_t split_barrier_count = 0;
  std::size_t caught = 0;
  std::size_t tried = 0;
  for (int trial = 0; trial < 30; ++trial) {
    INFO("trial " << trial);
    const compiled_program program =
        test::compile_ok(hazard_plans::generate(rng, {12, 10, 3, 2, trial % 2 == 0 ? 0U : 3U}));
    const lane_recipe& r = program.buckets[0].lane;
    for (const bool levels : {false, true}) {
      if (levels && r.order.empty()) continue;
      INFO("level order " << levels);
      const std::span<const std::size_t> order =
          levels ? std::span<const std::size_t>(r.order) : std::span<const std::size_t>();
      const std::vector<bool>& before = levels ? r.ordered_barrier_before : r.one_queue_barrier_before;
      const std::vector<barrier_scope>& scopes = levels ? r.ordered_barrier_scopes : r.one_queue_barrier_scopes;
      const split_barriers& s = levels ? r.ordered_split : r.one_queue_split;
      CHECK(hazard_plans::unscoped_hazards(r, order, before, scopes, &s).empty());
      events += s.events.size();
      waits += s.waits.size();
      barriers += static_cast<std::size_t>(std::count(before.begin(), before.end(), true));
      split_barrier_count += s.barriers_per_wave();
      const auto unordered = [&](const split_barriers& weak) {
        return !hazard_plans::unscoped_hazards(r, order, before, scopes, &weak).empty();
      };
      for (std::size_t e = 0; e < s.events.size(); ++e)
        for (int side = 0; side < 4; ++side) {
          split_barriers weak = s;
          barrier_scope& b = weak.events[e].scope;
          if (side == 0) b = {};
          if (side == 1) b.before.stages = 0;
          if (side == 2) b.after.stages = 0;
          if (side == 3) b.after.accesses = 0;
          ++tried;
          if (unordered(weak)) ++caught;
        }
      for (std::size_t n = 0; n < s.barrier_before.size(); ++n) {
        if (!s.barrier_before[n]) continue;
        split_barriers weak = s;
        weak.barrier_before[n] = false;
        ++tried;
        if (unordered(weak)) ++caught;
      }
    }
  }
  INFO(events << " events, " << waits << " waits; barriers " << barriers << " -> " << split_barrier_count);
  CHECK(events > 20);
  CHECK(split_barrier_count < barriers);
  CHECK(caught == tried);
}
