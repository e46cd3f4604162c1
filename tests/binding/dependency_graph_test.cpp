// Tests of the dependency graph (ferrum.plan.v2's `queue` and `after`): what
// it compiles to, every rejection with its code and path, its place in the
// plan hash, and what it does to interval liveness — two resources share
// bytes only when every user of one runs after every user of the other.
#include "ferrum/binding/dependency_graph.hpp"

#include "example_plans.hpp"
#include "plan_builder.hpp"

#include <algorithm>
#include <random>
#include <set>

using namespace ferrum;
using test::code_of;
using test::id;

namespace {

// A v2 plan of binding nodes n0..n<count-1>, node i running on `queues[i]`
// after the nodes `after[i]` names by number.
plan v2_plan(const std::vector<std::vector<int>>& after, const std::vector<queue_kind>& queues = {}) {
  test::plan_builder b;
  for (std::size_t i = 0; i < after.size(); ++i)
    b.binding_node("node/n" + std::to_string(i), "resource/n" + std::to_string(i), 64);
  b.bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 1 << 20}});
  plan p = b.build();
  p.format = plan_format::v2;
  for (std::size_t i = 0; i < after.size(); ++i) {
    for (int d : after[i]) p.nodes[i].after.push_back(id<node_id>("node/n" + std::to_string(d)));
    if (i < queues.size()) p.nodes[i].queue = queues[i];
  }
  return p;
}

void check_graph_rejected(const plan& p, errc code, std::string_view path) {
  const auto graph = compile_dependency_graph(p);
  CHECK(code_of(graph) == code);
  CHECK(graph.error().path == path);
  // validate_plan and compile give the same error.
  CHECK(code_of(validate_plan(p)) == code);
  CHECK(code_of(compile(p)) == code);
}

std::vector<std::size_t> after_of(const dependency_graph& g, std::size_t n) {
  return {g.after(n).begin(), g.after(n).end()};
}

}  // namespace

TEST_CASE("dependency_graph: a v1 plan is a chain on the compute queue", "[binding][dependencies]") {
  const plan p = test::plan_builder()
                     .binding_node("node/a", "resource/a", 64)
                     .binding_node("node/b", "resource/b", 64)
                     .binding_node("node/c", "resource/c", 64)
                     .bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 192}})
                     .build();
  const dependency_graph g = compile_dependency_graph(p).value();
  REQUIRE(g.size() == 3);
  CHECK(g.sequential());
  CHECK_FALSE(g.uses_transfer());
  CHECK(after_of(g, 0).empty());
  CHECK(after_of(g, 1) == std::vector<std::size_t>{0});
  CHECK(after_of(g, 2) == std::vector<std::size_t>{1});
  for (std::size_t n = 0; n < 3; ++n) {
    CHECK(g.queue(n) == queue_kind::compute);
    CHECK(g.done_before(n) == n);
  }
  CHECK(test::compile_ok(p).dependencies == g);
}

TEST_CASE("dependency_graph: a v2 plan keeps its queues and dependencies, ascending", "[binding][dependencies]") {
  // n0 (transfer) -> n1 -> {n2 (transfer), n3} -> n4, listed out of order.
  const plan p = v2_plan({{}, {0}, {1}, {1}, {3, 2}},
                         {queue_kind::transfer, queue_kind::compute, queue_kind::transfer, queue_kind::compute});
  const dependency_graph g = compile_dependency_graph(p).value();
  CHECK_FALSE(g.sequential());
  CHECK(g.uses_transfer());
  CHECK(g.queue(0) == queue_kind::transfer);
  CHECK(g.queue(2) == queue_kind::transfer);
  CHECK(g.queue(4) == queue_kind::compute);
  CHECK(after_of(g, 4) == std::vector<std::size_t>{2, 3});
  CHECK(after_of(g, 3) == std::vector<std::size_t>{1});
  // n2 and n3 are independent: n3 has only 0..1 done before it; n4 waits for
  // everything before it.
  CHECK(g.done_before(2) == 2);
  CHECK(g.done_before(3) == 2);
  CHECK(g.done_before(4) == 4);
  CHECK(test::compile_ok(p).dependencies == g);

  // A v2 plan that chains its nodes is sequential, like v1.
  CHECK(compile_dependency_graph(v2_plan({{}, {0}, {1}})).value().sequential());
  // Independent nodes are not.
  const dependency_graph free = compile_dependency_graph(v2_plan({{}, {}, {}})).value();
  CHECK_FALSE(free.sequential());
  CHECK(free.done_before(2) == 0);
}

TEST_CASE("dependency_graph: a v1 plan may not name a queue or dependencies", "[binding][dependencies]") {
  plan p = v2_plan({{}, {0}});
  p.format = plan_format::v1;
  check_graph_rejected(p, errc::unknown_field, "/nodes/1/after");
  CHECK(validate_plan(p).error().detail == "field 'after' is not defined in ferrum.plan.v1; use ferrum.plan.v2");
  p.nodes[1].after.clear();
  p.nodes[1].queue = queue_kind::transfer;
  check_graph_rejected(p, errc::unknown_field, "/nodes/1/queue");
  CHECK(validate_plan(p).error().detail == "field 'queue' is not defined in ferrum.plan.v1; use ferrum.plan.v2");
}

TEST_CASE("dependency_graph: each bad dependency has its own code and path", "[binding][dependencies]") {
  SECTION("a queue that is not a kind") {
    plan p = v2_plan({{}, {0}});
    p.nodes[1].queue = static_cast<queue_kind>(7);
    check_graph_rejected(p, errc::unknown_queue, "/nodes/1/queue");
  }
  SECTION("a dependency on a node the plan does not define") {
    plan p = v2_plan({{}, {0}});
    p.nodes[1].after.push_back(id<node_id>("node/missing"));
    check_graph_rejected(p, errc::dangling_dependency, "/nodes/1/after/1");
    CHECK(validate_plan(p).error().detail.find("'node/missing'") != std::string::npos);
  }
  SECTION("the same dependency twice") {
    check_graph_rejected(v2_plan({{}, {}, {0, 1, 0}}), errc::duplicate_dependency, "/nodes/2/after/2");
  }
  SECTION("a node after itself") {
    check_graph_rejected(v2_plan({{}, {1}}), errc::dependency_cycle, "/nodes/1/after/0");
  }
  SECTION("a cycle through three nodes is named node by node, with the edge that closes it") {
    // n1 after n3, n3 after n2, n2 after n1.
    const plan p = v2_plan({{}, {0, 3}, {1}, {2}});
    check_graph_rejected(p, errc::dependency_cycle, "/nodes/2/after/0");
    CHECK(validate_plan(p).error().detail ==
          "a cycle of 3 nodes: node 'node/n1' runs after node 'node/n3' runs after node 'node/n2' runs after node "
          "'node/n1'; to break it, remove node 'node/n1' from the 'after' of node 'node/n2'");
  }
  SECTION("an acyclic dependency on a node listed later") {
    const plan p = v2_plan({{1}, {}, {0}});
    check_graph_rejected(p, errc::dependency_not_earlier, "/nodes/0/after/0");
    CHECK(validate_plan(p).error().detail.find("list it first") != std::string::npos);
  }
}

namespace {

// A v2 plan of `count` nodes in one cycle: node i runs after node i + 1, the
// last after node 0, which closes it.
plan ring_plan(std::size_t count) {
  std::vector<std::vector<int>> after(count);
  for (std::size_t i = 0; i < count; ++i) after[i] = {static_cast<int>((i + 1) % count)};
  return v2_plan(after);
}

// "node 'node/n<i>' runs after " for i in [first, last).
std::string runs_after(std::size_t first, std::size_t last) {
  std::string text;
  for (std::size_t i = first; i < last; ++i) text += "node 'node/n" + std::to_string(i) + "' runs after ";
  return text;
}

}  // namespace

TEST_CASE("dependency_graph: a long cycle is named by its length, first eight nodes and last, and its closing edge",
          "[binding][dependencies]") {
  const std::string edge = "; to break it, remove node 'node/n0' from the 'after' of node ";
  SECTION("20,000 nodes: one short line") {
    plan p = ring_plan(20000);
    check_graph_rejected(p, errc::dependency_cycle, "/nodes/19999/after/0");
    const std::string detail = validate_plan(p).error().detail;
    CHECK(detail.size() < 1024);
    CHECK(detail == "a cycle of 20000 nodes: " + runs_after(0, 8) + "... 19991 more nodes ... runs after " +
                        runs_after(19999, 20000) + "node 'node/n0'" + edge + "'node/n19999'");
    // The edge it names is the one to remove: without it no cycle is left,
    // only dependencies on nodes listed later.
    p.nodes[19999].after.clear();
    check_graph_rejected(p, errc::dependency_not_earlier, "/nodes/0/after/0");
  }
  SECTION("nine nodes are named in full, ten skip one") {
    CHECK(validate_plan(ring_plan(9)).error().detail ==
          "a cycle of 9 nodes: " + runs_after(0, 9) + "node 'node/n0'" + edge + "'node/n8'");
    CHECK(validate_plan(ring_plan(10)).error().detail == "a cycle of 10 nodes: " + runs_after(0, 8) +
                                                             "... 1 more node ... runs after " + runs_after(9, 10) +
                                                             "node 'node/n0'" + edge + "'node/n9'");
  }
  SECTION("two nodes") {
    const plan p = v2_plan({{1}, {0}});
    check_graph_rejected(p, errc::dependency_cycle, "/nodes/1/after/0");
    CHECK(validate_plan(p).error().detail ==
          "a cycle of 2 nodes: " + runs_after(0, 2) + "node 'node/n0'" + edge + "'node/n1'");
  }
}

TEST_CASE("dependency_graph: the plan hash covers queues and dependencies, not their listed order",
          "[binding][dependencies]") {
  const plan base = v2_plan({{}, {}, {0, 1}});
  const plan_hash hash = hash_plan(base).value();

  plan v1 = base;
  v1.format = plan_format::v1;
  v1.nodes[2].after.clear();
  CHECK(hash_plan(v1).value() != hash_plan(v2_plan({{}, {}, {}})).value());

  plan moved = base;
  moved.nodes[1].queue = queue_kind::transfer;
  CHECK(hash_plan(moved).value() != hash);

  plan fewer = base;
  fewer.nodes[2].after.pop_back();
  CHECK(hash_plan(fewer).value() != hash);

  plan reordered = base;
  std::swap(reordered.nodes[2].after[0], reordered.nodes[2].after[1]);
  CHECK(hash_plan(reordered).value() == hash);
}

namespace {

// A plan whose node i uses the workspace resources `uses[i]` (w0, w1, ...)
// of one interval pool, 256 bytes each, with the given dependencies and queues.
plan interval_plan(const std::vector<std::vector<int>>& after, const std::vector<std::vector<int>>& uses,
                   const std::vector<queue_kind>& queues = {}) {
  plan p = v2_plan(after, queues);
  std::set<int> resources;
  for (std::size_t n = 0; n < uses.size(); ++n)
    for (int r : uses[n]) {
      p.nodes[n].resources.push_back(id<resource_id>("resource/w" + std::to_string(r)));
      resources.insert(r);
    }
  for (int r : resources)
    p.resources.push_back(
        test::workspace_resource("resource/w" + std::to_string(r), "pool/work", resource_demand::fixed(256)));
  p.buckets[0].budgets.push_back({id<pool_id>("pool/work"), 0, 1 << 20});
  p.pools.push_back({id<pool_id>("pool/work"), liveness_mode::interval});
  return p;
}

// Whether the resources named `a` and `b` share bytes in the program's first bucket.
bool share_bytes(const compiled_program& program, std::string_view a, std::string_view b) {
  const auto& domains = program.domains;
  for (std::size_t d = 0; d < domains.size(); ++d) {
    const auto& projections = program.buckets[0].capacity_layouts[d].projections;
    const projection* x = nullptr;
    const projection* y = nullptr;
    for (const projection& p : projections) {
      if (p.resource.view() == a) x = &p;
      if (p.resource.view() == b) y = &p;
    }
    if (x != nullptr && y != nullptr) return x->offset < y->offset + y->capacity && y->offset < x->offset + x->capacity;
  }
  FAIL("resources not in one pool");
  return false;
}

}  // namespace

TEST_CASE("dependency_graph: resources of independent nodes share bytes on one queue kind, across kinds on a path",
          "[binding][dependencies]") {
  // n1 and n2 both run after n0 but not after each other. On one queue kind
  // the device keeps plan order, and the barrier sweep stands between the
  // shared bytes: their resources may share.
  const compiled_program independent = test::compile_ok(interval_plan({{}, {0}, {0}}, {{}, {1}, {2}}));
  CHECK(share_bytes(independent, "resource/w1", "resource/w2"));
  CHECK(independent.buckets[0].lane.barrier_before[2]);
  // On two kinds they may run at once on a device with a transfer queue.
  const std::vector<queue_kind> kinds{queue_kind::compute, queue_kind::compute, queue_kind::transfer};
  const compiled_program unordered = test::compile_ok(interval_plan({{}, {0}, {0}}, {{}, {1}, {2}}, kinds));
  CHECK_FALSE(share_bytes(unordered, "resource/w1", "resource/w2"));
  // With n2 after n1 they may share.
  const compiled_program ordered = test::compile_ok(interval_plan({{}, {0}, {1}}, {{}, {1}, {2}}, kinds));
  CHECK(share_bytes(ordered, "resource/w1", "resource/w2"));
  // A transitive dependency counts: n3 after n2 after n1.
  const std::vector<queue_kind> four{queue_kind::compute, queue_kind::compute, queue_kind::compute,
                                     queue_kind::transfer};
  const compiled_program transitive = test::compile_ok(interval_plan({{}, {0}, {1}, {2}}, {{}, {1}, {}, {2}}, four));
  CHECK(share_bytes(transitive, "resource/w1", "resource/w2"));
  // w1 on the transfer queue; w3 on the compute queue, its node not after
  // w1's: apart. w4's node, on compute, runs after w1's: shared.
  const std::vector<queue_kind> mixed{queue_kind::compute, queue_kind::transfer, queue_kind::compute,
                                      queue_kind::compute, queue_kind::compute};
  const compiled_program waits =
      test::compile_ok(interval_plan({{}, {0}, {0}, {0}, {1}}, {{}, {1}, {}, {3}, {4}}, mixed));
  CHECK_FALSE(share_bytes(waits, "resource/w1", "resource/w3"));
  CHECK(share_bytes(waits, "resource/w1", "resource/w4"));
}

TEST_CASE("dependency_graph: over random v2 plans, resources share bytes only when all their users are ordered",
          "[binding][dependencies]") {
  // Ordered on every device: on one queue kind by plan order (and the
  // barriers), across kinds only along a path of `after`.
  std::mt19937 rng(1234);
  std::size_t shared_pairs = 0;
  std::size_t shared_across = 0;
  for (int trial = 0; trial < 80; ++trial) {
    INFO("trial " << trial);
    const int nodes = 3 + static_cast<int>(rng() % 10);
    const int resources = 2 + static_cast<int>(rng() % 8);
    std::vector<std::vector<int>> after(static_cast<std::size_t>(nodes));
    std::vector<std::vector<int>> uses(static_cast<std::size_t>(nodes));
    std::vector<queue_kind> queues(static_cast<std::size_t>(nodes), queue_kind::compute);
    // Half the trials on one queue kind, half with transfer nodes.
    if (trial % 2 == 1)
      for (auto& q : queues)
        if (rng() % 3 == 0) q = queue_kind::transfer;
    for (int n = 1; n < nodes; ++n)
      for (int d = 0; d < n; ++d)
        if (rng() % 3 == 0) after[static_cast<std::size_t>(n)].push_back(d);
    // Each resource used by one to three consecutive-ish nodes; users on two
    // kinds are ordered by `after` (validate_plan's unordered_hazard).
    for (int r = 0; r < resources; ++r) {
      const int first = static_cast<int>(rng() % static_cast<unsigned>(nodes));
      const int count = 1 + static_cast<int>(rng() % 3);
      for (int n = first; n < std::min(nodes, first + count); ++n) {
        uses[static_cast<std::size_t>(n)].push_back(r);
        auto& deps = after[static_cast<std::size_t>(n)];
        for (int e = first; e < n; ++e)
          if (queues[static_cast<std::size_t>(e)] != queues[static_cast<std::size_t>(n)] &&
              std::find(deps.begin(), deps.end(), e) == deps.end())
            deps.push_back(e);
      }
    }
    const plan p = interval_plan(after, uses, queues);
    const compiled_program program = test::compile_ok(p);

    // ancestors[n]: every node n transitively runs after.
    std::vector<std::set<int>> ancestors(static_cast<std::size_t>(nodes));
    for (int n = 0; n < nodes; ++n)
      for (int d : after[static_cast<std::size_t>(n)]) {
        ancestors[static_cast<std::size_t>(n)].insert(d);
        const auto& more = ancestors[static_cast<std::size_t>(d)];
        ancestors[static_cast<std::size_t>(n)].insert(more.begin(), more.end());
      }
    auto users = [&](int r) {
      std::vector<int> out;
      for (int n = 0; n < nodes; ++n)
        for (int x : uses[static_cast<std::size_t>(n)])
          if (x == r) out.push_back(n);
      return out;
    };
    auto ordered = [&](int e, int l) {
      const bool one_queue = queues[static_cast<std::size_t>(e)] == queues[static_cast<std::size_t>(l)];
      return (one_queue && e < l) || ancestors[static_cast<std::size_t>(l)].count(e) != 0;
    };
    auto all_before = [&](const std::vector<int>& early, const std::vector<int>& late) {
      for (int l : late)
        for (int e : early)
          if (!ordered(e, l)) return false;
      return true;
    };
    for (int a = 0; a < resources; ++a)
      for (int b = a + 1; b < resources; ++b) {
        const auto ua = users(a);
        const auto ub = users(b);
        if (ua.empty() || ub.empty()) continue;
        if (!share_bytes(program, "resource/w" + std::to_string(a), "resource/w" + std::to_string(b))) continue;
        ++shared_pairs;
        CHECK((all_before(ua, ub) || all_before(ub, ua)));
        for (int x : ua)
          for (int y : ub) shared_across += queues[static_cast<std::size_t>(x)] != queues[static_cast<std::size_t>(y)];
      }
  }
  // The property was exercised, not vacuously true, across kinds too.
  CHECK(shared_pairs > 40);
  CHECK(shared_across > 5);
}

TEST_CASE("dependency_graph: two independent chains of images reuse memory as with an edge that changes no data",
          "[binding][dependencies][image]") {
  // frame_chains.json: a bloom chain and an SSAO chain, both after the
  // G-buffer, neither after the other, then a composite after both.
  plan chains = test::load_source_plan("examples/plans/frame_chains.json");
  plan edge = chains;
  REQUIRE(edge.nodes[4].id.view() == "node/ssao");
  edge.nodes[4].after.push_back(id<node_id>("node/bloom.down8"));
  const compiled_program a = test::compile_ok(chains);
  const compiled_program b = test::compile_ok(edge);
  for (std::size_t k = 0; k < a.buckets.size(); ++k) {
    INFO(a.buckets[k].id.str());
    CHECK(a.buckets[k].image_window.size == b.buckets[k].image_window.size);
    CHECK(a.buckets[k].unaliased_image_bytes == b.buckets[k].unaliased_image_bytes);
    // And it does alias: the bloom chain's bytes go on to the SSAO chain.
    CHECK(a.buckets[k].image_window.size < a.buckets[k].unaliased_image_bytes);
    CHECK(share_bytes(a, "image/bloom.half", "image/ao.raw"));
  }
  // 320x180, unaliased: every image's texels (color 460800, depth 230400,
  // bloom 115200 + 35840 + 7360, ao 2 x 57600, out 230400).
  CHECK(a.buckets[0].unaliased_image_bytes == 460800 + 230400 + 115200 + 35840 + 7360 + 2 * 57600 + 230400);
}
