// The original module's compile_program_binding_layouts: both of its tests, translated,
// and every check it makes, each triggered by the input that breaks it.
#include "ferrum/binding/program_binding.hpp"

#include "plan_builder.hpp"

#include <openssl/evp.h>

#include <algorithm>

using namespace ferrum;
using test::code_of;

namespace {

// What the stages before compile_program_binding_layouts produce for a plan,
// so that a test can break one input at a time.
struct stage_inputs {
  plan p;
  plan_hash hash;
  std::vector<pool_domain> domains;
  std::vector<std::optional<wave_domain_layout>> layouts;
  bucket_capacity_layouts capacities;
  bucket_id bucket;

  [[nodiscard]] result<std::map<bucket_id, program_binding_layout>> compile() const {
    return compile_program_binding_layouts(p, hash, domains, layouts, capacities);
  }
  [[nodiscard]] capacity_layout& binding_capacity() { return *capacities.at(bucket).front(); }
};

stage_inputs prepare(plan p) {
  stage_inputs in;
  in.hash = hash_plan(p).value();
  in.domains = derive_pool_domains(p).value();
  const auto intervals = live_intervals(p);
  for (const pool_domain& d : in.domains) in.layouts.emplace_back(compile_wave_domain_layout(p, d, intervals).value());
  for (std::size_t b = 0; b < p.buckets.size(); ++b) {
    auto& per_domain = in.capacities[p.buckets[b].id().value()];
    for (std::size_t d = 0; d < in.domains.size(); ++d) {
      const auto& budgets = p.buckets[b].budgets;
      auto budget =
          std::find_if(budgets.begin(), budgets.end(), [&](const auto& x) { return x.pool == in.domains[d].pool; });
      per_domain.emplace_back(compile_capacity_layout(p, b, in.domains[d], *in.layouts[d],
                                                      static_cast<std::size_t>(budget - budgets.begin()))
                                  .value());
    }
  }
  in.bucket = p.buckets[0].id().value();
  in.p = std::move(p);
  return in;
}

void check_fails(const stage_inputs& in, errc code) {
  auto r = in.compile();
  CHECK(code_of(r) == code);
}

}  // namespace

TEST_CASE("program_binding: the two-node layout cold-compiles one exact, stable arena", "[binding][program_binding]") {
  const stage_inputs in = prepare(test::two_node_plan());
  const auto compiled = in.compile().value();
  const program_binding_layout& layout = compiled.at(in.bucket);

  CHECK(layout.physical_size_bytes() == 192);
  REQUIRE(layout.slots().size() == 2);
  CHECK(layout.slot_for_node(0)->offset == 0);
  CHECK(layout.slot_for_node(0)->capacity == 64);
  CHECK(layout.slot_for_node(1)->offset == 64);
  CHECK(layout.slot_for_node(1)->capacity == 128);
  CHECK(layout.slot_for_node(2) == nullptr);
  CHECK(layout.fingerprint().str().rfind("sha256/", 0) == 0);
  CHECK(layout.bucket().str() == "test.program-binding@1x1x1");
  CHECK(layout.claim().ids().size() == 2);
  CHECK(compiled == in.compile().value());
}

TEST_CASE("program_binding: a node that does not own its binding is rejected", "[binding][program_binding]") {
  stage_inputs in = prepare(test::two_node_plan());
  for (plan_node& node : in.p.nodes) {
    node.resources.clear();
    node.binding.reset();
  }
  auto r = in.compile();
  CHECK(code_of(r) == errc::binding_not_owned);
  CHECK(r.error().what().find("does not own its binding descriptor") != std::string::npos);
}

TEST_CASE("program_binding: a node whose resources omit its binding does not own it", "[binding][program_binding]") {
  stage_inputs in = prepare(test::two_node_plan());
  in.p.nodes[1].resources.clear();
  auto r = in.compile();
  CHECK(code_of(r) == errc::binding_not_owned);
  CHECK(r.error().path == "/nodes/1");
}

TEST_CASE("program_binding: a plan with no binding resources has no layouts", "[binding][program_binding]") {
  const plan p = test::plan_builder()
                     .node("node/a", {"resource/w"})
                     .resource(test::workspace_resource("resource/w", "pool/w", resource_demand::fixed(64)))
                     .bucket("step", {1, 1, 1}, {{"pool/w", 0, 4096}})
                     .build();
  CHECK(prepare(p).compile().value().empty());
  CHECK(test::compile_ok(p).buckets[0].binding == nullptr);
}

TEST_CASE("program_binding: domain and layout counts that disagree are inconsistent_domain_layouts",
          "[binding][program_binding]") {
  stage_inputs in = prepare(test::two_node_plan());
  in.layouts.emplace_back(std::nullopt);
  check_fails(in, errc::inconsistent_domain_layouts);

  in = prepare(test::two_node_plan());
  in.capacities.at(in.bucket).emplace_back(std::nullopt);
  check_fails(in, errc::inconsistent_domain_layouts);
}

TEST_CASE("program_binding: binding resources in two pools are multiple_binding_domains",
          "[binding][program_binding]") {
  plan p = test::two_node_plan();
  p.resources[1].pool = test::id<pool_id>("pool/bindings-2");
  p.buckets[0].budgets.push_back({p.resources[1].pool, 0, 4096});
  auto r = compile(p);
  CHECK(code_of(r) == errc::multiple_binding_domains);
  CHECK(r.error().detail.find("'pool/bindings-2'") != std::string::npos);
}

TEST_CASE(
    "program_binding: a binding domain that is not contiguous, conservative, u8, binding and invocation is "
    "invalid_binding_domain",
    "[binding][program_binding]") {
  plan interval = test::two_node_plan();
  interval.pools.push_back({test::id<pool_id>("pool/bindings"), liveness_mode::interval});
  auto rejected = compile(interval);
  CHECK(code_of(rejected) == errc::invalid_binding_domain);
  CHECK(rejected.error().path == "/pools/pool~1bindings/liveness");

  const std::vector<void (*)(plan&)> edits = {
      [](plan& p) {
        for (auto& r : p.resources) r.element = element_type::u16;
      },
      [](plan& p) {
        for (auto& r : p.resources) r.usage = buffer_usage::storage;
      },
      [](plan& p) {
        for (auto& r : p.resources) r.storage.view = storage_view::strided;
      },
      [](plan& p) {
        for (auto& r : p.resources) r.lifetime = allocation_lifetime::persistent;
      },
      [](plan& p) {
        // A workspace resource in the binding pool, otherwise compatible.
        auto w = test::binding_resource("resource/w", "node/program-binding-first", 64);
        w.kind = allocation_kind::workspace;
        w.node.reset();
        p.resources.push_back(w);
        p.nodes[0].resources.push_back(w.id);
        p.buckets[0].budgets[0].max = 4096;
      },
  };
  for (std::size_t i = 0; i < edits.size(); ++i) {
    plan p = test::two_node_plan();
    edits[i](p);
    INFO("edit " << i);
    auto r = compile(p);
    CHECK(code_of(r) == errc::invalid_binding_domain);
    CHECK(r.error().path.rfind("/resources/", 0) == 0);
  }
}

TEST_CASE("program_binding: a binding domain without a wave layout is missing_domain_layout",
          "[binding][program_binding]") {
  stage_inputs in = prepare(test::two_node_plan());
  in.layouts[0].reset();
  check_fails(in, errc::missing_domain_layout);
}

TEST_CASE("program_binding: a wave layout that does not cover every descriptor is incomplete_domain_layout",
          "[binding][program_binding]") {
  stage_inputs in = prepare(test::two_node_plan());
  in.layouts[0]->projection_count = 1;
  check_fails(in, errc::incomplete_domain_layout);

  in = prepare(test::two_node_plan());
  in.layouts[0]->claim = claim_identity::make({in.p.resources[0].id}).value();
  check_fails(in, errc::incomplete_domain_layout);
}

TEST_CASE("program_binding: a bucket without the binding pool's capacity layout is missing_capacity_layout",
          "[binding][program_binding]") {
  stage_inputs in = prepare(test::two_node_plan());
  in.capacities.at(in.bucket).front().reset();
  check_fails(in, errc::missing_capacity_layout);
}

TEST_CASE("program_binding: a capacity layout with missing projections or no bytes is incomplete_capacity_layout",
          "[binding][program_binding]") {
  stage_inputs in = prepare(test::two_node_plan());
  in.binding_capacity().projections.pop_back();
  check_fails(in, errc::incomplete_capacity_layout);

  in = prepare(test::two_node_plan());
  in.binding_capacity().physical_size_bytes = 0;
  check_fails(in, errc::incomplete_capacity_layout);
}

TEST_CASE("program_binding: a descriptor naming a node the plan lacks is missing_binding_node",
          "[binding][program_binding]") {
  stage_inputs in = prepare(test::two_node_plan());
  in.p.nodes[1].id = test::id<node_id>("node/renamed");
  auto r = in.compile();
  CHECK(code_of(r) == errc::missing_binding_node);
  CHECK(r.error().path == "/resources/1/node");
}

TEST_CASE("program_binding: a slot of zero bytes is empty_slot", "[binding][program_binding]") {
  stage_inputs in = prepare(test::two_node_plan());
  auto& c = in.binding_capacity();
  c.projections[0].capacity = 0;
  c.projections[1].offset = 0;
  c.physical_size_bytes = 128;
  check_fails(in, errc::empty_slot);
}

TEST_CASE("program_binding: a slot off its alignment is misaligned_slot", "[binding][program_binding]") {
  stage_inputs in = prepare(test::two_node_plan());
  auto& c = in.binding_capacity();
  c.projections[0].capacity = 72;  // not a multiple of 16
  c.projections[1].offset = 72;
  c.physical_size_bytes = 200;
  check_fails(in, errc::misaligned_slot);
}

TEST_CASE("program_binding: slots with a gap or an overlap are non_contiguous_slots", "[binding][program_binding]") {
  stage_inputs in = prepare(test::two_node_plan());
  in.binding_capacity().projections[1].offset = 80;
  in.binding_capacity().physical_size_bytes = 208;
  check_fails(in, errc::non_contiguous_slots);

  in = prepare(test::two_node_plan());
  in.binding_capacity().projections[1].offset = 48;
  check_fails(in, errc::non_contiguous_slots);
}

TEST_CASE("program_binding: slots whose end overflows u64 are size_overflow", "[binding][program_binding]") {
  stage_inputs in = prepare(test::two_node_plan());
  auto& c = in.binding_capacity();
  c.projections[0].capacity = std::uint64_t{1} << 63;
  c.projections[1].offset = std::uint64_t{1} << 63;
  c.projections[1].capacity = std::uint64_t{1} << 63;
  check_fails(in, errc::size_overflow);
}

TEST_CASE("program_binding: slots that stop short of the arena are inexact_cover", "[binding][program_binding]") {
  stage_inputs in = prepare(test::two_node_plan());
  in.binding_capacity().physical_size_bytes = 256;
  auto r = in.compile();
  CHECK(code_of(r) == errc::inexact_cover);
  CHECK(r.error().detail.find("192") != std::string::npos);
}

TEST_CASE("program_binding: two slots owned by one node are duplicate_slot_owner", "[binding][program_binding]") {
  // Two descriptors with one resource id pass the ownership check for the same
  // node; validate_plan rejects such a plan, this stage must too.
  plan p = test::plan_builder()
               .binding_node("node/a", "resource/a", 64)
               .bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 4096}})
               .build();
  p.resources.push_back(test::binding_resource("resource/a", "node/a", 128));
  auto r = prepare(p).compile();
  CHECK(code_of(r) == errc::duplicate_slot_owner);
  CHECK(r.error().path == "/nodes/0");
}

TEST_CASE("program_binding: a SHA-256 that OpenSSL cannot compute is digest_failed", "[binding][program_binding]") {
  const stage_inputs in = prepare(test::two_node_plan());
  // No provider matches this property query, so fetching SHA-256 fails.
  REQUIRE(EVP_set_default_properties(nullptr, "provider=ferrum-none") == 1);
  auto r = in.compile();
  REQUIRE(EVP_set_default_properties(nullptr, "") == 1);
  CHECK(code_of(r) == errc::digest_failed);
  CHECK(in.compile().has_value());
}

TEST_CASE("program_binding: slots sharing an offset give the same error whatever the domain's member order",
          "[binding][program_binding]") {
  // The first resource misaligned at 0, the second empty, also at 0; the
  // domain's members (and their projections, index-aligned) in either order,
  // as a caller of compile_program_binding_layouts may pass them.
  auto outcome = [](bool reversed) {
    stage_inputs in = prepare(test::two_node_plan());
    auto& c = in.binding_capacity();
    c.projections[0].capacity = 72;
    c.projections[1].offset = 0;
    c.projections[1].capacity = 0;
    if (reversed) {
      std::swap(in.domains[0].members[0], in.domains[0].members[1]);
      std::swap(c.projections[0], c.projections[1]);
    }
    return in.compile();
  };
  const auto in_order = outcome(false);
  const auto reversed = outcome(true);
  CHECK(code_of(in_order) == errc::misaligned_slot);
  CHECK(code_of(reversed) == errc::misaligned_slot);
  CHECK(in_order.error().detail == reversed.error().detail);
  CHECK(in_order.error().detail.find("'resource/program-binding-first'") != std::string::npos);
}

TEST_CASE("program_binding: among many slots sharing an offset, the one with the lowest resource id is checked first",
          "[binding][program_binding]") {
  // Enough slots that std::sort leaves insertion sort for its unstable
  // partitioning; every slot starts at 0, so the second checked overlaps.
  test::plan_builder b;
  for (int i = 0; i < 40; ++i) b.binding_node("node/n" + std::to_string(i), "resource/r" + std::to_string(100 + i), 64);
  stage_inputs in = prepare(b.bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 1 << 20}}).build());
  for (projection& proj : in.binding_capacity().projections) proj.offset = 0;
  auto r = in.compile();
  CHECK(code_of(r) == errc::non_contiguous_slots);
  CHECK(r.error().detail.find("resource 'resource/r101': offset 0, expected 64") != std::string::npos);
}
