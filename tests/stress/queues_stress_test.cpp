// Stress over two queues: the plan's odd nodes run on the null device's
// transfer queue, so every wave has segments on both queues, cross-queue
// waits and a join. Random throws, cancellations and delays, and the device
// lost midway (the loss may come from either queue): every handler runs
// exactly once, no lane is handed out before the join that covers all its
// queues' work (the harness's probes and tokens), and at the end every lane
// is free or, at the loss, quarantined for good. The same over two devices
// of two queues each, one of them lost midway: the other runs on.
#include "stress_harness.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace std::chrono_literals;
using ferrum::errc;

namespace {

// The first compute (queue 0) or transfer (1) submission, up to `span`, at
// which `faults` lose the device; span + 1 if none.
std::uint64_t first_loss(const ferrum::gpu::null_fault_options& faults, std::size_t queue, std::uint64_t span) {
  for (std::uint64_t v = 1; v <= span; ++v)
    if (const auto f = ferrum::gpu::decide_fault(faults, queue, v); f && f->kind == ferrum::gpu::fault_kind::lost)
      return v;
  return span + 1;
}

// Picks the seed of `faults` so that the device is lost on its compute queue
// between submissions `from` and `to`, with no loss on its transfer queue
// before 80% of `to`.
void lose_between(ferrum::gpu::null_fault_options& faults, std::uint64_t from, std::uint64_t to) {
  for (std::uint64_t seed = 1;; ++seed) {
    faults.seed = seed;
    const std::uint64_t loss = first_loss(faults, 0, to);
    if (loss >= from && loss <= to && first_loss(faults, 1, to * 4 / 5) > to * 4 / 5) return;
  }
}

}  // namespace

TEST_CASE("stress: waves over two queues keep every invariant through cancellations and a device loss", "[stress]") {
  stress::scenario s;
  s.name = "two queues";
  s.two_queues = true;
  s.waves = 800;
  s.submit_cap = 4s;
  s.seed = 21;
  s.device.faults = {.lost = 0.001, .delay = 0.2, .max_delay = 200us};
  // Lost on the compute queue between its 300th and 600th submission (about
  // waves 60 to 120: five compute submissions a wave).
  lose_between(s.device.faults, 300, 600);
  stress::stress_run run(s);
  run.run_and_check();

  REQUIRE(run.device().queue_count() == 2);
  CHECK(run.device().queue(ferrum::queue_kind::transfer).last_submitted() > 0);
  REQUIRE(run.device().lost());
  std::size_t succeeded = 0;
  std::size_t lost = 0;
  for (const auto& w : run.waves()) {
    if (!w->submitted) continue;
    CHECK(w->completions.load() == 1);
    if (!w->ec) ++succeeded;
    if (w->ec == errc::device_lost || w->ec == errc::all_lanes_quarantined) ++lost;
    CHECK(w->ec != errc::fence_timeout);
  }
  CHECK(succeeded > 0);
  CHECK(lost > 0);
  for (const ferrum::lane_counts& c : run.final_counts()) {
    CHECK(c.in_flight == 0);
    CHECK(c.free + c.quarantined == c.lanes);
  }
}

TEST_CASE(
    "stress: waves over two devices of two queues each keep every invariant, and one lost device stops only itself",
    "[stress][devices]") {
  stress::scenario s;
  s.name = "two devices";
  s.two_queues = true;
  s.waves = 800;
  s.submit_cap = 4s;
  s.seed = 23;
  // Device 0 is lost between its 300th and 600th compute submission (about
  // waves 120 to 240 of the run: half of them go to it); device 1 is only
  // slowed down.
  s.device.faults = {.lost = 0.001, .delay = 0.2, .max_delay = 200us};
  lose_between(s.device.faults, 300, 600);
  s.more_devices.push_back({.faults = {.seed = 5, .delay = 0.2, .max_delay = 200us}});
  stress::stress_run run(s);
  run.run_and_check();

  REQUIRE(run.device_count() == 2);
  REQUIRE(run.device(0).lost());
  REQUIRE_FALSE(run.device(1).lost());
  for (std::size_t d = 0; d < 2; ++d) CHECK(run.device(d).queue(ferrum::queue_kind::transfer).last_submitted() > 0);
  std::array<std::size_t, 2> succeeded{};
  std::uint64_t last_on_lost = 0;  // the last wave id that ran on device 0
  for (const auto& w : run.waves()) {
    if (!w->submitted) continue;
    CHECK(w->completions.load() == 1);
    if (w->device.load() == 0) last_on_lost = std::max(last_on_lost, w->report.wave);
    if (!w->ec) ++succeeded[w->report.device];
    // Device 1 always has lanes: no wave runs out of them, and only device
    // 0's waves meet its loss.
    CHECK(w->ec != errc::all_lanes_quarantined);
    CHECK(w->ec != errc::fence_timeout);
    if (w->ec == errc::device_lost) CHECK(w->report.device == 0);
  }
  CHECK(succeeded[0] > 0);
  CHECK(succeeded[1] > 0);
  // Waves after device 0's last one ran on device 1, and succeeded there.
  std::size_t later = 0;
  for (const auto& w : run.waves())
    if (w->submitted && w->report.wave > last_on_lost && !w->ec) ++later;
  CHECK(later > 0);
  // Device 1's lanes are all back; device 0's are free or out for good.
  const std::size_t buckets = stress::request_kinds.size();
  for (std::size_t i = 0; i < run.final_counts().size(); ++i) {
    const ferrum::lane_counts& c = run.final_counts()[i];
    CHECK(c.in_flight == 0);
    CHECK(c.free + c.quarantined == c.lanes);
    if (i >= buckets) CHECK(c.quarantined == 0);
  }
}
