// Tests of write_plan_json: every example plan, and generated v2 plans,
// written and read back hash as they did, and write the same text again.
#include "ferrum/binding/plan_json.hpp"

#include "example_plans.hpp"
#include "hazard_plans.hpp"

#include <filesystem>
#include <random>
#include <string>

using namespace ferrum;

namespace {

// `p` written, then parsed: the same hash, and the same text written again.
void check_round_trip(const plan& p, const std::string& what) {
  INFO(what);
  const std::string text = write_plan_json(p);
  INFO(text);
  const result<plan> back = parse_plan(text);
  REQUIRE(back.has_value());
  CHECK(back->format == p.format);
  CHECK(back->nodes.size() == p.nodes.size());
  CHECK(back->resources.size() == p.resources.size());
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
