// Interval pools: resources whose live intervals overlap never share a byte —
// checked exhaustively, pair by pair, on generated plans.
#include "ferrum/binding/compiled_program.hpp"

#include "plan_builder.hpp"

#include <random>

using namespace ferrum;

namespace {

struct generated {
  plan p;
  std::vector<live_interval> intervals;  // per resource, computed here from the uses
};

// `nodes` nodes and `resources` workspace resources in the interval pool
// pool/w; resource r is used by a random run of nodes.
generated generate(std::mt19937_64& rng, std::size_t nodes, std::size_t resources) {
  test::plan_builder builder;
  for (std::size_t n = 0; n < nodes; ++n) builder.node("node/" + std::to_string(n), {});
  generated g;
  std::uniform_int_distribution<std::size_t> node_pick(0, nodes - 1);
  std::uniform_int_distribution<std::uint64_t> bytes(1, 4096);
  std::uniform_int_distribution<int> align_log(0, 9);
  for (std::size_t r = 0; r < resources; ++r) {
    const std::string name = "resource/" + std::to_string(r);
    std::size_t a = node_pick(rng);
    std::size_t b = node_pick(rng);
    if (a > b) std::swap(a, b);
    builder.resource(test::workspace_resource(name, "pool/w", resource_demand::fixed(bytes(rng)),
                                              std::uint64_t{1} << align_log(rng)));
    // Uses at both ends and, sometimes, in the middle: the interval is [a, b].
    builder.use(a, name);
    if (b != a) builder.use(b, name);
    if (b > a + 1 && rng() % 2) builder.use((a + b) / 2, name);
    g.intervals.push_back({a, b});
  }
  g.p = builder.interval("pool/w")
            .bucket("step", {1, 1, 1}, {{"pool/w", 0, ~std::uint64_t{0}}})
            .budget(~std::uint64_t{0})
            .build();
  return g;
}

}  // namespace

TEST_CASE("interval aliasing: resources used one after another share the same bytes", "[binding][interval]") {
  const plan p = test::plan_builder()
                     .node("node/0", {})
                     .node("node/1", {})
                     .node("node/2", {})
                     .resource(test::workspace_resource("resource/x", "pool/w", resource_demand::fixed(1024)))
                     .resource(test::workspace_resource("resource/y", "pool/w", resource_demand::fixed(2048)))
                     .resource(test::workspace_resource("resource/z", "pool/w", resource_demand::fixed(512)))
                     .use(0, "resource/x")
                     .use(1, "resource/y")
                     .use(2, "resource/z")
                     .interval("pool/w")
                     .bucket("step", {1, 1, 1}, {{"pool/w", 0, 1 << 20}})
                     .build();
  const compiled_program program = test::compile_ok(p);
  const capacity_layout& d = program.buckets[0].capacity_layouts[0];
  CHECK(d.liveness == liveness_mode::interval);
  CHECK(d.unaliased_size_bytes == 1024 + 2048 + 512);
  CHECK(d.physical_size_bytes == 2048);
  for (const projection& proj : d.projections) CHECK(proj.offset == 0);
}

TEST_CASE("interval aliasing: the same plan in a conservative pool shares nothing", "[binding][interval]") {
  std::mt19937_64 rng(7);
  generated g = generate(rng, 20, 30);
  g.p.pools.clear();
  const compiled_program program = test::compile_ok(g.p);
  const capacity_layout& d = program.buckets[0].capacity_layouts[0];
  CHECK(d.physical_size_bytes == d.unaliased_size_bytes);
}

TEST_CASE("interval aliasing: no two resources with overlapping intervals share a byte (generated plans)",
          "[binding][interval]") {
  std::mt19937_64 rng(20261129);
  std::uint64_t physical_total = 0;
  std::uint64_t unaliased_total = 0;
  for (int round = 0; round < 200; ++round) {
    const std::size_t nodes = 1 + rng() % 40;
    const std::size_t resources = 1 + rng() % 60;
    const generated g = generate(rng, nodes, resources);
    const compiled_program program = test::compile_ok(g.p);
    const capacity_layout& d = program.buckets[0].capacity_layouts[0];
    REQUIRE(d.projections.size() == resources);
    // Projections are in resource id order; map them back to plan indices.
    std::vector<const projection*> by_resource(resources);
    for (const projection& proj : d.projections) {
      const std::size_t r = std::stoul(proj.resource.str().substr(std::string_view("resource/").size()));
      by_resource[r] = &proj;
    }
    for (std::size_t i = 0; i < resources; ++i) {
      const projection& a = *by_resource[i];
      REQUIRE(a.offset % a.alignment == 0);
      REQUIRE(a.offset + a.capacity <= d.physical_size_bytes);
      for (std::size_t j = i + 1; j < resources; ++j) {
        if (!g.intervals[i].overlaps(g.intervals[j])) continue;
        const projection& b = *by_resource[j];
        INFO("round " << round << ": " << a.resource.str() << " [" << a.offset << ", +" << a.capacity << ") and "
                      << b.resource.str() << " [" << b.offset << ", +" << b.capacity << ")");
        REQUIRE((a.offset + a.capacity <= b.offset || b.offset + b.capacity <= a.offset));
      }
    }
    REQUIRE(d.physical_size_bytes <= d.unaliased_size_bytes);
    physical_total += d.physical_size_bytes;
    unaliased_total += d.unaliased_size_bytes;
  }
  // Aliasing must actually save memory on such plans, not just be allowed.
  CHECK(physical_total * 10 < unaliased_total * 8);
}

TEST_CASE("interval aliasing: live intervals run from the first to the last node using a resource",
          "[binding][interval]") {
  std::mt19937_64 rng(3);
  const generated g = generate(rng, 15, 25);
  const std::vector<live_interval> computed = live_intervals(g.p);
  REQUIRE(computed.size() == g.intervals.size());
  for (std::size_t r = 0; r < computed.size(); ++r) {
    CHECK(computed[r].first == g.intervals[r].first);
    CHECK(computed[r].last == g.intervals[r].last);
  }
}
