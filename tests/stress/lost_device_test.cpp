// Stress with a device loss in the middle of the run: waves whose fence
// precedes the lost submission succeed, every later one fails with
// device_lost (or all_lanes_quarantined), and lanes in flight at the loss
// stay quarantined.
#include "stress_harness.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using ferrum::errc;
using ferrum::gpu::fault_kind;

namespace {

// The first submission `faults` loses the device at (0: none up to `span`).
std::uint64_t first_loss(const ferrum::gpu::null_fault_options& faults, std::uint64_t span) {
  for (std::uint64_t v = 1; v <= span; ++v) {
    const auto f = ferrum::gpu::decide_fault(faults, v);
    if (f && f->kind == fault_kind::lost) return v;
  }
  return 0;
}

}  // namespace

TEST_CASE("stress: a device lost mid-run fails every wave at or after the lost submission and none before it",
          "[stress]") {
  stress::scenario s;
  s.name = "lost";
  s.waves = 1000;
  s.submit_cap = 4s;
  s.lanes = 2;
  s.threads = 4;
  s.submitters = 3;
  s.window = 6;
  s.seed = 9;
  s.options.encoder_tasks = 3;
  s.device.faults = {.lost = 0.004, .delay = 0.2, .max_delay = 200us};
  // A seed that loses the device between the 150th and 250th submission.
  std::uint64_t loss = 0;
  for (std::uint64_t seed = 1; loss < 150 || loss > 250; ++seed) {
    s.device.faults.seed = seed;
    loss = first_loss(s.device.faults, 250);
  }
  stress::stress_run run(s);
  run.run_and_check();

  INFO("the device is lost at submission " << loss);
  REQUIRE(run.device().lost());
  CHECK(run.device().injected_faults().lost == 1);
  std::vector<std::string> wrong;
  // The last fence value submitted into each (bucket, lane).
  std::map<std::pair<std::string, std::uint32_t>, std::uint64_t> last_fence;
  std::size_t lost_waves = 0;
  for (const auto& w : run.waves()) {
    if (!w->submitted || w->completions.load() != 1) continue;
    const std::uint64_t f = w->report.submitted_value;
    const auto why = [&](const std::string& what) {
      if (wrong.size() < 20)
        wrong.push_back("wave " + std::to_string(w->token) + " (fence " + std::to_string(f) + ", outcome " +
                        stress::outcome_name(w->ec) + "): " + what);
    };
    if (f != 0 && w->report.bucket != nullptr) {
      std::uint64_t& last = last_fence[{w->report.bucket->str(), w->report.lane}];
      last = std::max(last, f);
    }
    const bool lost = w->ec == errc::device_lost || w->ec == errc::all_lanes_quarantined;
    lost_waves += lost ? 1 : 0;
    const bool late_abort = w->cancel_may_be_late() && w->ec == boost::asio::error::operation_aborted;
    if (f >= loss && !lost && !late_abort) why("its submission came at or after the lost one");
    if (lost && f != 0 && f < loss) why("its submission ran before the loss");
    if (w->ec == errc::all_lanes_quarantined && f != 0) why("all lanes quarantined after it submitted");
    if (w->ec == errc::fence_timeout) why("no hang was injected");
    switch (w->what) {
      case stress::disturbance::none:
        if (w->ec && !lost) why("an outcome no fault explains");
        break;
      case stress::disturbance::throws:
        if (w->ec != errc::encoder_failed && !lost) why("its encoder threw");
        break;
      case stress::disturbance::cancel_at_submit:
      case stress::disturbance::cancel_in_encoder:
        if (w->cancel_may_be_late() && !w->ec) break;
        if (w->ec != boost::asio::error::operation_aborted && !lost) why("it was cancelled before submit");
        break;
    }
  }
  for (const std::string& m : wrong) UNSCOPED_INFO(m);
  CHECK(wrong.empty());
  CHECK(lost_waves > 0);

  // A lane whose last submission is at or after the lost one may still be
  // written by the GPU as far as anyone knows: quarantined for good. Every
  // other lane is free.
  std::uint32_t expected_quarantined = 0;
  for (const auto& [lane, value] : last_fence) expected_quarantined += value >= loss ? 1 : 0;
  std::uint32_t quarantined = 0;
  for (const ferrum::lane_counts& c : run.final_counts()) quarantined += c.quarantined;
  CHECK(expected_quarantined >= 1);
  CHECK(quarantined == expected_quarantined);
}
