#include "ferrum/binding/pool_domain.hpp"

#include "plan_builder.hpp"

using namespace ferrum;
using test::code_of;

namespace {

plan two_pools() {
  return test::plan_builder()
      .binding_node("node/b", "resource/b", 64)
      .binding_node("node/a", "resource/a", 64)
      .resource(test::workspace_resource("resource/w2", "pool/w", resource_demand::fixed(512)))
      .resource(test::workspace_resource("resource/w1", "pool/w", resource_demand::fixed(512)))
      .use(0, "resource/w2")
      .use(1, "resource/w1")
      .interval("pool/w")
      .bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 4096}, {"pool/w", 0, 4096}})
      .build();
}

}  // namespace

TEST_CASE("pool_domain: resources group by pool, pools and members in id order", "[binding][pools]") {
  const plan p = two_pools();
  auto domains = derive_pool_domains(p).value();
  REQUIRE(domains.size() == 2);
  CHECK(domains[0].pool.str() == "pool/bindings");
  CHECK(domains[0].liveness == liveness_mode::conservative);
  CHECK(domains[0].members == std::vector<std::size_t>{1, 0});  // resource/a, resource/b
  CHECK(domains[1].pool.str() == "pool/w");
  CHECK(domains[1].liveness == liveness_mode::interval);
  CHECK(domains[1].members == std::vector<std::size_t>{3, 2});
}

TEST_CASE("pool_domain: members differing in usage, element, storage or contract are incompatible_pool_member",
          "[binding][pools]") {
  const std::vector<void (*)(resource_descriptor&)> edits = {
      [](resource_descriptor& r) { r.usage = buffer_usage::uniform; },
      [](resource_descriptor& r) { r.element = element_type::u16; },
      [](resource_descriptor& r) { r.storage.view = storage_view::strided; },
      [](resource_descriptor& r) { r.storage.digest = test::contract_b; },
  };
  for (auto edit : edits) {
    plan p = two_pools();
    edit(p.resources[0]);  // resource/b, the second member of pool/bindings
    auto r = derive_pool_domains(p);
    CHECK(code_of(r) == errc::incompatible_pool_member);
    CHECK(r.error().path == "/resources/0");
    CHECK(r.error().detail.find("'resource/b'") != std::string::npos);
    CHECK(r.error().detail.find("'resource/a'") != std::string::npos);
  }
}

TEST_CASE("pool_domain: an interval pool holding a persistent resource is invalid_liveness", "[binding][pools]") {
  plan p = two_pools();
  p.resources[2].lifetime = allocation_lifetime::persistent;
  auto r = derive_pool_domains(p);
  CHECK(code_of(r) == errc::invalid_liveness);
  CHECK(r.error().path == "/resources/2/lifetime");
}
