// The after-the-fact checks of a stress run (see stress_harness.hpp), and
// its summary line.
#include "stress_harness.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/error.hpp>

#include <cstdio>
#include <map>
#include <thread>

namespace stress {
namespace {

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;
using ferrum::errc;

std::string describe(const wave_record& w) {
  std::string s = "wave " + std::to_string(w.token) + " (plan " + std::string(plan_name(w.what)) +
                  (w.coroutine ? ", coroutine" : "") + ", request " + std::string(request_kinds[w.request].bucket) +
                  ", outcome " + outcome_name(w.ec) + ", fence " + std::to_string(w.report.submitted_value) +
                  ", device " + std::to_string(w.report.device) + ", lane " + std::to_string(w.report.lane) + ")";
  return s;
}

}  // namespace

std::string outcome_name(const boost::system::error_code& ec) {
  if (!ec) return "ok";
  return ferrum::error_code_name(ec);
}

std::string_view plan_name(disturbance d) noexcept {
  switch (d) {
    case disturbance::none:
      return "none";
    case disturbance::throws:
      return "throws";
    case disturbance::cancel_at_submit:
      return "cancel_at_submit";
    case disturbance::cancel_in_encoder:
      return "cancel_in_encoder";
  }
  return "unknown";
}

std::vector<ferrum::lane_counts> stress_run::settle(std::chrono::milliseconds limit) {
  const auto until = clock_type::now() + limit;
  std::vector<std::uint64_t> last;
  for (const auto& d : devices_) last.push_back(d->queue().last_submitted());
  std::vector<ferrum::lane_counts> counts;
  for (;;) {
    counts.clear();
    bool settled = true;
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      std::uint32_t quarantined = 0;
      for (const auto& pool : scheduler_->pools(d)) {
        counts.push_back(pool->counts());
        quarantined += counts.back().quarantined;
      }
      const ferrum::gpu::timeline& timeline = devices_[d]->queue().timeline();
      const bool idle = timeline.reached(last[d]) || timeline.failure();
      settled = settled && idle && (quarantined == 0 || devices_[d]->lost());
    }
    if (settled || clock_type::now() > until) return counts;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void stress_run::run_and_check() {
  run_all();
  summarize();
  check_invariants();
}

void stress_run::summarize() const {
  std::map<std::string, std::size_t> outcomes;
  for (const auto& w : records_)
    if (w->submitted) ++outcomes[outcome_name(w->ec)];
  std::string line;
  for (const auto& [name, count] : outcomes) line += " " + name + "=" + std::to_string(count);
  ferrum::gpu::fault_counts f;
  for (const auto& d : devices_) {
    const ferrum::gpu::fault_counts one = d->injected_faults();
    f.delay += one.delay;
    f.hang += one.hang;
    f.lost += one.lost;
  }
  std::printf("stress[%s]: %zu/%zu waves in %lld ms:%s; faults delay=%llu hang=%llu lost=%llu; max_in_flight=%u\n",
              scenario_.name.c_str(), submitted_.load(), records_.size(),
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed_).count()),
              line.c_str(), static_cast<unsigned long long>(f.delay), static_cast<unsigned long long>(f.hang),
              static_cast<unsigned long long>(f.lost), final_stats_.max_in_flight);
  std::fflush(stdout);
}

void stress_run::check_invariants() const {
  {
    const violation_log::seen seen = violations_.read();
    INFO("violations seen by encoders, probes and completion handlers: " << seen.count);
    for (const std::string& v : seen.first) UNSCOPED_INFO(v);
    CHECK(seen.count == 0);
  }
  CHECK(count_errors_ == 0);

  std::vector<std::string> problems;
  const auto problem = [&](const wave_record& w, const std::string& what) {
    if (problems.size() < 20) problems.push_back(describe(w) + ": " + what);
  };
  std::size_t submitted = 0;
  std::size_t ok = 0;
  std::size_t aborted = 0;
  // (device, fence value) -> waves with it
  std::map<std::pair<std::size_t, std::uint64_t>, std::size_t> by_fence;
  const auto fence_timeout = scenario_.options.fence_timeout;
  for (const auto& record : records_) {
    const wave_record& w = *record;
    if (!w.submitted) {
      if (w.completions.load() != 0) problem(w, "completed but never submitted");
      continue;
    }
    ++submitted;
    if (w.completions.load() != 1) {
      problem(w, "completed " + std::to_string(w.completions.load()) + " times");
      continue;
    }
    ok += w.ec ? 0 : 1;
    aborted += w.ec == asio::error::operation_aborted ? 1 : 0;
    const ferrum::wave_report& r = w.report;
    const std::uint64_t f = r.submitted_value;
    if (f != 0) ++by_fence[{r.device, f}];
    if (r.wave == 0) problem(w, "its report has no wave id");
    if (r.nodes != scenario_.nodes) problem(w, "its report counts " + std::to_string(r.nodes) + " nodes");
    // Only a wave refused before it picked a bucket (shut down) has none.
    if (r.bucket == nullptr ? w.ec != errc::scheduler_shut_down : r.bucket->str() != request_kinds[w.request].bucket)
      problem(w, "ran in bucket " + (r.bucket != nullptr ? r.bucket->str() : std::string("none")));
    const int b = w.bucket.load();
    const int l = w.lane.load();
    const int d = w.device.load();
    if (d >= 0 && static_cast<std::size_t>(d) != r.device) problem(w, "encoded on device " + std::to_string(d));
    if (b >= 0 && (r.bucket == nullptr || program_->buckets[static_cast<std::size_t>(b)].id != *r.bucket))
      problem(w, "encoded in another bucket than its report names");
    if (l >= 0 && static_cast<std::uint32_t>(l) != r.lane) problem(w, "encoded on lane " + std::to_string(l));
    std::size_t encoded = 0;
    for (std::size_t n = 0; n < scenario_.nodes; ++n) encoded += w.encoded[n].load() ? 1 : 0;
    if (f != 0 && encoded != scenario_.nodes)
      problem(w, "submitted with " + std::to_string(encoded) + " nodes encoded");
    if (f != 0 && (r.device >= devices_.size() || f > devices_[r.device]->queue().last_submitted()))
      problem(w, "its fence value was never submitted");

    if (!w.ec) {
      if (f == 0) problem(w, "succeeded without a fence value");
      if (!w.fence_reached_at_completion) problem(w, "completed before its fence value was reached");
      if (w.probes_at_completion != scenario_.nodes)
        problem(w, "completed with " + std::to_string(w.probes_at_completion) + " of its probes run");
      for (std::size_t p = 0; p < ferrum::wave_phase_count; ++p)
        if (!r.ended[p])
          problem(w, "succeeded without phase " + std::string(ferrum::to_string(static_cast<ferrum::wave_phase>(p))));
      if (r.ended[static_cast<std::size_t>(ferrum::wave_phase::submit)] &&
          r.ended[static_cast<std::size_t>(ferrum::wave_phase::fence)]) {
        const auto waited = *r.ended[static_cast<std::size_t>(ferrum::wave_phase::fence)] -
                            *r.ended[static_cast<std::size_t>(ferrum::wave_phase::submit)];
        // A fence reached first cancels the timeout timer: a success that
        // waited out the whole timeout means the cancel was lost.
        if (waited >= fence_timeout)
          problem(w, "succeeded after awaiting its fence for " +
                         std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()) +
                         " ms, not less than the fence timeout");
      }
    }
    if (w.what == disturbance::throws && w.ec == errc::encoder_failed) {
      if (r.failed_node != w.fault_node) problem(w, "failed naming another node");
      if (r.message != "stress: node " + std::to_string(w.fault_node) + " throws")
        problem(w, "failed with message '" + r.message + "'");
    }
    if (w.ec == errc::encoder_failed && w.what != disturbance::throws) problem(w, "encoder_failed without a throw");
    if (w.ec == asio::error::operation_aborted && w.what != disturbance::cancel_at_submit &&
        w.what != disturbance::cancel_in_encoder)
      problem(w, "aborted without a cancellation");

    // No lane comes back before its fence: the wave that wrote each slot
    // before this one ran on the same lane, and if it submitted, its fence
    // was reached and its probe had run when this wave encoded.
    check_previous_writers(
        w, records_, scenario_.nodes, b, l, [&](const wave_record& p) { return p.device.load() == d; }, problem);
  }
  // Only the scheduler submits: every submitted value belongs to one wave.
  for (const auto& [value, count] : by_fence)
    if (count != 1)
      problems.push_back("fence value " + std::to_string(value.second) + " of device " + std::to_string(value.first) +
                         " claimed by " + std::to_string(count) + " waves");
  // With two queues a wave makes several compute submissions (its segments
  // and its join), of which the last is its fence.
  const std::uint64_t submissions = compute_submissions();
  if (scenario_.two_queues ? by_fence.size() > submissions : by_fence.size() != submissions)
    problems.push_back(std::to_string(by_fence.size()) + " waves carry fence values, " + std::to_string(submissions) +
                       " were submitted");
  for (const std::string& p : problems) UNSCOPED_INFO(p);
  CHECK(problems.empty());

  if (scheduler_ == nullptr) return;  // destroyed mid-run: no stats, no pools
  const ferrum::scheduler_stats& s = final_stats_;
  CHECK(s.started == submitted);
  CHECK(s.completed == ok);
  CHECK(s.cancelled == aborted);
  CHECK(s.failed == submitted - ok - aborted);
  CHECK(s.in_flight == 0);
  CHECK(s.live == 0);
  CHECK(s.max_in_flight <= total_lanes());
  REQUIRE(final_counts_.size() == request_kinds.size() * devices_.size());
  for (const ferrum::lane_counts& c : final_counts_) {
    CHECK(c.lanes == scenario_.lanes);
    CHECK(c.in_flight == 0);
    CHECK(c.waiting == 0);
    CHECK(c.free + c.quarantined == c.lanes);
  }
}

}  // namespace stress
