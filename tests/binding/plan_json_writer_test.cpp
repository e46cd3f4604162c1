// Tests of write_plan_json: every example plan, and generated v2 plans,
// written and read back hash as they did, and write the same text again.
#include "ferrum/binding/plan_json.hpp"

#include "example_plans.hpp"
#include "hazard_plans.hpp"

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>

using namespace ferrum;

namespace {

// Field by field (plan has no operator==): what the hash does not cover
// too (a memory class the derived one, a kept resource's flag, ...).
void check_same_plan(const plan& a, const plan& b) {
  CHECK(a.format == b.format);
  CHECK(a.lanes == b.lanes);
  CHECK(a.budget_bytes == b.budget_bytes);
  CHECK(a.cull == b.cull);
  REQUIRE(a.nodes.size() == b.nodes.size());
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const plan_node& x = a.nodes[i];
    const plan_node& y = b.nodes[i];
    CHECK(x.id == y.id);
    CHECK(x.resources == y.resources);
    CHECK(x.binding == y.binding);
    CHECK(x.queue == y.queue);
    CHECK(x.after == y.after);
    CHECK(x.access.empty() == y.access.empty());
    for (std::size_t k = 0; k < std::min(x.resources.size(), y.resources.size()); ++k) {
      CHECK(x.access_of(k) == y.access_of(k));
      CHECK(x.range_of(k) == y.range_of(k));
    }
  }
  REQUIRE(a.resources.size() == b.resources.size());
  for (std::size_t i = 0; i < a.resources.size(); ++i) {
    const resource_descriptor& x = a.resources[i];
    const resource_descriptor& y = b.resources[i];
    CHECK(x.id == y.id);
    CHECK(x.pool == y.pool);
    CHECK(x.kind == y.kind);
    CHECK(x.node == y.node);
    CHECK(x.demand == y.demand);
    CHECK(x.alignment == y.alignment);
    CHECK(x.lifetime == y.lifetime);
    CHECK(x.usage == y.usage);
    CHECK(x.element == y.element);
    CHECK(x.storage == y.storage);
    CHECK(x.image == y.image);
    CHECK(x.history_of == y.history_of);
    CHECK(x.kept == y.kept);
  }
  REQUIRE(a.buckets.size() == b.buckets.size());
  for (std::size_t i = 0; i < a.buckets.size(); ++i) {
    CHECK(a.buckets[i].cls == b.buckets[i].cls);
    CHECK(a.buckets[i].dims == b.buckets[i].dims);
    REQUIRE(a.buckets[i].budgets.size() == b.buckets[i].budgets.size());
    for (std::size_t j = 0; j < a.buckets[i].budgets.size(); ++j) {
      CHECK(a.buckets[i].budgets[j].pool == b.buckets[i].budgets[j].pool);
      CHECK(a.buckets[i].budgets[j].min == b.buckets[i].budgets[j].min);
      CHECK(a.buckets[i].budgets[j].max == b.buckets[i].budgets[j].max);
    }
  }
  // Pools: the parser reads them in id order.
  std::vector<pool_option> pools = a.pools;
  std::sort(pools.begin(), pools.end(), [](const pool_option& x, const pool_option& y) { return x.pool < y.pool; });
  REQUIRE(pools.size() == b.pools.size());
  for (std::size_t i = 0; i < pools.size(); ++i) {
    CHECK(pools[i].pool == b.pools[i].pool);
    CHECK(pools[i].liveness == b.pools[i].liveness);
    CHECK(pools[i].memory == b.pools[i].memory);
  }
}

// `p` written, then parsed: the same plan and hash, and the same text
// written again.
void check_round_trip(const plan& p, const std::string& what) {
  INFO(what);
  const std::string text = write_plan_json(p);
  INFO(text);
  const result<plan> back = parse_plan(text);
  REQUIRE(back.has_value());
  check_same_plan(p, *back);
  CHECK(hash_plan(*back).value() == hash_plan(p).value());
  CHECK(write_plan_json(*back) == text);
}

}  // namespace

TEST_CASE("plan writer: every example plan reads back to the same hash", "[plan_json][writer]") {
  std::size_t v2 = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(FERRUM_SOURCE_DIR) + "/examples/plans")) {
    if (entry.path().extension() != ".json") continue;
    const plan p = test::load_source_plan("examples/plans/" + entry.path().filename().string());
    v2 += p.format == plan_format::v2 ? 1 : 0;
    check_round_trip(p, entry.path().filename().string());
  }
  CHECK(v2 >= 10);
}

TEST_CASE("plan writer: generated v2 plans read back to the same hash", "[plan_json][writer]") {
  std::mt19937_64 rng(55);
  for (int i = 0; i < 20; ++i) {
    hazard_plans::shape s;
    s.nodes = 3 + static_cast<std::size_t>(rng() % 10);
    check_round_trip(hazard_plans::generate(rng, s), "generated plan " + std::to_string(i));
  }
}

TEST_CASE("plan writer: the fields at their defaults are left out, the others written", "[plan_json][writer]") {
  CHECK(write_plan_json(test::load_source_plan("examples/plans/taa_history.json")).find("\"history_of\"") !=
        std::string::npos);
  plan p = test::load_source_plan("examples/plans/async_compute.json");
  const std::string text = write_plan_json(p);
  CHECK(text.find("\"cull\"") == std::string::npos);
  CHECK(text.find("\"kept\"") == std::string::npos);
  CHECK(text.find("\"queue\": \"compute\"") == std::string::npos);
  p.cull = false;
  p.resources.front().kept = true;
  p.nodes.front().queue = queue_kind::transfer;
  const std::string changed = write_plan_json(p);
  CHECK(changed.find("\"cull\": false") != std::string::npos);
  CHECK(changed.find("\"kept\": true") != std::string::npos);
  CHECK(changed.find("\"queue\": \"transfer\"") != std::string::npos);
  const result<plan> back = parse_plan(changed, plan_checks::schema_only);
  REQUIRE(back.has_value());
  CHECK_FALSE(back->cull);
  CHECK(back->resources.front().kept);
  CHECK(back->nodes.front().queue == queue_kind::transfer);
}

TEST_CASE("plan writer: a range to the last level is written to the image's last level", "[plan_json][writer]") {
  plan p = test::load_source_plan("examples/plans/mip_chain.json");
  // Some node's ranged access: make its range run from its base to the last
  // level (count 0), which the file format spells [base, mips - base].
  bool changed = false;
  for (plan_node& n : p.nodes)
    for (subresource_range& r : n.ranges)
      if (!changed && r.base_mip > 0 && r.mips == 1) {
        r.mips = 0;
        changed = true;
      }
  REQUIRE(changed);
  const result<plan> back = parse_plan(write_plan_json(p), plan_checks::schema_only);
  REQUIRE(back.has_value());
  bool found = false;
  for (std::size_t i = 0; i < p.nodes.size(); ++i)
    for (std::size_t k = 0; k < p.nodes[i].ranges.size(); ++k)
      if (p.nodes[i].ranges[k].mips == 0 && p.nodes[i].ranges[k].base_mip > 0) {
        found = true;
        CHECK(back->nodes[i].ranges[k].base_mip == p.nodes[i].ranges[k].base_mip);
        CHECK(back->nodes[i].ranges[k].mips != 0);
      }
  CHECK(found);
}

TEST_CASE("plan writer: a contract is written as a JSON string, escaped", "[plan_json][writer]") {
  plan p = test::load_source_plan("examples/plans/two_nodes.json");
  p.resources.front().storage.digest = "a\"b\\c\n";
  const result<plan> back = parse_plan(write_plan_json(p), plan_checks::schema_only);
  REQUIRE(back.has_value());
  CHECK(back->resources.front().storage.digest == "a\"b\\c\n");
  CHECK(parse_plan(write_plan_json(p)).error() == errc::invalid_contract);
}
