// Tests of what `ferrum run`'s checks do with each resource listing
// (tools/listing_checks.hpp): who writes, whose pattern each listing
// expects, who checks a transfer node's listings, and what is reported as
// unchecked.
#include "listing_checks.hpp"

#include "plan_builder.hpp"

#include "ferrum/binding/dependency_graph.hpp"
#include "ferrum/binding/plan_json.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace {

using ferrum::tools::listing_check;
using expectation = listing_check::expectation;
using reason = listing_check::unchecked_reason;

ferrum::plan example(const char* name) {
  std::ifstream in(std::string(FERRUM_SOURCE_DIR) + "/examples/plans/" + name, std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto parsed = ferrum::parse_plan(text);
  REQUIRE(parsed.has_value());
  return *parsed;
}

std::vector<listing_check> listings_of(const ferrum::plan& p) {
  auto graph = ferrum::compile_dependency_graph(p);
  REQUIRE(graph.has_value());
  return ferrum::tools::plan_listing_checks(p, *graph);
}

// The listing of `resource` at `node`.
const listing_check& at(const ferrum::plan& p, const std::vector<listing_check>& listings, std::string_view node,
                        std::string_view resource) {
  for (const listing_check& l : listings)
    if (p.nodes[l.node].id.view() == node && p.nodes[l.node].resources[l.position].view() == resource) return l;
  FAIL("no listing of " << resource << " at " << node);
  return listings.front();
}

// A v2 node of a plan built in code: only what the checks read (ids,
// resources, queue, dependencies) is filled in.
ferrum::plan_node node(std::string_view id, ferrum::queue_kind queue, std::initializer_list<std::string_view> after,
                       std::initializer_list<std::string_view> resources) {
  ferrum::plan_node n;
  n.id = ferrum::test::id<ferrum::node_id>(id);
  n.queue = queue;
  for (std::string_view a : after) n.after.push_back(ferrum::test::id<ferrum::node_id>(a));
  for (std::string_view r : resources) n.resources.push_back(ferrum::test::id<ferrum::resource_id>(r));
  return n;
}

constexpr auto compute = ferrum::queue_kind::compute;
constexpr auto transfer = ferrum::queue_kind::transfer;

}  // namespace

TEST_CASE("listing_checks: in a v1 plan every listing writes and expects the listing before it", "[tools]") {
  const ferrum::plan p = example("interval_liveness.json");
  const std::vector<listing_check> listings = listings_of(p);
  REQUIRE(listings.size() == 14);
  for (const listing_check& l : listings) {
    CHECK(l.writes);
    CHECK(l.checker == l.node);
    CHECK(l.unchecked == reason::checked);
    if (l.before != expectation::this_wave) continue;
    // The writer is the resource's latest user before this one.
    const std::string_view id = p.nodes[l.node].resources[l.position].view();
    CHECK(p.nodes[l.writer[0]].resources[l.writer[1]].view() == id);
    CHECK(l.writer[0] < l.node);
    for (std::size_t between = l.writer[0] + 1; between < l.node; ++between)
      for (const auto& r : p.nodes[between].resources) CHECK(r.view() != id);
  }
  // The first user of an invocation resource expects nothing.
  CHECK(at(p, listings, "node/load", "resource/scratch.decode").before == expectation::nothing);
  CHECK(at(p, listings, "node/load", "resource/scratch.decode").read_later);
}

TEST_CASE("listing_checks: users ordered only through their common writer check its pattern and do not write",
          "[tools]") {
  // two_queues.json with node/readback on the compute queue and node/shade
  // not after it: both read-write resource/state after node/simulate with
  // no order between them (on two queues, compile refuses that:
  // unordered_hazard).
  ferrum::plan p = example("two_queues.json");
  p.nodes[2].queue = compute;
  p.nodes[3].after.pop_back();
  const std::vector<listing_check> listings = listings_of(p);
  const listing_check& simulate = at(p, listings, "node/simulate", "resource/state");
  CHECK(simulate.writes);
  CHECK(simulate.read_later);
  for (const char* user : {"node/readback", "node/shade"}) {
    INFO(user);
    const listing_check& l = at(p, listings, user, "resource/state");
    CHECK_FALSE(l.writes);
    CHECK(l.before == expectation::this_wave);
    CHECK(l.writer == std::array<std::size_t, 2>{simulate.node, simulate.position});
    CHECK(l.unchecked == reason::checked);
  }
  // resource/staging: node/upload, then node/simulate after it, on the other queue.
  const listing_check& staging = at(p, listings, "node/simulate", "resource/staging");
  CHECK(staging.writes);
  CHECK(staging.writer == std::array<std::size_t, 2>{0, 1});
  for (const listing_check& l : listings) CHECK(l.unchecked == reason::checked);
}

TEST_CASE("listing_checks: the first compute node that runs after a transfer node checks its listings", "[tools]") {
  const ferrum::plan p = example("two_queues.json");
  const std::vector<listing_check> listings = listings_of(p);
  // node/upload (0) is checked by node/simulate (1), node/readback (2) by
  // node/shade (3), which runs after it; with node/shade not after it (and
  // node/readback no longer reading resource/state, which node/shade
  // writes), by node/compose (4).
  for (const listing_check& l : listings) {
    INFO(p.nodes[l.node].id.str());
    const std::size_t expected = l.node == 0 ? 1 : l.node == 2 ? 3 : l.node;
    CHECK(l.checker == expected);
  }
  ferrum::plan unordered = p;
  unordered.nodes[3].after.pop_back();
  REQUIRE(unordered.nodes[2].resources[1].view() == "resource/state");
  unordered.nodes[2].resources.erase(unordered.nodes[2].resources.begin() + 1);
  REQUIRE(ferrum::validate_plan(unordered).has_value());
  const std::vector<listing_check> later = listings_of(unordered);
  for (const listing_check& l : later) {
    INFO(unordered.nodes[l.node].id.str());
    const std::size_t expected = l.node == 0 ? 1 : l.node == 2 ? 4 : l.node;
    CHECK(l.checker == expected);
  }
}

TEST_CASE("listing_checks: a persistent resource's users before any writer expect its last writer's pattern",
          "[tools]") {
  const ferrum::plan p = example("two_queues.json");
  const std::vector<listing_check> listings = listings_of(p);
  const listing_check& frame = at(p, listings, "node/compose", "resource/frame");
  CHECK(frame.writes);
  CHECK(frame.before == expectation::previous_wave);
  CHECK(frame.writer == std::array<std::size_t, 2>{frame.node, frame.position});
}

TEST_CASE("listing_checks: order is found through chains of dependencies, and unordered first users are unchecked",
          "[tools]") {
  // node/x runs first and before nothing else, so no node's leading
  // dependencies cover node/a: only a walk finds that node/d runs after it.
  ferrum::plan p;
  p.format = ferrum::plan_format::v2;
  p.nodes = {node("node/x", compute, {}, {"resource/other"}),
             node("node/a", compute, {}, {"resource/chained", "resource/shared"}),
             node("node/b", compute, {"node/a"}, {"resource/other"}),
             node("node/d", compute, {"node/b"}, {"resource/chained"}),
             node("node/y", compute, {"node/x"}, {"resource/shared"})};
  for (const char* r : {"resource/other", "resource/chained", "resource/shared"})
    p.resources.push_back(ferrum::test::workspace_resource(r, "pool/transient", ferrum::resource_demand::fixed(256)));
  const std::vector<listing_check> listings = listings_of(p);

  CHECK(at(p, listings, "node/a", "resource/chained").writes);
  const listing_check& chained = at(p, listings, "node/d", "resource/chained");
  CHECK(chained.writes);
  CHECK(chained.before == expectation::this_wave);
  CHECK(chained.writer == std::array<std::size_t, 2>{1, 0});
  // node/x and node/b are not ordered (node/b runs after node/a, not
  // node/x), nor are node/a and node/y: none of them writes, and nothing is
  // written before any of them.
  for (const auto& [n, r] : {std::array<std::string_view, 2>{"node/x", "resource/other"},
                             std::array<std::string_view, 2>{"node/b", "resource/other"},
                             std::array<std::string_view, 2>{"node/a", "resource/shared"},
                             std::array<std::string_view, 2>{"node/y", "resource/shared"}}) {
    INFO(n << " " << r);
    const listing_check& l = at(p, listings, n, r);
    CHECK_FALSE(l.writes);
    CHECK(l.before == expectation::nothing);
    CHECK(l.unchecked == reason::unordered_users);
    CHECK(ferrum::tools::describe_unchecked(p, l) ==
          std::string(r) + " at " + std::string(n) +
              ": not ordered against every other user, and no user before it writes it");
  }
}

TEST_CASE("listing_checks: a transfer node that no compute node runs after is reported unchecked", "[tools]") {
  ferrum::plan p;
  p.format = ferrum::plan_format::v2;
  p.nodes = {node("node/make", compute, {}, {"resource/data"}),
             node("node/copy", transfer, {"node/make"}, {"resource/data", "resource/out"}),
             node("node/side", compute, {"node/make"}, {"resource/side"})};
  for (const char* r : {"resource/data", "resource/out", "resource/side"})
    p.resources.push_back(ferrum::test::workspace_resource(r, "pool/transient", ferrum::resource_demand::fixed(256)));
  const std::vector<listing_check> listings = listings_of(p);
  for (const char* r : {"resource/data", "resource/out"}) {
    INFO(r);
    const listing_check& l = at(p, listings, "node/copy", r);
    CHECK(l.writes);  // still written: every user of each is ordered
    CHECK(l.checker == listing_check::none);
    CHECK(l.unchecked == reason::no_later_compute_node);
    CHECK(ferrum::tools::describe_unchecked(p, l) ==
          std::string(r) + " at node/copy: a transfer node that no compute node runs after");
  }
  const listing_check& make = at(p, listings, "node/make", "resource/data");
  CHECK(make.unchecked == reason::checked);
  CHECK(ferrum::tools::describe_unchecked(p, make).empty());
}
