#include "ferrum/binding/capacity_layout.hpp"

#include "plan_builder.hpp"

using namespace ferrum;
using test::code_of;

namespace {

const capacity_layout& domain_of(const compiled_bucket& b, std::string_view pool) {
  for (const capacity_layout& d : b.capacity_layouts)
    if (d.pool.view() == pool) return d;
  FAIL("no pool " << pool);
  throw;
}

}  // namespace

TEST_CASE("capacity_layout: conservative pools pack by decreasing alignment, ties by id, with no padding",
          "[binding][capacity]") {
  // Alignments 16, 256, 64, 256: packed 256s first (ids b, d), then 64, then 16.
  const plan p = test::plan_builder()
                     .binding_node("node/a", "resource/a", 48, 16)
                     .binding_node("node/b", "resource/b", 256, 256)
                     .binding_node("node/c", "resource/c", 64, 64)
                     .binding_node("node/d", "resource/d", 512, 256)
                     .bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 1 << 20}})
                     .build();
  const compiled_program program = test::compile_ok(p);
  const capacity_layout& d = domain_of(program.buckets[0], "pool/bindings");
  REQUIRE(d.projections.size() == 4);
  CHECK(d.projections[1] == projection{test::id<resource_id>("resource/b"), 0, 256, 256});
  CHECK(d.projections[3] == projection{test::id<resource_id>("resource/d"), 256, 512, 256});
  CHECK(d.projections[2] == projection{test::id<resource_id>("resource/c"), 768, 64, 64});
  CHECK(d.projections[0] == projection{test::id<resource_id>("resource/a"), 832, 48, 16});
  CHECK(d.physical_size_bytes == 880);
  CHECK(d.unaliased_size_bytes == 880);
}

TEST_CASE("capacity_layout: scaled demands grow with each bucket's capacity", "[binding][capacity]") {
  const plan p = test::plan_builder()
                     .binding_node("node/a", "resource/a", 64)
                     .resource(test::workspace_resource("resource/w", "pool/w", resource_demand::scaled(0, 256, 1)))
                     .use(0, "resource/w")
                     .bucket("step", {1, 64, 1}, {{"pool/bindings", 0, 4096}, {"pool/w", 0, 1 << 20}})
                     .bucket("step", {1, 8, 1}, {{"pool/bindings", 0, 4096}, {"pool/w", 0, 1 << 20}})
                     .build();
  const compiled_program program = test::compile_ok(p);
  REQUIRE(program.buckets.size() == 2);
  CHECK(program.buckets[0].id.str() == "step@1x64x1");
  CHECK(domain_of(program.buckets[0], "pool/w").physical_size_bytes == 256 * 64);
  CHECK(program.buckets[1].id.str() == "step@1x8x1");
  CHECK(domain_of(program.buckets[1], "pool/w").physical_size_bytes == 256 * 8);
  // The lane: the 64 binding bytes, padded to pool/w's alignment of 256, then pool/w.
  CHECK(program.buckets[1].pool_offsets == std::vector<std::uint64_t>{0, 256});
  CHECK(program.buckets[1].lane_bytes() == 256 + 256 * 8);
  CHECK(program.buckets[1].unaliased_lane_size_bytes == 256 + 256 * 8);
}

TEST_CASE("capacity_layout: an arena outside its bucket's budget is workspace_budget_exceeded", "[binding][capacity]") {
  plan p = test::two_node_plan();
  p.buckets[0].budgets[0].max = 191;
  auto r = compile(p);
  CHECK(code_of(r) == errc::workspace_budget_exceeded);
  CHECK(r.error().path == "/buckets/0/budgets/0");

  p.buckets[0].budgets[0] = {p.buckets[0].budgets[0].pool, 193, 4096};
  CHECK(code_of(compile(p)) == errc::workspace_budget_exceeded);
}

TEST_CASE("capacity_layout: demand errors carry the resource's path", "[binding][capacity]") {
  plan p = test::two_node_plan();
  p.resources[1].alignment = 24;
  auto r = compile(p);
  CHECK(code_of(r) == errc::invalid_alignment);
  CHECK(r.error().path == "/resources/1/alignment");

  p = test::two_node_plan();
  p.resources[0].demand = resource_demand::fixed(0);
  r = compile(p);
  CHECK(code_of(r) == errc::empty_demand);
  CHECK(r.error().path == "/resources/0/demand");
}

TEST_CASE("capacity_layout: an arena whose size overflows u64 is size_overflow", "[binding][capacity]") {
  plan p = test::two_node_plan();
  p.resources[0].demand = resource_demand::fixed(std::uint64_t{1} << 63);
  p.resources[1].demand = resource_demand::fixed(std::uint64_t{1} << 63);
  p.buckets[0].budgets[0].max = ~std::uint64_t{0};
  auto r = compile(p);
  CHECK(code_of(r) == errc::size_overflow);
  CHECK(r.error().path.rfind("/resources/", 0) == 0);
}
