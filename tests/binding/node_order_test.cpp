// The order a wave submits its nodes in on one queue (ferrum/binding/
// node_order.hpp): by dependency level, every conflicting pair of uses in
// its plan order, and the barriers of that order.
#include "example_plans.hpp"
#include "hazard_plans.hpp"
#include "plan_builder.hpp"

#include "ferrum/binding/barriers.hpp"
#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/node_order.hpp"
#include "ferrum/binding/plan_json.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

using namespace ferrum;

namespace node_order_test {

// Per node its position in `order` (empty: plan order).
std::vector<std::size_t> positions(const std::vector<std::size_t>& order, std::size_t nodes) {
  std::vector<std::size_t> at(nodes);
  for (std::size_t k = 0; k < nodes; ++k) at[order.empty() ? k : order[k]] = k;
  return at;
}

// Whether two nodes' uses conflict: the same lane bytes, one writing; or
// the same image (domain and member), one writing or changing its layout.
bool conflict(const lane_recipe& r, std::size_t i, std::size_t j) {
  const auto transitions = [&](std::size_t n, const lane_use& u) {
    for (const image_transition& t : r.node_transitions(n))
      if (r.images[t.image].domain == u.domain && r.images[t.image].member == u.member) return true;
    return false;
  };
  for (const lane_use& a : r.node_uses(i))
    for (const lane_use& b : r.node_uses(j)) {
      const bool writes = access_writes(a.access) || access_writes(b.access) || transitions(i, a) || transitions(j, b);
      const bool bytes = a.size != 0 && b.size != 0 && a.offset < b.offset + b.size && b.offset < a.offset + a.size;
      const bool image = a.domain == b.domain && a.member == b.member &&
                         std::any_of(r.images.begin(), r.images.end(),
                                     [&](const lane_image& m) { return m.domain == a.domain && m.member == a.member; });
      if (writes && (bytes || image)) return true;
    }
  return false;
}

// Every pair that conflicts, or that `after` relates, keeps its plan order;
// and the images of a pool that may share memory keep theirs.
void check_order_keeps_conflicts(const compiled_program& program, const compiled_bucket& bucket) {
  const lane_recipe& r = bucket.lane;
  const std::vector<std::size_t> at = positions(r.order, program.node_count);
  for (std::size_t j = 0; j < program.node_count; ++j) {
    for (std::size_t a : program.dependencies.after(j)) CHECK(at[a] < at[j]);
    for (std::size_t i = 0; i < j; ++i) {
      INFO("nodes " << i << " and " << j);
      if (conflict(r, i, j)) CHECK(at[i] < at[j]);
    }
  }
}

// A v2 plan of `chains` independent chains of `length` nodes, listed chain
// after chain: node k of a chain reads what node k - 1 wrote.
plan chains_plan(int chains, int length) {
  test::plan_builder b;
  for (int c = 0; c < chains; ++c)
    for (int k = 0; k < length; ++k)
      b.resource(test::workspace_resource("resource/c" + std::to_string(c) + "." + std::to_string(k), "pool/p",
                                          resource_demand::fixed(256)));
  std::vector<std::vector<resource_access>> accesses;
  for (int c = 0; c < chains; ++c)
    for (int k = 0; k < length; ++k) {
      const std::size_t n = static_cast<std::size_t>(c * length + k);
      b.node("node/c" + std::to_string(c) + "." + std::to_string(k), {});
      if (k > 0) b.use(n, "resource/c" + std::to_string(c) + "." + std::to_string(k - 1));
      b.use(n, "resource/c" + std::to_string(c) + "." + std::to_string(k));
      accesses.push_back(k > 0 ? std::vector{resource_access::read, resource_access::write}
                               : std::vector{resource_access::write});
    }
  plan p = b.bucket("step", {1, 1, 1}, {{"pool/p", 0, 1 << 20}}).budget(1 << 24).build();
  p.format = plan_format::v2;
  p.cull = false;  // every node, whether anything reads what it writes or not
  for (std::size_t n = 0; n < p.nodes.size(); ++n) p.nodes[n].access = accesses[n];
  return p;
}

std::size_t count(const std::vector<bool>& v) { return static_cast<std::size_t>(std::count(v.begin(), v.end(), true)); }

}  // namespace node_order_test

using namespace node_order_test;

TEST_CASE("node order: chains listed one after another are submitted level by level, one barrier a level",
          "[binding][node_order]") {
  const compiled_program program = test::compile_ok(chains_plan(2, 3));
  const lane_recipe& r = program.buckets[0].lane;
  CHECK(r.order == std::vector<std::size_t>{0, 3, 1, 4, 2, 5});
  // Plan order: a barrier before every node but each chain's first.
  CHECK(count(r.one_queue_barrier_before) == 4);
  // Level order: one before each level after the first.
  CHECK(r.ordered_barrier_before == std::vector<bool>{false, true, true, false, false, false});
  CHECK(hazard_plans::unscoped_hazards(r, r.order, r.ordered_barrier_before, r.ordered_barrier_scopes).empty());
  std::vector<std::size_t> levels;
  CHECK(level_order(r, program.dependencies, &levels) == r.order);
  CHECK(levels == std::vector<std::size_t>{0, 1, 2, 0, 1, 2});
}

TEST_CASE("node order: a plan already listed level by level, and one with transfer nodes, keep plan order",
          "[binding][node_order]") {
  const compiled_program chain = test::compile_ok(chains_plan(1, 4));
  CHECK(chain.buckets[0].lane.order.empty());
  CHECK(chain.buckets[0].lane.ordered_barrier_before.empty());
  plan p = chains_plan(2, 2);
  p.nodes[3].queue = queue_kind::transfer;
  p.nodes[3].after.push_back(p.nodes[2].id);
  const compiled_program two_queues = test::compile_ok(p);
  CHECK(two_queues.buckets[0].lane.order.empty());
}

TEST_CASE(
    "node order: over generated plans every conflicting pair keeps its order, every hazard is ordered by the "
    "new order's barriers, and each of them is needed",
    "[binding][node_order]") {
  std::mt19937_64 rng(41);
  std::size_t plan_barriers = 0;
  std::size_t ordered_barriers = 0;
  std::size_t reordered = 0;
  for (int trial = 0; trial < 30; ++trial) {
    INFO("trial " << trial);
    const compiled_program program =
        test::compile_ok(hazard_plans::generate(rng, {20, 12, 3, 2, trial % 2 == 0 ? 0U : 3U}));
    const compiled_bucket& bucket = program.buckets[0];
    const lane_recipe& r = bucket.lane;
    check_order_keeps_conflicts(program, bucket);
    plan_barriers += count(r.one_queue_barrier_before);
    if (r.order.empty()) {
      ordered_barriers += count(r.one_queue_barrier_before);
      continue;
    }
    ++reordered;
    ordered_barriers += count(r.ordered_barrier_before);
    CHECK(hazard_plans::unscoped_hazards(r, r.order, r.ordered_barrier_before, r.ordered_barrier_scopes).empty());
    for (std::size_t n = 0; n < r.ordered_barrier_before.size(); ++n) {
      if (!r.ordered_barrier_before[n]) continue;
      std::vector<bool> dropped = r.ordered_barrier_before;
      dropped[n] = false;
      CHECK_FALSE(hazard_plans::unscoped_hazards(r, r.order, dropped, r.ordered_barrier_scopes).empty());
    }
  }
  CHECK(reordered > 10);
  INFO("barriers: " << plan_barriers << " in plan order, " << ordered_barriers << " in level order");
  CHECK(ordered_barriers < plan_barriers);
}

TEST_CASE("node order: the example frames keep every conflicting pair, and images that may share memory, in order",
          "[binding][node_order]") {
  for (const char* name : {"frame_chains.json", "deferred_frame.json", "images.json", "history.json"}) {
    INFO(name);
    const compiled_program program = test::compile_ok(test::load_source_plan(std::string("examples/plans/") + name));
    for (const compiled_bucket& bucket : program.buckets) {
      check_order_keeps_conflicts(program, bucket);
      const lane_recipe& r = bucket.lane;
      const std::vector<std::size_t> at = positions(r.order, program.node_count);
      // Images that may share memory (one's interval ended before the
      // other's began): every use of the first before any of the second.
      std::size_t pairs = 0;
      for (const lane_image& a : r.images)
        for (const lane_image& b : r.images) {
          if (!a.aliasable || !b.aliasable || a.domain != b.domain || a.live.last >= b.live.first) continue;
          ++pairs;
          for (std::size_t i = 0; i < program.node_count; ++i)
            for (std::size_t j = 0; j < program.node_count; ++j) {
              const auto uses = [&](std::size_t n, const lane_image& m) {
                const auto u = r.node_uses(n);
                return std::any_of(u.begin(), u.end(),
                                   [&](const lane_use& x) { return x.domain == m.domain && x.member == m.member; });
              };
              if (uses(i, a) && uses(j, b)) CHECK(at[i] < at[j]);
            }
        }
      if (std::string(name) == "frame_chains.json") CHECK(pairs > 0);
    }
  }
}

TEST_CASE("node order: a level of image passes takes one barrier, its first node making the level's layout changes",
          "[binding][node_order]") {
  // Two chains of three compute passes over images of a conservative pool,
  // listed chain after chain: pass k samples pass k - 1's image and writes
  // its own. Every pass changes layouts, so in plan order each opens with a
  // barrier.
  nlohmann::json resources = nlohmann::json::array();
  nlohmann::json nodes = nlohmann::json::array();
  for (int c = 0; c < 2; ++c)
    for (int k = 0; k < 3; ++k) {
      const std::string image = "image/c" + std::to_string(c) + "." + std::to_string(k);
      resources.push_back({{"id", image},
                           {"pool", "pool/images"},
                           {"kind", "workspace"},
                           {"lifetime", "invocation"},
                           {"image", {{"format", "rgba16-float"}, {"extent", "bucket"}}}});
      nlohmann::json node = {{"id", "node/c" + std::to_string(c) + "." + std::to_string(k)},
                             {"resources", {image}},
                             {"access", {{image, "storage-write"}}}};
      if (k > 0) {
        const std::string input = "image/c" + std::to_string(c) + "." + std::to_string(k - 1);
        node["resources"].push_back(input);
        node["access"][input] = "sampled";
        node["after"] = {"node/c" + std::to_string(c) + "." + std::to_string(k - 1)};
      }
      nodes.push_back(node);
    }
  const nlohmann::json doc = {{"format", "ferrum.plan.v2"},
                              {"cull", false},
                              {"resources", resources},
                              {"nodes", nodes},
                              {"buckets",
                               {{{"class", "frame"},
                                 {"capacity", {16, 16, 1}},
                                 {"budgets", {{{"pool", "pool/images"}, {"min", 0}, {"max", 1 << 24}}}}}}},
                              {"lanes", 1},
                              {"budget_bytes", 1 << 26}};
  auto parsed = parse_plan(doc.dump());
  REQUIRE(parsed.has_value());
  const compiled_program program = test::compile_ok(*parsed);
  const lane_recipe& r = program.buckets[0].lane;
  REQUIRE(r.order == std::vector<std::size_t>{0, 3, 1, 4, 2, 5});
  CHECK(r.level_begin == std::vector<std::size_t>{0, 2, 4, 6});
  CHECK(count(r.one_queue_barrier_before) == 6);
  CHECK(r.ordered_barrier_before == std::vector<bool>{true, true, true, false, false, false});
  // Node 1 opens level 1 with node 4's layout changes and its own; node 4
  // makes none.
  std::vector<std::size_t> made_for;
  r.for_each_transition(1, true, [&](std::size_t m, const image_transition&) { made_for.push_back(m); });
  CHECK(std::count(made_for.begin(), made_for.end(), std::size_t{1}) == 2);
  CHECK(std::count(made_for.begin(), made_for.end(), std::size_t{4}) == 2);
  std::size_t node4 = 0;
  r.for_each_transition(4, true, [&](std::size_t, const image_transition&) { ++node4; });
  CHECK(node4 == 0);
  r.for_each_transition(4, false, [&](std::size_t, const image_transition&) { ++node4; });
  CHECK(node4 == 2);
  // Its scope blocks both nodes' uses of their images.
  CHECK(r.ordered_barrier_scopes[1].after.covers(
      {stages::compute_shader, accesses::storage_write | accesses::sampled_read}));
}
