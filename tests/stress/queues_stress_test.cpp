// Stress over two queues: the plan's odd nodes run on the null device's
// transfer queue, so every wave has segments on both queues, cross-queue
// waits and a join. Random throws, cancellations and delays, and the device
// lost midway (the loss may come from either queue): every handler runs
// exactly once, no lane is handed out before the join that covers all its
// queues' work (the harness's probes and tokens), and at the end every lane
// is free or, at the loss, quarantined for good.
#include "stress_harness.hpp"

#include <catch2/catch.hpp>

using namespace std::chrono_literals;
using ferrum::errc;

TEST_CASE("stress: waves over two queues keep every invariant through cancellations and a device loss", "[stress]") {
  stress::scenario s;
  s.name = "two queues";
  s.two_queues = true;
  s.waves = 800;
  s.submit_cap = 4s;
  s.seed = 21;
  s.device.faults = {.lost = 0.001, .delay = 0.2, .max_delay = 200us};
  // A seed that loses the device on the compute queue between its 300th and
  // 600th submission (about waves 60 to 120: five compute submissions a
  // wave), with no loss on the transfer queue before.
  const auto first_loss = [&](std::size_t queue, std::uint64_t span) -> std::uint64_t {
    for (std::uint64_t v = 1; v <= span; ++v)
      if (const auto f = ferrum::gpu::decide_fault(s.device.faults, queue, v);
          f && f->kind == ferrum::gpu::fault_kind::lost)
        return v;
    return span + 1;
  };
  for (std::uint64_t seed = 1;; ++seed) {
    s.device.faults.seed = seed;
    const std::uint64_t loss = first_loss(0, 600);
    if (loss >= 300 && loss <= 600 && first_loss(1, 480) > 480) break;
  }
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
