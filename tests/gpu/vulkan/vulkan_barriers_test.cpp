// Barriers from hazards on the Vulkan device, synchronization validation
// on: the waves of generated plans with aliasing, shared resources and
// declared accesses run with only the derived barriers, validation silent
// and their data checked (hazard_encoder.hpp); two independent nodes run
// with none between them.
//
// That the checks can fail is shown on the null device
// (tests/scheduler/barriers_test.cpp, reordering what no barrier orders):
// lavapipe runs a queue's commands in order, and Debian 12's validation
// layers (1.3.239) check hazards within a command buffer only, not between
// the lists of one submission.
#include "event_lists.hpp"
#include "hazard_encoder.hpp"
#include "vulkan_test_support.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <memory>
#include <random>
#include <string>

using namespace vulkan_test;

TEST_CASE("vulkan barriers: generated plans run with only the derived barriers, validation silent, data checked",
          "[vulkan][barriers]") {
  session s;
  if (!s.open()) return;
  std::mt19937_64 rng(21);
  hazard_encoder::outcome total;
  std::size_t derived = 0;
  std::size_t aliased = 0;
  for (int round = 0; round < 3; ++round) {
    const ferrum::plan p = hazard_plans::generate(rng, {});
    auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(p));
    derived += program->buckets[0].lane.barriers_per_wave();
    aliased += program->buckets[0].lane_bytes() < program->buckets[0].unaliased_lane_size_bytes ? 1 : 0;
    const hazard_encoder::outcome o = hazard_encoder::run(*s.device, p, program, 4);
    total.checks += o.checks;
    total.mismatches += o.mismatches;
    total.lists_opened += o.lists_opened;
  }
  CHECK(total.checks > 30);
  CHECK(total.mismatches == 0);
  CHECK(derived > 0);
  CHECK(aliased > 0);
  s.finish();
}

TEST_CASE("vulkan barriers: two independent nodes run with no barrier between them, validation silent",
          "[vulkan][barriers]") {
  session s;
  if (!s.open()) return;
  const ferrum::plan p = hazard_plans::pair(true);
  auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(p));
  const hazard_encoder::outcome o = hazard_encoder::run(*s.device, p, program, 3);
  CHECK(o.barriers == 3);  // each wave's closing one alone
  CHECK(o.lists_opened == 0);
  CHECK(o.mismatches == 0);
  s.finish();
}

TEST_CASE("vulkan barriers: split, a consumer three nodes after its producer waits for an event, validation silent",
          "[vulkan][barriers][split]") {
  session s;
  if (!s.open()) return;
  const ferrum::plan p = hazard_plans::far_pair(2);
  auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(p));
  ferrum::scheduler_options split;
  split.split_barriers = true;
  const hazard_encoder::outcome o = hazard_encoder::run(*s.device, p, program, 3, split);
  CHECK(o.checks == 3);
  CHECK(o.mismatches == 0);
  CHECK(o.events == 3 * 3);  // per wave: the set, the wait, the reset
  s.finish();
}

TEST_CASE("vulkan barriers: an event's wait without the consumer's stage is reported by synchronization validation",
          "[vulkan][barriers][split]") {
  for (const bool weak : {false, true}) {
    INFO((weak ? "a wait without the copy's transfer stage" : "the right scope"));
    session s;
    if (!s.open()) return;
    CHECK(run_event_lists(*s.device, weak) == 7u);
    const std::string reported = s.finish_reported();
    INFO(reported);
    CHECK((reported.find("SYNC-HAZARD-READ-AFTER-WRITE") != std::string::npos) == weak);
    if (!weak) CHECK(reported.empty());
  }
}
