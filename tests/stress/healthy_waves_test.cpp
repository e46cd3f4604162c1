// Stress without hangs or losses: only delay faults, so every outcome follows
// from the wave's own plan and no lane may ever be quarantined.
#include "stress_harness.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace std::chrono_literals;
using ferrum::errc;

namespace {

// Without hang or loss faults a wave's outcome is its plan's: success,
// encoder_failed for a throw, operation_aborted for a cancellation (or
// success, for one whose signal came only after it had submitted).
void check_outcomes_follow_plans(const stress::stress_run& run) {
  std::vector<std::string> wrong;
  for (const auto& w : run.waves()) {
    if (!w->submitted || w->completions.load() != 1) continue;
    boost::system::error_code expected;
    switch (w->what) {
      case stress::disturbance::none:
        break;
      case stress::disturbance::throws:
        expected = make_error_code(errc::encoder_failed);
        break;
      case stress::disturbance::cancel_at_submit:
        expected = boost::asio::error::operation_aborted;
        break;
      case stress::disturbance::cancel_in_encoder:
        // Emitted while encoding: total alone is ignored there.
        if (w->cancel_type != boost::asio::cancellation_type::total) expected = boost::asio::error::operation_aborted;
        break;
    }
    // A cancellation that came after submit may find the wave done.
    if (w->cancel_may_be_late() && !w->ec) continue;
    if (w->ec != expected && wrong.size() < 20)
      wrong.push_back("wave " + std::to_string(w->token) + " of plan " + std::string(stress::plan_name(w->what)) +
                      " completed with " + stress::outcome_name(w->ec));
  }
  for (const std::string& s : wrong) UNSCOPED_INFO(s);
  CHECK(wrong.empty());
}

void check_nothing_quarantined(const stress::stress_run& run) {
  CHECK(run.most_quarantined_seen() == 0);
  for (const ferrum::lane_counts& c : run.final_counts()) {
    CHECK(c.quarantined == 0);
    CHECK(c.free == c.lanes);
  }
}

}  // namespace

TEST_CASE(
    "stress: concurrent waves in three buckets complete exactly once, each holding its lane alone until its fence",
    "[stress]") {
  stress::scenario s;
  s.name = "healthy";
  s.waves = 10000;
  s.submit_cap = 5s;
  s.lanes = 2;
  s.threads = 4;
  s.submitters = 3;
  s.window = 6;
  s.seed = 11;
  s.device.faults = {.seed = 11, .delay = 0.25, .max_delay = 300us};
  s.options.encoder_tasks = 3;
  stress::stress_run run(s);
  run.run_and_check();
  check_outcomes_follow_plans(run);
  check_nothing_quarantined(run);
  CHECK(run.submitted() >= 200);
  CHECK(run.device().injected_faults().delay > 0);
  // Lanes of more than one bucket were held at once.
  CHECK(run.final_stats().max_in_flight > 2);
}

TEST_CASE(
    "stress: one lane per bucket under heavy contention serves queued waves and lets cancelled ones leave the queue",
    "[stress]") {
  stress::scenario s;
  s.name = "contention";
  s.waves = 6000;
  s.submit_cap = 4s;
  s.lanes = 1;
  s.threads = 3;
  s.submitters = 3;
  s.window = 10;
  s.seed = 23;
  s.throw_rate = 0.08;
  s.cancel_rate = 0.3;
  s.nodes = 5;
  s.device.faults = {.seed = 23, .delay = 0.3, .max_delay = 200us};
  s.options.encoder_tasks = 4;
  stress::stress_run run(s);
  run.run_and_check();
  check_outcomes_follow_plans(run);
  check_nothing_quarantined(run);
  CHECK(run.submitted() >= 200);
  CHECK(run.final_stats().max_in_flight <= 3);
  // Waves did queue for the lanes (and cancelled ones among them left).
  CHECK(run.most_waiting_seen() > 0);
}

TEST_CASE(
    "stress: coroutine encoders that suspend on timers keep their node's context and their lane until they return",
    "[stress]") {
  stress::scenario s;
  s.name = "coroutines";
  s.waves = 5000;
  s.submit_cap = 4s;
  s.lanes = 2;
  s.threads = 4;
  s.submitters = 3;
  s.window = 6;
  s.seed = 31;
  s.coroutine_rate = 0.5;
  s.spin_rate = 0.1;
  s.sleep_rate = 0.05;
  s.max_spin = 50us;
  s.max_sleep = 200us;
  s.device.faults = {.seed = 31, .delay = 0.2, .max_delay = 200us};
  s.options.encoder_tasks = 3;
  stress::stress_run run(s);
  run.run_and_check();
  check_outcomes_follow_plans(run);
  check_nothing_quarantined(run);
  std::size_t coroutines = 0;
  for (const auto& w : run.waves()) coroutines += w->submitted && w->coroutine ? 1 : 0;
  CHECK(coroutines >= 100);
}
