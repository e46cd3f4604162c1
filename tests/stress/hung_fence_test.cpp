// Stress with finite GPU hangs longer than the fence timeout: a hung
// submission stalls every later one, so waves time out, their lanes are
// quarantined, and come back once the hang ends.
#include "stress_harness.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace std::chrono_literals;
using ferrum::errc;
using ferrum::gpu::fault_kind;

namespace {

bool hangs(const ferrum::gpu::null_fault_options& faults, std::uint64_t submission) {
  const auto f = ferrum::gpu::decide_fault(faults, submission);
  return f && f->kind == fault_kind::hang;
}

// The first seed whose hangs among the first `span` submissions number
// `low` to `high`, the first of them not before submission 20: the run
// stays short whatever the number of submissions it gets to.
std::uint64_t seed_with_hangs(ferrum::gpu::null_fault_options faults, std::uint64_t span, int low, int high) {
  for (std::uint64_t seed = 1;; ++seed) {
    faults.seed = seed;
    int count = 0;
    std::uint64_t first = 0;
    for (std::uint64_t v = 1; v <= span; ++v) {
      if (!hangs(faults, v)) continue;
      ++count;
      if (first == 0) first = v;
    }
    if (count >= low && count <= high && first >= 20) return seed;
  }
}

}  // namespace

TEST_CASE(
    "stress: hangs longer than the fence timeout fail the stalled waves with fence_timeout and quarantine their lanes "
    "until the hang ends",
    "[stress]") {
  stress::scenario s;
  s.name = "hang";
  s.waves = 1500;
  s.submit_cap = 6s;
  s.lanes = 2;
  s.threads = 4;
  s.submitters = 3;
  s.window = 5;
  s.seed = 5;
  s.options.fence_timeout = 150ms;
  s.options.encoder_tasks = 3;
  s.device.faults = {.hang = 0.003, .delay = 0.1, .max_delay = 200us, .hang_duration = 450ms};
  s.device.faults.seed = seed_with_hangs(s.device.faults, s.waves, 2, 4);
  stress::stress_run run(s);
  run.run_and_check();

  const ferrum::gpu::null_fault_options& faults = s.device.faults;
  const std::uint64_t window = run.total_lanes();
  const auto injected = run.device().injected_faults();
  REQUIRE(injected.hang >= 1);
  CHECK(injected.lost == 0);
  std::vector<std::string> wrong;
  std::size_t timeouts = 0;
  for (const auto& w : run.waves()) {
    if (!w->submitted || w->completions.load() != 1) continue;
    const std::uint64_t f = w->report.submitted_value;
    const auto why = [&](const std::string& what) {
      if (wrong.size() < 20)
        wrong.push_back("wave " + std::to_string(w->token) + " (fence " + std::to_string(f) + ", outcome " +
                        stress::outcome_name(w->ec) + "): " + what);
    };
    // A hung submission outlasts the fence timeout: its wave must time out
    // (unless a cancellation completed it first).
    const bool late_abort = w->cancel_may_be_late() && w->ec == boost::asio::error::operation_aborted;
    if (f != 0 && hangs(faults, f) && w->ec != errc::fence_timeout && !late_abort) why("its own submission hung");
    const bool all_quarantined = w->ec == errc::all_lanes_quarantined;
    if (all_quarantined && f != 0) why("all lanes quarantined after it submitted");
    if (w->ec == errc::fence_timeout) {
      ++timeouts;
      // Only a hang among the submissions in flight with it stalls it: at
      // most one unreached submission per lane.
      bool stalled = false;
      for (std::uint64_t h = f >= window ? f - window + 1 : 1; h <= f && f != 0; ++h)
        stalled = stalled || hangs(faults, h);
      if (!stalled) why("timed out with no hang among the " + std::to_string(window) + " submissions up to its own");
    }
    switch (w->what) {
      case stress::disturbance::none:
        if (w->ec && w->ec != errc::fence_timeout && !all_quarantined) why("an outcome no fault explains");
        break;
      case stress::disturbance::throws:
        if (w->ec != errc::encoder_failed && !all_quarantined) why("its encoder threw");
        break;
      case stress::disturbance::cancel_at_submit:
      case stress::disturbance::cancel_in_encoder:
        if (w->cancel_may_be_late() && (!w->ec || w->ec == errc::fence_timeout)) break;
        if (w->ec != boost::asio::error::operation_aborted && !all_quarantined) why("it was cancelled before submit");
        break;
    }
  }
  for (const std::string& m : wrong) UNSCOPED_INFO(m);
  CHECK(wrong.empty());
  CHECK(timeouts > 0);
  CHECK(run.most_quarantined_seen() > 0);
  // Once the hangs are over, every quarantined lane is back in service.
  for (const ferrum::lane_counts& c : run.settle(std::chrono::milliseconds(3000))) {
    CHECK(c.quarantined == 0);
    CHECK(c.free == c.lanes);
  }
}
