// Stress of async_submit's Asio contracts (README "Asynchronous
// operations"): 64 producer coroutines x 500 waves each (250 under a sanitizer), on a thread_pool of
// four threads and on an io_context run by two, with cancellations of every
// type emitted at random moments — while queued, encoding, after submit,
// after completion — and null-device faults: delays, hangs of a finite
// duration longer than the fence timeout, and one device loss late in the
// run (asio_contract_run.hpp describes the run).
//
// What is checked, after the run, on the test thread:
//   * every handler was invoked exactly once, on the executor it is bound to
//     (the producer's strand) or, without one, on the scheduler's;
//   * per scheduler, completed + failed + cancelled = submitted, from the
//     handlers and from scheduler::stats();
//   * no lane was written by two waves at once: the device-side probe of
//     every node found its own wave's token in the slot, no two waves were
//     in encoders of one lane at once, and each wave's encoders found the
//     previous writer's fence reached and its probes run;
//   * each outcome is one the wave's plan and faults explain; a wave
//     cancelled with `total` alone was never handed a lane;
//   * after async_shutdown, every pool is full: nothing in flight, nothing
//     waiting, and no lane quarantined — except, on the scheduler whose
//     device was lost, exactly the lanes whose last submission the device
//     never reached: those stay quarantined for good (README: "device lost
//     ... quarantined for good"), so that pool is checked for
//     free + quarantined = lanes with that exact split. The loss runs on a
//     second scheduler/device pair so that "every pool full" is checked
//     without exception on the first, which has the hangs.
#include "asio_contract_run.hpp"
#include "sanitized.hpp"
#include "stress_harness.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/error.hpp>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace stress {

namespace asio = boost::asio;
using ferrum::errc;

void contract_run::check() const {
  {
    const violation_log::seen seen = violations_.read();
    INFO("violations seen by encoders, probes and handlers: " << seen.count);
    for (const std::string& v : seen.first) UNSCOPED_INFO(v);
    CHECK(seen.count == 0);
  }
  CHECK_FALSE(producer_error_);

  struct tally {
    std::size_t submitted = 0;
    std::size_t ok = 0;
    std::size_t aborted = 0;
    std::size_t timeouts = 0;
    std::size_t lost = 0;  // device_lost
    std::map<std::string, std::size_t> outcomes;
    std::map<std::uint64_t, std::size_t> by_fence;  // fence value -> waves with it
    // The last fence value submitted into each lane, per bucket.
    std::array<std::array<std::uint64_t, contract_lanes>, contract_buckets> last_fence{};
  };
  std::array<tally, target_count> tallies;
  std::vector<std::string> problems;
  const auto problem = [&](const contract_wave& w, const std::string& what) {
    if (problems.size() >= 20) return;
    problems.push_back(
        "wave " + std::to_string(w.token) + " (scheduler " + (w.to == target::healthy ? "healthy" : "lost") +
        ", handler " + std::to_string(static_cast<int>(w.handler)) + ", cancel " +
        std::to_string(static_cast<int>(w.cancel)) + " type " + std::to_string(static_cast<unsigned>(w.cancel_type)) +
        ", outcome " + outcome_name(w.ec) + ", fence " + std::to_string(w.report.submitted_value) + "): " + what);
  };
  // Aborted waves by the step the cancellation found them at.
  std::size_t aborted_queued = 0;
  std::size_t aborted_encoding = 0;
  std::size_t aborted_submitted = 0;
  std::size_t aborted_total_alone = 0;
  std::size_t timer_cancels_late = 0;  // timer-cancelled waves that completed anyway
  for (const auto& record : waves_) {
    const contract_wave& w = *record;
    tally& t = tallies[static_cast<std::size_t>(w.to)];
    if (!w.submitted) {
      problem(w, "never submitted");
      continue;
    }
    ++t.submitted;
    if (w.completions.load() != 1) {
      problem(w, "its handler ran " + std::to_string(w.completions.load()) + " times");
      continue;
    }
    if (!w.right_executor) problem(w, "its handler ran on another executor than its own");
    ++t.outcomes[outcome_name(w.ec)];
    const ferrum::wave_report& r = w.report;
    const std::uint64_t f = r.submitted_value;
    const std::size_t encoded = w.encoded_count();
    const int b = w.bucket.load();
    const int l = w.lane.load();
    if (r.wave == 0) problem(w, "its report has no wave id");
    if (r.nodes != contract_nodes) problem(w, "its report counts " + std::to_string(r.nodes) + " nodes");
    if (r.bucket == nullptr || r.bucket != &program_->buckets[w.request].id)
      problem(w, "ran in bucket " + (r.bucket != nullptr ? r.bucket->str() : std::string("none")));
    if (b >= 0 && b != static_cast<int>(w.request)) problem(w, "encoded in another bucket than it asked for");
    if (l >= 0 && static_cast<std::uint32_t>(l) != r.lane) problem(w, "encoded on lane " + std::to_string(l));
    if (f != 0) {
      ++t.by_fence[f];
      if (encoded != contract_nodes) problem(w, "submitted with " + std::to_string(encoded) + " nodes encoded");
      if (f > device(w.to).queue().last_submitted()) problem(w, "its fence value was never submitted");
      if (l >= 0 && r.bucket != nullptr) {
        std::uint64_t& last = t.last_fence[w.request][static_cast<std::size_t>(l)];
        last = std::max(last, f);
      }
    }

    // The outcome must be one that the wave's plan and the faults explain.
    if (!w.ec) {
      ++t.ok;
      if (f == 0) problem(w, "succeeded without a fence value");
      if (!w.fence_reached_at_completion) problem(w, "succeeded before its fence value was reached");
      if (w.probes_at_completion != contract_nodes)
        problem(w, "succeeded with " + std::to_string(w.probes_at_completion) + " of its probes run");
      if (w.lost_at_submit) problem(w, "succeeded on a device lost before it was submitted");
      if (w.cancel == cancel_at::timer) ++timer_cancels_late;
    } else if (w.ec == asio::error::operation_aborted) {
      ++t.aborted;
      if (w.cancel == cancel_at::none) problem(w, "aborted without a cancellation");
      ++(f != 0 ? aborted_submitted : encoded != 0 ? aborted_encoding : aborted_queued);
      // Total alone means no side effects: honoured only while the wave
      // waits for a lane, so an aborted one never got one.
      if (w.cancel_type == asio::cancellation_type::total) {
        ++aborted_total_alone;
        if (encoded != 0 || f != 0 || l >= 0)
          problem(w, "aborted by a total cancellation after it was handed a lane (" + std::to_string(encoded) +
                         " nodes encoded)");
      }
    } else if (w.ec == errc::fence_timeout) {
      ++t.timeouts;
      if (f == 0) problem(w, "timed out without a fence value");
    } else if (w.ec == errc::device_lost) {
      ++t.lost;
      if (w.to != target::lost || !w.lost_at_completion) problem(w, "device_lost while its device was not lost");
    } else if (w.ec == errc::all_lanes_quarantined) {
      if (f != 0) problem(w, "all lanes quarantined after it submitted");
    } else {
      problem(w, "an outcome no fault explains");
    }

    // No lane comes back before its fence: the slot's previous writer ran on
    // the same lane of the same device and, if it submitted, its fence was
    // reached and its probe had run when this wave encoded.
    check_previous_writers(
        w, waves_, contract_nodes, b, l, [&](const contract_wave& p) { return p.to == w.to; }, problem);
  }

  for (std::size_t s = 0; s < target_count; ++s) {
    const tally& t = tallies[s];
    const ferrum::gpu::null_device& d = device(static_cast<target>(s));
    // Only the scheduler submits: every submitted value belongs to one wave.
    for (const auto& [value, count] : t.by_fence)
      if (count != 1)
        problems.push_back("scheduler " + std::to_string(s) + ": fence value " + std::to_string(value) +
                           " claimed by " + std::to_string(count) + " waves");
    if (t.by_fence.size() != d.queue().last_submitted())
      problems.push_back("scheduler " + std::to_string(s) + ": " + std::to_string(t.by_fence.size()) +
                         " waves carry fence values, " + std::to_string(d.queue().last_submitted()) +
                         " were submitted");
  }
  for (const std::string& p : problems) UNSCOPED_INFO(p);
  CHECK(problems.empty());

  const auto& healthy = tallies[static_cast<std::size_t>(target::healthy)];
  const auto& lost = tallies[static_cast<std::size_t>(target::lost)];
  for (std::size_t s = 0; s < target_count; ++s) {
    const tally& t = tallies[s];
    const ferrum::scheduler_stats& st = final_stats_[s];
    INFO("scheduler " << (s == 0 ? "healthy" : "lost"));
    CHECK_FALSE(shutdown_ec_[s]);
    CHECK(st.started == t.submitted);
    CHECK(st.completed == t.ok);
    CHECK(st.cancelled == t.aborted);
    CHECK(st.failed == t.submitted - t.ok - t.aborted);
    CHECK(st.completed + st.failed + st.cancelled == st.started);
    CHECK(st.in_flight == 0);
    CHECK(st.live == 0);
    CHECK(st.max_in_flight <= contract_lanes * contract_buckets);

    // After async_shutdown, a lane is quarantined exactly when the device
    // never reached its last submission: never on the healthy device, whose
    // hangs all end; on the lost one, the lanes in flight at the loss.
    const ferrum::gpu::timeline& timeline = device(static_cast<target>(s)).queue().timeline();
    REQUIRE(final_counts_[s].size() == contract_buckets);
    for (std::size_t b = 0; b < contract_buckets; ++b) {
      std::uint32_t unreached = 0;
      for (const std::uint64_t last : t.last_fence[b]) unreached += timeline.reached(last) ? 0 : 1;
      const ferrum::lane_counts& c = final_counts_[s][b];
      INFO("bucket " << contract_requests[b].bucket << ": lanes " << c.lanes << " free " << c.free << " in_flight "
                     << c.in_flight << " quarantined " << c.quarantined << " waiting " << c.waiting
                     << "; lanes whose last submission was not reached " << unreached);
      CHECK(c.lanes == contract_lanes);
      CHECK(c.in_flight == 0);
      CHECK(c.waiting == 0);
      CHECK(c.quarantined == unreached);
      CHECK(c.free == c.lanes - unreached);
      if (s == static_cast<std::size_t>(target::healthy)) CHECK(c.free == c.lanes);
    }
  }

  // The faults happened as planned, and each was seen by waves.
  const ferrum::gpu::fault_counts hf = device(target::healthy).injected_faults();
  const ferrum::gpu::fault_counts lf = device(target::lost).injected_faults();
  CHECK_FALSE(device(target::healthy).lost());
  CHECK(hf.hang >= 1);
  CHECK(hf.lost == 0);
  CHECK(healthy.timeouts >= 1);
  CHECK(healthy.lost == 0);
  CHECK(device(target::lost).lost());
  CHECK(lf.lost == 1);
  CHECK(lf.hang == 0);
  CHECK(lost.lost >= 1);
  CHECK(healthy.aborted + lost.aborted >= 1);

  const auto ms = [](std::chrono::steady_clock::duration d) {
    return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
  };
  const auto line = [](const tally& t) {
    std::string s;
    for (const auto& [name, count] : t.outcomes) s += " " + name + "=" + std::to_string(count);
    return s;
  };
  std::uint32_t lost_quarantined = 0;
  for (const ferrum::lane_counts& c : final_counts_[static_cast<std::size_t>(target::lost)])
    lost_quarantined += c.quarantined;
  std::printf(
      "stress[asio %s]: %zu producers x %zu waves in %lld ms (shutdown %lld ms); healthy:%s; lost:%s; "
      "faults healthy delay=%llu hang=%llu, lost delay=%llu lost=%llu (lanes quarantined for good %u); "
      "aborted queued=%zu (total alone %zu) encoding=%zu submitted=%zu; timer cancels that did not abort=%zu\n",
      options_.name.c_str(), options_.producers, options_.waves_per_producer, ms(elapsed_), ms(shutdown_time_),
      line(healthy).c_str(), line(lost).c_str(), static_cast<unsigned long long>(hf.delay),
      static_cast<unsigned long long>(hf.hang), static_cast<unsigned long long>(lf.delay),
      static_cast<unsigned long long>(lf.lost), lost_quarantined, aborted_queued, aborted_total_alone, aborted_encoding,
      aborted_submitted, timer_cancels_late);
  std::fflush(stdout);
}

}  // namespace stress

namespace {

// 64 producers x 500 waves on `context` (x 250 under a sanitizer, which
// slows each wave 5-20x: the interleavings come from the 64 producers and
// the faults, not the count), then the checks.
void run_contract(stress::execution_kind& context, const char* name, std::uint64_t seed) {
  constexpr std::size_t waves = test_support::sanitized ? 250 : 500;
  stress::contract_run run(context, {.name = name, .waves_per_producer = waves, .seed = seed});
  run.run_all();
  run.check();
}

}  // namespace

TEST_CASE(
    "stress: 64 producer coroutines on a thread_pool of 4 threads get every wave's handler once, on its "
    "executor, under cancellations of every type, hangs and a device loss",
    "[stress]") {
  stress::on_thread_pool context(4);
  run_contract(context, "thread_pool", 11);
}

TEST_CASE(
    "stress: 64 producer coroutines on an io_context run by 2 threads get every wave's handler once, on its "
    "executor, under cancellations of every type, hangs and a device loss",
    "[stress]") {
  stress::on_io_context context(2);
  run_contract(context, "io_context", 12);
}
