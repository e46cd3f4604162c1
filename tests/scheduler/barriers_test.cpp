// A wave's barriers on the null device: each node's list opens with one
// only where the compiler derived a hazard (or, with
// barrier_placement::every_node, always), and every read sees the last
// write before it (hazard_encoder.hpp) even when the device runs what no
// barrier orders last to first (null_device_options::reorder_unordered), as
// a GPU may; a derived barrier dropped from the program shows as reads
// before their writes.
#include "hazard_encoder.hpp"

#include "ferrum/gpu/null_device.hpp"
#include "ferrum/scheduler/trace.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <utility>

namespace {

std::unique_ptr<ferrum::gpu::null_device> reordering_device() {
  ferrum::gpu::null_device_options options;
  options.reorder_unordered = true;
  return ferrum::gpu::null_device::create(options).value();
}

std::shared_ptr<const ferrum::compiled_program> compiled(const ferrum::plan& p) {
  return std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(p));
}

// `program` with node n's derived barrier dropped (from every set: a
// compute-only wave runs on one queue, in level order where that differs).
std::shared_ptr<const ferrum::compiled_program> dropped(const ferrum::compiled_program& program, std::size_t n) {
  auto changed = std::make_shared<ferrum::compiled_program>(program);
  changed->buckets[0].lane.barrier_before[n] = false;
  changed->buckets[0].lane.one_queue_barrier_before[n] = false;
  if (!changed->buckets[0].lane.ordered_barrier_before.empty())
    changed->buckets[0].lane.ordered_barrier_before[n] = false;
  return changed;
}

}  // namespace

TEST_CASE("wave barriers: over generated plans the derived barriers order every hazard, the device reordering the rest",
          "[scheduler][barriers][split]") {
  // And split (scheduler_options::split_barriers): the barriers and events
  // left.
  auto device = reordering_device();
  std::mt19937_64 rng(11);
  hazard_encoder::outcome total;
  std::size_t events = 0;
  for (int round = 0; round < 4; ++round) {
    const ferrum::plan p = hazard_plans::generate(rng, {});
    for (const bool split : {false, true}) {
      ferrum::scheduler_options options;
      options.split_barriers = split;
      const hazard_encoder::outcome o = hazard_encoder::run(*device, p, compiled(p), split ? 2 : 4, options);
      total.checks += o.checks;
      total.mismatches += o.mismatches;
      total.lists_opened += o.lists_opened;
      events += o.events;
    }
  }
  CHECK(total.checks > 50);
  CHECK(total.mismatches == 0);
  CHECK(total.lists_opened > 0);
  CHECK(events > 0);
}

TEST_CASE("wave barriers: a read after a write whose barrier is dropped reads before the write",
          "[scheduler][barriers]") {
  auto device = reordering_device();
  const ferrum::plan p = hazard_plans::pair(false);
  const auto program = compiled(p);
  REQUIRE(program->buckets[0].lane.barrier_before == std::vector<bool>{false, true});
  const hazard_encoder::outcome kept = hazard_encoder::run(*device, p, program, 2);
  CHECK(kept.checks == 2);
  CHECK(kept.mismatches == 0);
  const hazard_encoder::outcome without = hazard_encoder::run(*device, p, dropped(*program, 1), 2);
  CHECK(without.checks == 2);
  // Every word of the 256-byte resource, in both waves.
  CHECK(without.mismatches == 2 * 64);
}

TEST_CASE("wave barriers: every_node opens every node's list with a barrier, as before they were derived",
          "[scheduler][barriers]") {
  auto device = reordering_device();
  std::mt19937_64 rng(12);
  const ferrum::plan p = hazard_plans::generate(rng, {});
  const auto program = compiled(p);
  ferrum::scheduler_options options;
  options.barriers = ferrum::barrier_placement::every_node;
  const hazard_encoder::outcome every = hazard_encoder::run(*device, p, program, 3, options);
  const hazard_encoder::outcome derived = hazard_encoder::run(*device, p, program, 3);
  CHECK(every.checks == derived.checks);
  CHECK(every.mismatches == 0);
  CHECK(derived.mismatches == 0);
  CHECK(every.barriers > derived.barriers);
}

TEST_CASE(
    "wave barriers: two independent nodes on their own bytes record no barrier between them, only the wave's "
    "closing one",
    "[scheduler][barriers]") {
  auto device = reordering_device();
  const ferrum::plan p = hazard_plans::pair(true);
  const auto program = compiled(p);
  REQUIRE(program->buckets[0].lane.barriers_per_wave() == 0);
  const hazard_encoder::outcome o = hazard_encoder::run(*device, p, program, 2);
  CHECK(o.barriers == 2);  // one closing each wave
  CHECK(o.lists_opened == 0);
}

TEST_CASE("wave barriers: the Chrome trace marks a barrier point on the GPU track where a node's list opened with one",
          "[scheduler][barriers][trace]") {
  auto device = reordering_device();
  const ferrum::plan p = hazard_plans::pair(false);
  ferrum::trace_recorder recorder(1 << 10);
  ferrum::scheduler_options options;
  options.gpu_timestamps = true;
  options.trace = &recorder;
  // The trace's spans name the program's buckets: it outlives them.
  const auto program = compiled(p);
  const hazard_encoder::outcome o = hazard_encoder::run(*device, p, program, 3, options);
  CHECK(o.mismatches == 0);
  std::ostringstream out;
  ferrum::write_chrome_trace(out, recorder, p);
  const auto trace = nlohmann::json::parse(out.str());
  // Per (wave, node): the GPU span's start and its barrier mark.
  std::map<std::pair<int, int>, double> spans;
  std::map<std::pair<int, int>, double> barriers;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M") continue;
    const auto key = [&] { return std::pair(e.at("args").at("wave").get<int>(), e.at("args").at("node").get<int>()); };
    if (e.at("cat") == "gpu") {
      spans[key()] = e.at("ts").get<double>();
      CHECK(e.at("args").contains("barrier") == (e.at("args").at("node") == 1));
    } else if (e.at("cat") == "barrier") {
      CHECK(e.at("ph") == "i");
      CHECK(e.at("pid") == 3);
      barriers[key()] = e.at("ts").get<double>();
    }
  }
  CHECK(spans.size() == 3 * 2);
  // Node 1 reads what node 0 wrote: one barrier point per wave, at its span.
  REQUIRE(barriers.size() == 3);
  for (const auto& [at, ts] : barriers) {
    CHECK(at.second == 1);
    CHECK(ts == spans.at(at));
  }
}

TEST_CASE("wave barriers: chains listed one after another run level by level, with a barrier a level",
          "[scheduler][barriers][node_order]") {
  auto device = reordering_device();
  const ferrum::plan p = hazard_plans::chains(3, 4);
  const auto program = compiled(p);
  const ferrum::lane_recipe& lane = program->buckets[0].lane;
  REQUIRE(lane.order == std::vector<std::size_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  const hazard_encoder::outcome levels = hazard_encoder::run(*device, p, program, 2);
  ferrum::scheduler_options in_plan_order;
  in_plan_order.order = ferrum::node_order::plan;
  const hazard_encoder::outcome plan_order = hazard_encoder::run(*device, p, program, 2, in_plan_order);
  CHECK(levels.checks == 2 * 9);
  CHECK(levels.mismatches == 0);
  CHECK(plan_order.mismatches == 0);
  CHECK(levels.lists_opened == 2 * 3);
  CHECK(plan_order.lists_opened == 2 * 9);
}

TEST_CASE(
    "wave barriers: waves in their buckets' level order record fewer barriers than in plan order, both right, "
    "and a dropped barrier of the level order is caught",
    "[scheduler][barriers][node_order]") {
  auto device = reordering_device();
  std::mt19937_64 rng(23);
  hazard_encoder::outcome levels;
  hazard_encoder::outcome plan_order;
  std::size_t caught = 0;
  std::size_t reordered = 0;
  for (int round = 0; round < 4; ++round) {
    const ferrum::plan p = hazard_plans::generate(rng, {16, 12, 3, 2, 0});
    const auto program = compiled(p);
    ferrum::scheduler_options in_plan_order;
    in_plan_order.order = ferrum::node_order::plan;
    const hazard_encoder::outcome a = hazard_encoder::run(*device, p, program, 2);
    const hazard_encoder::outcome b = hazard_encoder::run(*device, p, program, 2, in_plan_order);
    for (auto [total, o] : {std::pair{&levels, &a}, std::pair{&plan_order, &b}}) {
      total->checks += o->checks;
      total->mismatches += o->mismatches;
      total->lists_opened += o->lists_opened;
    }
    const ferrum::lane_recipe& lane = program->buckets[0].lane;
    if (lane.order.empty()) continue;
    ++reordered;
    // Each barrier of the level order dropped in turn: the data shows it
    // missing where a later read checks what its hazard orders (a write
    // after a read that nothing reads again shows nothing).
    std::size_t mismatches = 0;
    for (std::size_t at = 1; at < lane.order.size(); ++at)
      if (lane.ordered_barrier_before[lane.order[at]])
        mismatches += hazard_encoder::run(*device, p, dropped(*program, lane.order[at]), 1).mismatches;
    caught += mismatches > 0 ? 1 : 0;
  }
  CHECK(reordered >= 2);
  // Most plans show it (that each one is needed for some hazard, read or
  // not, the binding tests prove by brute force).
  CHECK(caught * 2 > reordered);
  CHECK(levels.checks == plan_order.checks);
  CHECK(levels.checks > 20);
  CHECK(levels.mismatches == 0);
  CHECK(plan_order.mismatches == 0);
  CHECK(levels.lists_opened < plan_order.lists_opened);
}

TEST_CASE(
    "wave barriers: split, a consumer three nodes after its producer waits for an event, and without the wait it "
    "reads before the write",
    "[scheduler][barriers][split]") {
  auto device = reordering_device();
  const ferrum::plan p = hazard_plans::far_pair(2);
  const auto program = compiled(p);
  const ferrum::lane_recipe& lane = program->buckets[0].lane;
  REQUIRE(lane.order.empty());
  REQUIRE(lane.one_queue_barrier_before[3]);
  REQUIRE(lane.one_queue_split.events.size() == 1);
  ferrum::scheduler_options split;
  split.split_barriers = true;
  // The plain barriers' access errors (the null device counts a dispatch
  // as reading and writing its buffers, which a plan's read does not), for
  // the split run to add none to.
  const std::uint64_t before_plain = device->barrier_access_errors().count;
  CHECK(hazard_encoder::run(*device, p, program, 2).mismatches == 0);
  const std::uint64_t plain_errors = device->barrier_access_errors().count - before_plain;
  const hazard_encoder::outcome kept = hazard_encoder::run(*device, p, program, 2, split);
  CHECK(kept.checks == 2);
  CHECK(kept.mismatches == 0);
  // Per wave: the set, the wait and the last list's reset.
  CHECK(kept.events == 2 * 3);
  CHECK(device->barrier_access_errors().count - before_plain == 2 * plain_errors);
  // The same program without the option: a barrier, no event.
  CHECK(hazard_encoder::run(*device, p, program, 1).events == 0);
  // The wait dropped, or its set waiting for the transfer stage alone.
  auto no_wait = std::make_shared<ferrum::compiled_program>(*program);
  ferrum::split_barriers& s = no_wait->buckets[0].lane.one_queue_split;
  s.waits.clear();
  std::fill(s.wait_begin.begin(), s.wait_begin.end(), 0);
  const hazard_encoder::outcome without = hazard_encoder::run(*device, p, no_wait, 2, split);
  CHECK(without.checks == 2);
  CHECK(without.mismatches == 2 * 64);
  auto weak = std::make_shared<ferrum::compiled_program>(*program);
  weak->buckets[0].lane.one_queue_split.events[0].scope.before.stages = ferrum::stages::transfer;
  CHECK(hazard_encoder::run(*device, p, weak, 1, split).mismatches == 64);
}
