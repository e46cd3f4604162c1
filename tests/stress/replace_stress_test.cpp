// Stress: 64 producers submit waves while the scheduler's program is
// replaced several times and its lanes are trimmed (made when needed). Checks,
// after the fact: every handler ran once; no lane was handed to a wave before
// the fence of the lane's previous wave was reached; every wave ran on the
// program current when it was initiated, and none after the replacement of
// its program completed; at the end every lane is free and the memory that
// remains is the live program's alone.
#include "scheduler_support.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using boost::system::error_code;

namespace {

constexpr std::size_t producers = 64;
// Each producer submits until the replacer is done, at least
// `min_waves` and at most `max_waves` waves.
constexpr std::size_t min_waves = 4;
constexpr std::size_t max_waves = 400;
constexpr std::size_t replacements = 6;

struct wave_seen {
  std::atomic<int> completions{0};
  error_code ec;
  ferrum::wave_report report;
  // Replacements whose initiation had returned before async_submit was
  // called, and those begun by the time its handler ran.
  std::size_t replaced_before = 0;
  std::size_t replaced_after = 0;
  // When node 0 was encoded: the device's completed value, the lane's
  // previous wave, and the run's sequence number.
  std::uint64_t completed_at_encode = 0;
  std::uint64_t previous_wave = 0;
  std::uint64_t encoded_at = 0;
};

struct replace_run {
  ferrum::gpu::null_device_options device_options() {
    ferrum::gpu::null_device_options o;
    o.faults = {.seed = 11, .delay = 0.2, .max_delay = std::chrono::microseconds(300)};
    return o;
  }
  replace_run() : device(::test::null_device(device_options())), pool(4) {
    // Programs of different shapes: 3 to 8 nodes, 2 or 3 lanes, one or two buckets.
    for (std::size_t i = 0; i <= replacements; ++i)
      programs.push_back(std::make_shared<const ferrum::compiled_program>(
          ferrum::test::compile_ok(sched_test::make_plan(3 + i, static_cast<std::uint32_t>(2 + i % 2), i % 2 == 0))));
    ferrum::scheduler_options options;
    options.make_lanes = ferrum::lane_making::when_needed;
    options.encoder_tasks = 2;
    options.fence_timeout = 5000ms;
    scheduler = test::require(ferrum::scheduler::create(programs[0], *device, pool.get_executor(), options));
    seen.resize(producers * max_waves);
    for (auto& s : seen) s = std::make_unique<wave_seen>();
  }

  std::unique_ptr<ferrum::gpu::null_device> device;
  asio::thread_pool pool;
  std::vector<std::shared_ptr<const ferrum::compiled_program>> programs;
  std::unique_ptr<ferrum::scheduler> scheduler;
  std::vector<std::unique_ptr<wave_seen>> seen;
  std::atomic<bool> replaced_all{false};
  std::atomic<std::size_t> replaced_started{0};
  std::atomic<std::size_t> replaced_returned{0};
  std::atomic<std::uint64_t> sequence{0};
  std::vector<std::uint64_t> replacement_done_at = std::vector<std::uint64_t>(replacements + 1, 0);
};

// One producer: its waves, one after the other, each awaited.
asio::awaitable<void> produce(replace_run& run, std::size_t producer) {
  for (std::size_t i = 0; i < max_waves && (i < min_waves || !run.replaced_all.load()); ++i) {
    wave_seen& w = *run.seen[producer * max_waves + i];
    auto encode = [&w, &run](const ferrum::encode_context& c) {
      if (c.node_index == 0) {
        w.completed_at_encode = run.device->queue().timeline().completed();
        w.previous_wave = c.lane_previous_wave;
        w.encoded_at = run.sequence.fetch_add(1) + 1;
      }
      test::require(c.commands.fill(c.slot, static_cast<std::uint32_t>(c.wave)));
    };
    // Two request sizes: the second runs in the 1x4x1 bucket where the
    // program has one, and fits none (no_bucket_fits) where it has not.
    const ferrum::wave_request request{"step", {1, (producer + i) % 3 == 0 ? 3u : 1u, 1}};
    w.replaced_before = run.replaced_returned.load();
    auto [ec, report] = co_await run.scheduler->async_submit(request, encode, asio::as_tuple(asio::use_awaitable));
    w.replaced_after = run.replaced_started.load();
    w.ec = ec;
    w.report = std::move(report);
    w.completions.fetch_add(1);
  }
}

}  // namespace

TEST_CASE("stress: 64 producers while the program is replaced and lanes are trimmed", "[stress]") {
  replace_run run;
  std::vector<std::future<void>> done;
  for (std::size_t p = 0; p < producers; ++p)
    done.push_back(asio::co_spawn(run.pool, produce(run, p), asio::use_future));
  // The replacer: each replacement awaited, a trim between them.
  std::uint64_t trimmed = 0;
  for (std::size_t r = 1; r <= replacements; ++r) {
    std::this_thread::sleep_for(5ms);
    trimmed += run.scheduler->trim();
    std::promise<error_code> replaced;
    // Counted before and after the initiation: a wave submitted in between
    // may run on the new program or the old one.
    run.replaced_started.store(r);
    run.scheduler->async_replace(run.programs[r], [&](error_code ec) {
      run.replacement_done_at[r] = run.sequence.fetch_add(1) + 1;
      replaced.set_value(ec);
    });
    run.replaced_returned.store(r);
    auto f = replaced.get_future();
    REQUIRE(f.wait_for(30s) == std::future_status::ready);
    CHECK_FALSE(f.get());
  }
  run.replaced_all.store(true);
  for (auto& d : done) {
    REQUIRE(d.wait_for(60s) == std::future_status::ready);
    d.get();
  }
  std::future<void> shut = run.scheduler->async_shutdown(asio::use_future);
  REQUIRE(shut.wait_for(30s) == std::future_status::ready);

  // Which wave had what submitted value, by id.
  std::map<std::uint64_t, std::uint64_t> submitted;
  std::erase_if(run.seen, [](const auto& w) { return w->completions.load() == 0; });  // not submitted
  for (const auto& w : run.seen) submitted[w->report.wave] = w->report.submitted_value;
  std::size_t ran = 0;
  std::size_t reused_early = 0;
  std::size_t wrong_program = 0;
  std::size_t after_replacement = 0;
  std::array<std::size_t, replacements + 1> per_program{};
  for (const auto& w : run.seen) {
    CHECK(w->completions.load() == 1);
    CHECK((!w->ec || w->ec == ferrum::errc::no_bucket_fits));
    const auto p = std::find_if(run.programs.begin(), run.programs.end(),
                                [&](const auto& x) { return x->hash == w->report.program; });
    REQUIRE(p != run.programs.end());
    const auto k = static_cast<std::size_t>(p - run.programs.begin());
    ++per_program[k];
    if (k < w->replaced_before || k > w->replaced_after) ++wrong_program;
    if (w->ec) continue;
    ++ran;
    // It ran before the replacement of its program completed.
    if (k < replacements && w->encoded_at > run.replacement_done_at[k + 1]) ++after_replacement;
    if (w->previous_wave != 0 && w->completed_at_encode < submitted[w->previous_wave]) ++reused_early;
  }
  INFO("waves ran " << ran << ", bytes trimmed " << trimmed);
  CHECK(wrong_program == 0);
  CHECK(after_replacement == 0);
  CHECK(reused_early == 0);
  CHECK(ran > producers * min_waves / 2);
  // Every program served waves.
  for (const std::size_t n : per_program) CHECK(n > 0);
  // Every lane is free; what exists is the live program's alone.
  std::uint64_t live_bytes = 0;
  std::uint32_t live_lanes = 0;
  for (const auto& pool : run.scheduler->pools()) {
    const ferrum::lane_counts c = pool->counts();
    CHECK(c.free == c.lanes);
    CHECK(c.making == 0);
    CHECK(c.waiting == 0);
    live_bytes += c.bytes;
    live_lanes += c.lanes;
  }
  const ferrum::scheduler_stats stats = run.scheduler->stats();
  CHECK(stats.lanes == live_lanes);
  CHECK(stats.lane_bytes == live_bytes);
  CHECK(stats.live == 0);
  CHECK(run.scheduler->trim() == live_bytes);
  CHECK(run.scheduler->stats().lane_bytes == 0);
}
