// A frame's data dependencies and critical path, and the bound on what a
// second queue could save (ferrum/binding/critical_path.hpp).
#include "example_plans.hpp"
#include "hazard_plans.hpp"
#include "pinned_digests.hpp"
#include "plan_builder.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/critical_path.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace ferrum;

namespace critical_path_test {

// A v2 plan on one queue from a line per node: "w0" writes resource/r0,
// "r1" reads resource/r1, "x2" reads and writes resource/r2, "a0" runs
// after node 0 (node n is node/<n>). Each resource has its own 256 bytes.
plan plan_of(const std::vector<std::string>& nodes, int resources) {
  test::plan_builder b;
  for (int r = 0; r < resources; ++r)
    b.resource(test::workspace_resource("resource/r" + std::to_string(r), "pool/p", resource_demand::fixed(256)));
  for (std::size_t n = 0; n < nodes.size(); ++n) b.node("node/" + std::to_string(n), {});
  plan p = b.bucket("step", {1, 1, 1}, {{"pool/p", 0, 1 << 20}}).budget(1 << 24).build();
  p.format = plan_format::v2;
  p.cull = false;  // every node, whether anything reads what it writes or not
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    std::istringstream words(nodes[n]);
    for (std::string word; words >> word;) {
      const std::string number = word.substr(1);
      if (word[0] == 'a') {
        p.nodes[n].after.push_back(p.nodes.at(std::stoul(number)).id);
        continue;
      }
      p.nodes[n].resources.push_back(test::id<resource_id>("resource/r" + number));
      p.nodes[n].access.push_back(word[0] == 'w'   ? resource_access::write
                                  : word[0] == 'r' ? resource_access::read
                                                   : resource_access::read_write);
    }
  }
  return p;
}

data_dependencies dependencies_of(const compiled_program& program) {
  return derive_data_dependencies(program.buckets.at(0).lane, program.dependencies);
}

data_dependencies dependencies_of(const std::vector<std::string>& nodes, int resources) {
  return dependencies_of(test::compile_ok(plan_of(nodes, resources)));
}

// Per node, its dependencies.
std::vector<std::vector<std::size_t>> lists(const data_dependencies& deps) {
  std::vector<std::vector<std::size_t>> out;
  for (std::size_t n = 0; n < deps.size(); ++n) out.emplace_back(deps.of(n).begin(), deps.of(n).end());
  return out;
}

using list = std::vector<std::vector<std::size_t>>;

}  // namespace critical_path_test

using namespace critical_path_test;

TEST_CASE("critical path: a chain is the whole frame, and a second queue saves nothing", "[binding][critical_path]") {
  const data_dependencies deps = dependencies_of({"w0", "r0 w1", "r1 w2"}, 3);
  CHECK(lists(deps) == list{{}, {0}, {1}});
  const std::vector<std::uint64_t> ns{100, 200, 300};
  const critical_path cp = find_critical_path(deps, ns);
  CHECK(cp.serial_ns == 600);
  CHECK(cp.critical_path_ns == 600);
  CHECK(cp.path == std::vector<std::size_t>{0, 1, 2});
  CHECK(cp.async_bound_ns == 0);
}

TEST_CASE("critical path: of two independent branches the longer, and the bound the work's half allows",
          "[binding][critical_path]") {
  // Nodes 0 -> 1 on r0, nodes 2 -> 3 on r1.
  const data_dependencies deps = dependencies_of({"w0", "r0", "w1", "r1"}, 2);
  CHECK(lists(deps) == list{{}, {0}, {}, {2}});
  // The path bounds the frame: 400 - 300.
  const std::vector<std::uint64_t> uneven{100, 200, 50, 50};
  const critical_path cp = find_critical_path(deps, uneven);
  CHECK(cp.serial_ns == 400);
  CHECK(cp.critical_path_ns == 300);
  CHECK(cp.path == std::vector<std::size_t>{0, 1});
  CHECK(cp.async_bound_ns == 100);
  // The work's half bounds it: the path is 200 of 500, two queues take 250.
  const std::vector<std::uint64_t> even{100, 100, 150, 150};
  const critical_path half = find_critical_path(deps, even);
  CHECK(half.critical_path_ns == 300);
  CHECK(half.path == std::vector<std::size_t>{2, 3});
  CHECK(half.async_bound_ns == 200);
  const std::vector<std::uint64_t> shorter{100, 100, 100, 101};
  CHECK(find_critical_path(deps, shorter).async_bound_ns == 401 - 201);
  // Whole nanoseconds: 3 independent nodes of 1 ns take 2 on two queues.
  const std::vector<std::uint64_t> ones{1, 1, 1};
  const critical_path odd = find_critical_path(dependencies_of({"w0", "w1", "w2"}, 3), ones);
  CHECK(odd.critical_path_ns == 1);
  CHECK(odd.async_bound_ns == 1);
  CHECK(async_bound(3, 1) == 1);
  CHECK(async_bound(10, 7) == 3);
  CHECK(async_bound(10, 2) == 5);
  CHECK(async_bound(0, 0) == 0);
}

TEST_CASE("critical path: byte conflicts alone make edges: read after write, write after read and after write",
          "[binding][critical_path]") {
  CHECK(lists(dependencies_of({"w0", "r0"}, 1)) == list{{}, {0}});
  CHECK(lists(dependencies_of({"r0", "w0"}, 1)) == list{{}, {0}});
  CHECK(lists(dependencies_of({"w0", "w0"}, 1)) == list{{}, {0}});
  CHECK(lists(dependencies_of({"w0", "x0"}, 1)) == list{{}, {0}});
  // Two reads are no conflict; disjoint bytes none either.
  CHECK(lists(dependencies_of({"r0", "r0"}, 1)) == list{{}, {}});
  CHECK(lists(dependencies_of({"w0", "w1", "r1"}, 2)) == list{{}, {}, {1}});
  // A write waits for every read since the last write, and for that write;
  // a read after it waits for it alone (the earlier ones through it).
  const data_dependencies deps = dependencies_of({"w0", "r0", "r0", "w0", "r0"}, 1);
  CHECK(lists(deps) == list{{}, {0}, {0}, {0, 1, 2}, {3}});
  CHECK(deps.has(2, 3));
  CHECK_FALSE(deps.has(0, 4));
  // A node that reads and writes a resource waits for the write before it;
  // the next reader waits for it alone.
  CHECK(lists(dependencies_of({"w0", "x0", "r0"}, 1)) == list{{}, {0}, {1}});
}

TEST_CASE("critical path: after alone makes edges", "[binding][critical_path]") {
  const data_dependencies deps = dependencies_of({"w0", "w1 a0", "w2 a0 a1"}, 3);
  CHECK(lists(deps) == list{{}, {0}, {0, 1}});
  const std::vector<std::uint64_t> ns{10, 20, 30};
  const critical_path cp = find_critical_path(deps, ns);
  CHECK(cp.critical_path_ns == 60);
  CHECK(cp.path == std::vector<std::size_t>{0, 1, 2});
  // A v1 plan's nodes each run after the one before: a chain.
  plan v1 = plan_of({"w0", "w1", "w2"}, 3);
  v1.format = plan_format::v1;
  v1.cull = true;  // a v1 plan culls nothing
  for (plan_node& n : v1.nodes) n.access.clear();
  CHECK(lists(dependencies_of(test::compile_ok(v1))) == list{{}, {0}, {1}});
}

TEST_CASE("critical path: an empty program, and nodes past the durations", "[binding][critical_path]") {
  const data_dependencies none = derive_data_dependencies(lane_recipe{}, dependency_graph{});
  CHECK(none.size() == 0);
  const critical_path cp = find_critical_path(none, {});
  CHECK(cp.serial_ns == 0);
  CHECK(cp.critical_path_ns == 0);
  CHECK(cp.path.empty());
  CHECK(cp.async_bound_ns == 0);
  // Durations for the first node alone: the rest take 0.
  const std::vector<std::uint64_t> first{7};
  const critical_path short_span = find_critical_path(dependencies_of({"w0", "r0"}, 1), first);
  CHECK(short_span.serial_ns == 7);
  CHECK(short_span.critical_path_ns == 7);
  CHECK(short_span.path == std::vector<std::size_t>{0, 1});
}

TEST_CASE("critical path: an image's uses conflict where one changes its layout", "[binding][critical_path]") {
  // images.json: node/keep (4) copies image/resolved out (transfer-src),
  // node/tonemap (5) runs after node/taa alone and reads it as storage:
  // two reads, but tonemap's layout change waits for keep's copy.
  const plan p = test::load_source_plan(pinned::images_hash.plan_file);
  REQUIRE(p.nodes.at(4).id.view() == "node/keep");
  REQUIRE(p.nodes.at(5).id.view() == "node/tonemap");
  const data_dependencies deps = dependencies_of(test::compile_ok(p));
  CHECK(deps.has(4, 5));
  CHECK(deps.has(3, 5));
  CHECK_FALSE(deps.has(4, 4));
}

TEST_CASE("critical path: against brute force over generated plans", "[binding][critical_path]") {
  std::mt19937_64 rng(54);
  for (int round = 0; round < 20; ++round) {
    const plan p = hazard_plans::generate(rng, {.nodes = 12});
    const compiled_program program = test::compile_ok(p);
    const lane_recipe& lane = program.buckets.at(0).lane;
    const dependency_graph& graph = program.dependencies;
    const std::size_t nodes = graph.size();
    // Every pair that must be ordered: `after`, or uses of overlapping
    // bytes where one writes (no images here).
    std::vector<std::vector<bool>> must(nodes, std::vector<bool>(nodes, false));
    for (std::size_t j = 0; j < nodes; ++j) {
      for (std::size_t a : graph.after(j)) must[a][j] = true;
      for (std::size_t i = 0; i < j; ++i)
        for (const lane_use& x : lane.node_uses(i))
          for (const lane_use& y : lane.node_uses(j))
            if (x.offset < y.offset + y.size && y.offset < x.offset + x.size &&
                (access_writes(x.access) || access_writes(y.access)))
              must[i][j] = true;
    }
    const data_dependencies deps = derive_data_dependencies(lane, graph);
    REQUIRE(deps.size() == nodes);
    // Every edge listed is such a pair; every such pair is a path of edges.
    std::vector<std::vector<bool>> reach(nodes, std::vector<bool>(nodes, false));
    for (std::size_t j = 0; j < nodes; ++j)
      for (std::size_t i : deps.of(j)) {
        CHECK(must[i][j]);
        reach[i][j] = true;
        for (std::size_t k = 0; k < i; ++k)
          if (reach[k][i]) reach[k][j] = true;
      }
    for (std::size_t j = 0; j < nodes; ++j)
      for (std::size_t i = 0; i < j; ++i)
        if (must[i][j]) CHECK(reach[i][j]);
    // The longest path over every pair, against the one over the edges.
    std::vector<std::uint64_t> ns(nodes);
    for (std::uint64_t& d : ns) d = rng() % 1000;
    std::vector<std::uint64_t> finish(nodes, 0);
    std::uint64_t longest = 0;
    std::uint64_t serial = 0;
    for (std::size_t j = 0; j < nodes; ++j) {
      for (std::size_t i = 0; i < j; ++i)
        if (must[i][j]) finish[j] = std::max(finish[j], finish[i]);
      finish[j] += ns[j];
      longest = std::max(longest, finish[j]);
      serial += ns[j];
    }
    const critical_path cp = find_critical_path(deps, ns);
    CHECK(cp.serial_ns == serial);
    CHECK(cp.critical_path_ns == longest);
    CHECK(cp.async_bound_ns == async_bound(serial, longest));
    // The path is one of the graph's, its durations summing to its length.
    std::uint64_t along = 0;
    for (std::size_t k = 0; k < cp.path.size(); ++k) {
      along += ns[cp.path[k]];
      if (k > 0) CHECK(deps.has(cp.path[k - 1], cp.path[k]));
    }
    CHECK(along == cp.critical_path_ns);
  }
}
