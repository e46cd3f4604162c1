// Stress of the ends of a scheduler's life under load: async_shutdown called
// while submitters go on, and the destructor run with waves in flight and
// queued for lanes.
#include "stress_harness.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace std::chrono_literals;
using ferrum::errc;

namespace {

// The outcome a wave's own plan gives it when nothing else intervenes.
bool follows_plan(const stress::wave_record& w) {
  switch (w.what) {
    case stress::disturbance::none:
      return !w.ec;
    case stress::disturbance::throws:
      return w.ec == errc::encoder_failed;
    case stress::disturbance::cancel_at_submit:
    case stress::disturbance::cancel_in_encoder:
      return w.ec == boost::asio::error::operation_aborted || (w.cancel_may_be_late() && !w.ec);
  }
  return false;
}

std::string describe(const stress::wave_record& w) {
  return "wave " + std::to_string(w.token) + " (plan " + std::string(stress::plan_name(w.what)) + ", phase " +
         std::to_string(w.phase_before) + ".." + std::to_string(w.phase_after) + ", outcome " +
         stress::outcome_name(w.ec) + ")";
}

}  // namespace

TEST_CASE("stress: async_shutdown under load lets every wave accepted before it finish and refuses every later one",
          "[stress]") {
  stress::scenario s;
  s.name = "shutdown";
  s.waves = 4000;
  s.submit_cap = 4s;
  s.lanes = 2;
  s.threads = 4;
  s.submitters = 3;
  s.window = 8;
  s.seed = 41;
  s.coroutine_rate = 0.2;
  s.shutdown_after = 1000;
  s.device.faults = {.seed = 41, .delay = 0.2, .max_delay = 200us};
  s.options.encoder_tasks = 3;
  stress::stress_run run(s);
  run.run_and_check();

  REQUIRE(run.mid_shutdown_completed());
  CHECK_FALSE(run.mid_shutdown_error());
  std::vector<std::string> wrong;
  std::size_t before = 0;
  std::size_t after = 0;
  for (const auto& w : run.waves()) {
    if (!w->submitted || w->completions.load() != 1) continue;
    const bool shut_down = w->ec == errc::scheduler_shut_down;
    if (w->phase_after == 0) {
      // Accepted before async_shutdown was called: runs to its end.
      ++before;
      if (!follows_plan(*w)) wrong.push_back(describe(*w) + ": accepted before the shutdown");
    } else if (w->phase_before == 2) {
      ++after;
      if (!shut_down) wrong.push_back(describe(*w) + ": submitted after async_shutdown returned");
    } else if (!shut_down && !follows_plan(*w)) {
      wrong.push_back(describe(*w) + ": submitted while async_shutdown was called");
    }
    if (wrong.size() >= 20) break;
  }
  for (const std::string& m : wrong) UNSCOPED_INFO(m);
  CHECK(wrong.empty());
  CHECK(before >= 1000);
  CHECK(after > 0);
  for (const ferrum::lane_counts& c : run.final_counts()) {
    CHECK(c.quarantined == 0);
    CHECK(c.free == c.lanes);
  }
}

TEST_CASE("stress: destroying the scheduler with waves in flight and queued completes each of them exactly once",
          "[stress]") {
  stress::scenario s;
  s.name = "destroy";
  s.waves = 3000;
  s.submit_cap = 4s;
  s.lanes = 1;
  s.threads = 3;
  s.submitters = 3;
  s.window = 10;
  s.seed = 43;
  s.coroutine_rate = 0.2;
  s.destroy_after = 600;
  s.device.faults = {.seed = 43, .delay = 0.3, .max_delay = 300us};
  s.options.encoder_tasks = 3;
  stress::stress_run run(s);
  run.run_and_check();

  REQUIRE(run.destroyed());
  std::vector<std::string> wrong;
  std::size_t refused = 0;
  for (const auto& w : run.waves()) {
    if (!w->submitted || w->completions.load() != 1) continue;
    // Waves queued for a lane when the destructor closed the pools fail with
    // scheduler_shut_down; the others run to their end.
    if (w->ec == errc::scheduler_shut_down) {
      ++refused;
      if (w->report.submitted_value != 0) wrong.push_back(describe(*w) + ": refused after it submitted");
    } else if (!follows_plan(*w) && wrong.size() < 20) {
      wrong.push_back(describe(*w) + ": an outcome its plan does not explain");
    }
  }
  for (const std::string& m : wrong) UNSCOPED_INFO(m);
  CHECK(wrong.empty());
  CHECK(refused > 0);
  CHECK(run.destroy_time() < std::chrono::seconds(5));
}
