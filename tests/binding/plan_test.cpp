#include "ferrum/binding/plan.hpp"

#include "pinned_digests.hpp"
#include "plan_builder.hpp"

#include "ferrum/binding/compiled_program_file.hpp"
#include "ferrum/binding/plan_json.hpp"

#include <algorithm>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

using namespace ferrum;
using test::code_of;
using test::id;

namespace {

// Expects validate_plan(p) to fail with `code` at `path`.
void check_rejected(const plan& p, errc code, const std::string& path) {
  auto r = validate_plan(p);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error() == code);
  CHECK(r.error().path == path);
}

plan with_workspace() {
  return test::plan_builder()
      .binding_node("node/a", "resource/a", 64)
      .resource(test::workspace_resource("resource/w", "pool/w", resource_demand::fixed(512)))
      .use(0, "resource/w")
      .bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 4096}, {"pool/w", 0, 4096}})
      .build();
}

}  // namespace

TEST_CASE("plan: the original module's two-node plan is valid", "[binding][plan]") {
  CHECK(validate_plan(test::two_node_plan()).has_value());
  CHECK(validate_plan(with_workspace()).has_value());
}

TEST_CASE("plan: a plan without nodes or buckets is empty_plan", "[binding][plan]") {
  plan p = test::two_node_plan();
  p.buckets.clear();
  check_rejected(p, errc::empty_plan, "/buckets");
  p.nodes.clear();
  check_rejected(p, errc::empty_plan, "/nodes");
}

TEST_CASE("plan: zero lanes is number_out_of_range", "[binding][plan]") {
  plan p = test::two_node_plan();
  p.lanes = 0;
  check_rejected(p, errc::number_out_of_range, "/lanes");
}

TEST_CASE("plan: duplicate node, resource, bucket, budget and pool ids are duplicate_id", "[binding][plan]") {
  plan p = test::two_node_plan();
  p.nodes[1].id = p.nodes[0].id;
  check_rejected(p, errc::duplicate_id, "/nodes/1/id");

  p = test::two_node_plan();
  p.resources[1].id = p.resources[0].id;
  check_rejected(p, errc::duplicate_id, "/resources/1/id");

  p = test::two_node_plan();
  p.buckets.push_back(p.buckets[0]);
  check_rejected(p, errc::duplicate_id, "/buckets/1");

  p = test::two_node_plan();
  p.buckets[0].budgets.push_back(p.buckets[0].budgets[0]);
  check_rejected(p, errc::duplicate_id, "/buckets/0/budgets/1");

  p = test::two_node_plan();
  p.pools = {{id<pool_id>("pool/bindings"), liveness_mode::conservative},
             {id<pool_id>("pool/bindings"), liveness_mode::conservative}};
  check_rejected(p, errc::duplicate_id, "/pools/pool~1bindings");

  p = with_workspace();
  p.nodes[0].resources.push_back(id<resource_id>("resource/w"));
  check_rejected(p, errc::duplicate_id, "/nodes/0/resources/2");
}

TEST_CASE("plan: references to undefined elements are dangling_reference", "[binding][plan]") {
  plan p = test::two_node_plan();
  p.nodes[0].resources.push_back(id<resource_id>("resource/missing"));
  check_rejected(p, errc::dangling_reference, "/nodes/0/resources/1");

  p = test::two_node_plan();
  p.nodes[1].binding = id<resource_id>("resource/missing");
  check_rejected(p, errc::dangling_reference, "/nodes/1/binding");

  p = with_workspace();
  p.resources[0].node = id<node_id>("node/missing");
  p.nodes[0].binding.reset();
  check_rejected(p, errc::dangling_reference, "/resources/0/node");

  p = test::two_node_plan();
  p.pools.push_back({id<pool_id>("pool/nobody"), liveness_mode::interval});
  check_rejected(p, errc::dangling_reference, "/pools/pool~1nobody");

  p = test::two_node_plan();
  p.buckets[0].budgets.push_back({id<pool_id>("pool/nobody"), 0, 1});
  check_rejected(p, errc::dangling_reference, "/buckets/0/budgets/1/pool");
}

TEST_CASE("plan: a node binding a resource that is not its binding resource is binding_not_owned", "[binding][plan]") {
  plan p = with_workspace();
  p.nodes[0].binding = id<resource_id>("resource/w");
  check_rejected(p, errc::binding_not_owned, "/nodes/0/binding");

  p = test::two_node_plan();
  p.nodes[0].binding = p.resources[1].id;  // node/b's resource
  check_rejected(p, errc::binding_not_owned, "/nodes/0/binding");
}

TEST_CASE("plan: a binding resource needs a node and a workspace resource may not name one", "[binding][plan]") {
  plan p = test::two_node_plan();
  p.resources[0].node.reset();
  check_rejected(p, errc::missing_field, "/resources/0/node");

  p = with_workspace();
  p.resources[1].node = id<node_id>("node/a");
  check_rejected(p, errc::unknown_field, "/resources/1/node");
}

TEST_CASE("plan: out-of-range dimensions and zero capacities are number_out_of_range", "[binding][plan]") {
  plan p = with_workspace();
  p.resources[1].demand = resource_demand::scaled(0, 1, 3);
  check_rejected(p, errc::number_out_of_range, "/resources/1/demand/dimension");

  p = test::two_node_plan();
  p.buckets[0].dims = {1, 0, 1};
  check_rejected(p, errc::number_out_of_range, "/buckets/0/capacity/1");
}

TEST_CASE("plan: a contract digest that is not 64 lowercase hex digits is invalid_contract", "[binding][plan]") {
  for (std::string bad : {std::string(63, 'a'), std::string(64, 'A'), std::string(64, 'g'), std::string()}) {
    plan p = test::two_node_plan();
    p.resources[1].storage.digest = bad;
    check_rejected(p, errc::invalid_contract, "/resources/1/storage/contract");
  }
}

TEST_CASE("plan: a resource no node uses is unused_resource", "[binding][plan]") {
  plan p = with_workspace();
  p.nodes[0].resources.pop_back();
  check_rejected(p, errc::unused_resource, "/resources/1");
}

TEST_CASE("plan: a bucket class with '@' is invalid_id", "[binding][plan]") {
  plan p = test::two_node_plan();
  p.buckets[0].cls = id<bucket_class>("step@x");
  check_rejected(p, errc::invalid_id, "/buckets/0/class");
}

TEST_CASE("plan: budgets must name each used pool once, with min <= max", "[binding][plan]") {
  plan p = test::two_node_plan();
  p.buckets[0].budgets[0].min = 200;
  check_rejected(p, errc::invalid_budget, "/buckets/0/budgets/0");

  p = with_workspace();
  p.buckets[0].budgets.pop_back();
  check_rejected(p, errc::missing_budget, "/buckets/0/budgets");
  CHECK(validate_plan(p).error().detail.find("'pool/w'") != std::string::npos);
}

TEST_CASE("plan: the plan hash is a fixed SHA-256 of the canonical encoding", "[binding][plan]") {
  // The digest is part of the file format's contract: the same plan hashes
  // the same in every process and every build. tools/canonical_digest.py
  // recomputes the pin independently from docs/canonical-encoding.md, from
  // examples/plans/two_nodes.json, which is this plan (tests/support/pinned_digests.hpp).
  CHECK(hash_plan(test::two_node_plan()).value().str() == pinned::two_nodes_hash.digest);
  std::ifstream in(std::string(FERRUM_SOURCE_DIR) + "/" + std::string(pinned::two_nodes_hash.plan_file));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(hash_plan(parse_plan(text).value()).value().str() == pinned::two_nodes_hash.digest);
}

TEST_CASE("plan: reordering resources keeps the hash, reordering nodes changes it", "[binding][plan]") {
  const plan p = with_workspace();
  const plan_hash base = hash_plan(p).value();
  plan reordered = p;
  std::reverse(reordered.resources.begin(), reordered.resources.end());
  CHECK(hash_plan(reordered).value() == base);

  plan two = test::two_node_plan();
  plan swapped = two;
  std::swap(swapped.nodes[0], swapped.nodes[1]);
  CHECK(hash_plan(swapped).value() != hash_plan(two).value());
}

TEST_CASE("plan: changing any field changes the plan hash", "[binding][plan]") {
  const plan p = with_workspace();
  const plan_hash base = hash_plan(p).value();
  const std::vector<std::function<void(plan&)>> edits = {
      [](plan& x) { x.nodes[0].id = id<node_id>("node/z"); },
      [](plan& x) { x.nodes[0].binding.reset(); },
      [](plan& x) { x.nodes[0].resources.pop_back(); },
      [](plan& x) { x.resources[1].pool = id<pool_id>("pool/v"); },
      [](plan& x) { x.resources[1].demand = resource_demand::fixed(513); },
      [](plan& x) { x.resources[1].demand = resource_demand::scaled(512, 1, 0); },
      [](plan& x) { x.resources[1].alignment = 128; },
      [](plan& x) { x.resources[1].lifetime = allocation_lifetime::persistent; },
      [](plan& x) { x.resources[1].usage = buffer_usage::uniform; },
      [](plan& x) { x.resources[1].element = element_type::u32; },
      [](plan& x) { x.resources[1].storage.view = storage_view::strided; },
      [](plan& x) { x.resources[1].storage.digest = std::string(64, 'c'); },
      [](plan& x) { x.resources[0].kind = allocation_kind::workspace; },
      [](plan& x) { x.buckets[0].dims[2] = 2; },
      [](plan& x) { x.buckets[0].cls = id<bucket_class>("frame"); },
      [](plan& x) { x.buckets[0].budgets[1].max = 4097; },
      [](plan& x) { x.buckets[0].budgets[1].min = 1; },
      [](plan& x) {
        x.pools.push_back({id<pool_id>("pool/w"), liveness_mode::interval});
      },
      [](plan& x) { x.lanes = 2; },
      [](plan& x) { x.budget_bytes += 1; },
  };
  for (std::size_t i = 0; i < edits.size(); ++i) {
    plan changed = p;
    edits[i](changed);
    INFO("edit " << i);
    CHECK(hash_plan(changed).value() != base);
  }
}

namespace {

// with_workspace() as a v2 plan whose node/a reads resource/a and writes
// resource/w.
plan with_accesses() {
  plan p = with_workspace();
  p.format = plan_format::v2;
  p.nodes[0].access = {resource_access::read, resource_access::write};
  return p;
}

}  // namespace

TEST_CASE("plan: declared accesses are v2 only, one per resource", "[binding][plan]") {
  CHECK(validate_plan(with_accesses()).has_value());

  SECTION("a v1 plan declaring accesses") {
    plan p = with_accesses();
    p.format = plan_format::v1;
    check_rejected(p, errc::unknown_field, "/nodes/0/access");
    CHECK(validate_plan(p).error().detail == "field 'access' is not defined in ferrum.plan.v1; use ferrum.plan.v2");
  }
  SECTION("fewer accesses than resources") {
    plan p = with_accesses();
    p.nodes[0].access.pop_back();
    check_rejected(p, errc::invalid_access, "/nodes/0/access");
    CHECK(validate_plan(p).error().detail == "node 'node/a' declares 1 access for its 2 resources");
    // Hashing and compiling refuse it alike, without reading past the list.
    CHECK(code_of(hash_plan(p)) == errc::invalid_access);
    CHECK(code_of(compile(p)) == errc::invalid_access);
  }
  SECTION("more accesses than resources") {
    plan p = with_accesses();
    p.nodes[0].access.push_back(resource_access::read);
    check_rejected(p, errc::invalid_access, "/nodes/0/access");
    CHECK(validate_plan(p).error().detail == "node 'node/a' declares 3 accesses for its 2 resources");
  }
  SECTION("an access that is not a resource_access") {
    plan p = with_accesses();
    p.nodes[0].access[1] = static_cast<resource_access>(static_cast<unsigned>(last_resource_access) + 1);
    check_rejected(p, errc::invalid_access, "/nodes/0/access/resource~1w");
    CHECK(code_of(hash_plan(p)) == errc::invalid_access);
  }
}

TEST_CASE("plan: a compiled program file is refused for a plan with bad accesses", "[binding][plan]") {
  const plan p = with_accesses();
  const compiled_program program = test::compile_ok(p);
  const auto bytes = save_compiled_program(program, p);
  REQUIRE(bytes.has_value());
  CHECK(load_compiled_program(*bytes, p).has_value());

  plan fewer = p;
  fewer.nodes[0].access.pop_back();
  auto loaded = load_compiled_program(*bytes, fewer);
  REQUIRE_FALSE(loaded.has_value());
  CHECK(loaded.error() == errc::invalid_access);
  CHECK(loaded.error().path == "/nodes/0/access");
}

TEST_CASE("plan: the plan hash covers declared accesses other than read-write", "[binding][plan]") {
  plan none = with_workspace();
  none.format = plan_format::v2;
  const plan_hash base = hash_plan(none).value();

  // Declaring read-write throughout is declaring nothing.
  plan read_write = none;
  read_write.nodes[0].access.assign(2, resource_access::read_write);
  CHECK(hash_plan(read_write).value() == base);

  const plan_hash declared = hash_plan(with_accesses()).value();
  CHECK(declared != base);
  const std::vector<std::function<void(plan&)>> edits = {
      [](plan& x) { x.nodes[0].access[0] = resource_access::read_write; },
      [](plan& x) { x.nodes[0].access[0] = resource_access::write; },
      [](plan& x) { x.nodes[0].access[1] = resource_access::read; },
      [](plan& x) {
        x.nodes[0].access = {resource_access::write, resource_access::read};
      },
  };
  for (std::size_t i = 0; i < edits.size(); ++i) {
    plan changed = with_accesses();
    edits[i](changed);
    INFO("edit " << i);
    CHECK(hash_plan(changed).value() != declared);
  }

  // Declarations follow their resources, not the order the node lists them in.
  plan reordered = with_accesses();
  std::reverse(reordered.nodes[0].resources.begin(), reordered.nodes[0].resources.end());
  std::reverse(reordered.nodes[0].access.begin(), reordered.nodes[0].access.end());
  CHECK(hash_plan(reordered).value() == declared);
}

TEST_CASE("plan: enum names round-trip through to_string and enum_from_string", "[binding][plan]") {
  CHECK(enum_from_string<storage_allocator>(to_string(storage_allocator::linear_arena)) ==
        storage_allocator::linear_arena);
  CHECK(to_string(storage_allocator::linear_arena) == "linear-arena");
  CHECK(enum_from_string<element_type>("f32") == element_type::f32);
  CHECK(enum_from_string<liveness_mode>("interval") == liveness_mode::interval);
  CHECK(enum_from_string<buffer_usage>("Binding") == std::nullopt);
  for (const resource_access a : {resource_access::read, resource_access::write, resource_access::read_write})
    CHECK(enum_from_string<resource_access>(to_string(a)) == a);
  CHECK(to_string(resource_access::read_write) == "read-write");
  CHECK(enum_from_string<resource_access>("read_write") == std::nullopt);
}
