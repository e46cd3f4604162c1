// replace — what a change of plan costs while waves run: ferrum's
// scheduler::async_replace against a restart (drain every wave, destroy the
// scheduler, create one on the new program: what a change took before), in
// the same run, on the same device and waves.
//
// Each trial runs a steady stream of waves (a window of 3 in flight, 3
// lanes; the null device takes `latency` per submission, a small GPU frame)
// for `phase` on program A, changes to program B (more nodes), and runs
// `phase` more. The change starts with B's compile (in memory, timed on its
// own) on the thread that asks for it. Reported per way, the median over the
// trials:
//   compile     B's ferrum::compile
//   call        wall and CPU time of the call that changes the plan (the
//               caller's thread): compile + async_replace's initiation, or
//               compile + drain + destroy + create
//   first new   from the call to the first wave on B completed
//   old gone    from the call to the replacement's completion (the old
//               program's lanes freed); a restart frees them in its call
//   stall       the longest gap between two completions from 20 ms before
//               the call to 20 ms after the first wave on B (a frame that
//               came late), beside the median gap of the trial
//   latency     waves' submit-to-completion p50/p99, for waves submitted
//               before the call, during the change (until the first wave on
//               B completed) and after it
//
// Ways: `replace` (lanes made at create: the new program's lanes are made in
// the call), `needed` (the same with lane_making::when_needed: the new
// program's lanes are made as its waves need them), `restart`.
//
//   ferrum_bench_replace [trials]     # default 7
#include "bench_plan.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/gpu/null_device.hpp"
#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/thread_pool.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;

constexpr std::size_t window = 3;
constexpr auto latency = std::chrono::microseconds(1000);
constexpr std::uint64_t slot_bytes = 1 << 20;
constexpr auto phase = std::chrono::milliseconds(150);

double ms(clock_type::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size())))];
}

double median(std::vector<double> v) { return percentile(std::move(v), 50); }

struct wave_time {
  clock_type::time_point submitted;
  clock_type::time_point completed;
  bool on_new = false;
};

void encode_nothing(const ferrum::encode_context&) {}

// Keeps `window` waves in flight through the scheduler it is pointed at;
// paused, completions submit no more.
class stream {
 public:
  stream(asio::thread_pool& pool, const ferrum::plan_hash& new_program) : pool_(pool), new_(new_program) {
    times_.reserve(200000);
  }

  void start(ferrum::scheduler& s) {
    scheduler_.store(&s);
    paused_.store(false);
    for (std::size_t i = 0; i < window; ++i) submit();
  }
  // Stops submitting and waits until no wave is in flight.
  void drain() {
    paused_.store(true);
    std::unique_lock lock(mutex_);
    drained_.wait(lock, [&] { return in_flight_ == 0; });
  }
  std::vector<wave_time> take() {
    const std::lock_guard lock(mutex_);
    return std::move(times_);
  }
  [[nodiscard]] clock_type::time_point first_new() {
    const std::lock_guard lock(mutex_);
    return first_new_;
  }

 private:
  void submit() {
    {
      const std::lock_guard lock(mutex_);
      ++in_flight_;
    }
    const auto submitted = clock_type::now();
    scheduler_.load()->async_submit(
        {"step", {1, 1, 1}}, encode_nothing,
        asio::bind_executor(pool_, [this, submitted](boost::system::error_code ec, const ferrum::wave_report& r) {
          if (ec) std::abort();  // nothing here fails: a broken run
          const auto now = clock_type::now();
          const bool on_new = r.program == new_;
          bool more = false;
          {
            const std::lock_guard lock(mutex_);
            times_.push_back({submitted, now, on_new});
            if (on_new && first_new_ == clock_type::time_point{}) first_new_ = now;
            --in_flight_;
            more = !paused_.load();
            if (in_flight_ == 0) drained_.notify_all();
          }
          if (more) submit();
        }));
  }

  asio::thread_pool& pool_;
  ferrum::plan_hash new_;
  std::atomic<ferrum::scheduler*> scheduler_{nullptr};
  std::atomic<bool> paused_{false};
  std::mutex mutex_;
  std::condition_variable drained_;
  std::size_t in_flight_ = 0;
  std::vector<wave_time> times_;
  clock_type::time_point first_new_{};
};

struct trial {
  double compile_ms = 0;
  double call_ms = 0;
  double call_cpu_ms = 0;
  double first_new_ms = 0;
  double old_gone_ms = 0;
  double longest_gap_ms = 0;
  double median_gap_ms = 0;
  std::array<std::vector<double>, 3> latency;  // before, during, after
};

enum class way { replace, replace_when_needed, restart };

trial run_trial(way how, const ferrum::plan& a, const ferrum::plan& b) {
  ferrum::gpu::null_device_options device_options;
  device_options.latency = latency;
  auto device = ferrum::gpu::null_device::create(device_options).value();
  asio::thread_pool pool(2);
  const auto program_a = std::make_shared<const ferrum::compiled_program>(ferrum::compile(a).value());
  const ferrum::plan_hash hash_b = ferrum::compile(b).value().hash;
  ferrum::scheduler_options options;
  if (how == way::replace_when_needed) options.make_lanes = ferrum::lane_making::when_needed;
  auto s = ferrum::scheduler::create(program_a, *device, pool.get_executor(), options).value();
  stream waves(pool, hash_b);
  waves.start(*s);
  std::this_thread::sleep_for(phase);

  trial t;
  std::promise<clock_type::time_point> gone;
  const auto call = clock_type::now();
  const double cpu = thread_cpu_ms();
  const auto program_b = std::make_shared<const ferrum::compiled_program>(ferrum::compile(b).value());
  t.compile_ms = ms(clock_type::now() - call);
  if (how != way::restart) {
    s->async_replace(program_b, [&](boost::system::error_code ec) {
      if (ec) std::abort();
      gone.set_value(clock_type::now());
    });
  } else {
    waves.drain();
    s.reset();
    s = ferrum::scheduler::create(program_b, *device, pool.get_executor()).value();
    gone.set_value(clock_type::now());
    waves.start(*s);
  }
  t.call_cpu_ms = thread_cpu_ms() - cpu;
  t.call_ms = ms(clock_type::now() - call);
  t.old_gone_ms = ms(gone.get_future().get() - call);
  std::this_thread::sleep_for(phase);
  waves.drain();
  const auto first_new = waves.first_new();
  t.first_new_ms = ms(first_new - call);
  std::vector<wave_time> times = waves.take();
  for (const wave_time& w : times) {
    const std::size_t when = w.submitted < call ? 0 : w.completed <= first_new ? 1 : 2;
    t.latency[when].push_back(ms(w.completed - w.submitted));
  }
  std::sort(times.begin(), times.end(), [](const auto& x, const auto& y) { return x.completed < y.completed; });
  std::vector<double> gaps;
  const auto around = std::chrono::milliseconds(20);
  for (std::size_t i = 1; i < times.size(); ++i) {
    const double gap = ms(times[i].completed - times[i - 1].completed);
    gaps.push_back(gap);
    if (times[i].completed > call - around && times[i - 1].completed < first_new + around)
      t.longest_gap_ms = std::max(t.longest_gap_ms, gap);
  }
  t.median_gap_ms = median(gaps);
  s.reset();
  return t;
}

void report(const char* name, const std::vector<trial>& trials) {
  std::vector<double> compile, call, cpu, first, gone, longest, gap;
  std::array<std::vector<double>, 3> all;
  for (const trial& t : trials) {
    compile.push_back(t.compile_ms);
    call.push_back(t.call_ms);
    cpu.push_back(t.call_cpu_ms);
    first.push_back(t.first_new_ms);
    gone.push_back(t.old_gone_ms);
    longest.push_back(t.longest_gap_ms);
    gap.push_back(t.median_gap_ms);
    for (std::size_t i = 0; i < 3; ++i) all[i].insert(all[i].end(), t.latency[i].begin(), t.latency[i].end());
  }
  std::printf("%-8s | %7.3f | %7.3f | %8.3f | %9.3f | %8.3f | %6.2f / %5.2f |", name, median(compile), median(call),
              median(cpu), median(first), median(gone), median(longest), median(gap));
  for (const auto& l : all) std::printf(" %5.2f/%5.2f (%4zu) |", percentile(l, 50), percentile(l, 99), l.size());
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const int trials = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  const ferrum::plan a = ferrum::bench::binding_plan(16, 3, slot_bytes);
  const ferrum::plan b = ferrum::bench::binding_plan(24, 3, slot_bytes);
  std::printf(
      "plan A: 16 nodes -> plan B: 24 nodes of %llu KiB slots (lanes of 16 and 24 MiB); 3 lanes, %zu waves in flight, "
      "null device "
      "%lld us per submission; %d trials, medians\n",
      static_cast<unsigned long long>(slot_bytes / 1024), window, static_cast<long long>(latency.count()), trials);
  std::printf("%-8s | %7s | %7s | %8s | %9s | %8s | %-14s | %-19s| %-19s| %-19s|\n", "way", "compile", "call",
              "call cpu", "first new", "old gone", "stall / gap", " before p50/p99", " during p50/p99",
              " after p50/p99");
  std::printf("%-8s | %7s | %7s | %8s | %9s | %8s | %-14s | %-19s| %-19s| %-19s|\n", "", "ms", "ms", "ms", "ms", "ms",
              "ms", " ms (waves)", " ms (waves)", " ms (waves)");
  std::vector<trial> replaced, replaced_when_needed, restarted;
  for (int i = 0; i < trials; ++i) {
    // Alternated, so that all see the same machine.
    replaced.push_back(run_trial(way::replace, a, b));
    replaced_when_needed.push_back(run_trial(way::replace_when_needed, a, b));
    restarted.push_back(run_trial(way::restart, a, b));
  }
  report("replace", replaced);
  report("needed", replaced_when_needed);
  report("restart", restarted);
  std::vector<double> ratio;
  for (int i = 0; i < trials; ++i) ratio.push_back(restarted[i].first_new_ms / replaced[i].first_new_ms);
  std::vector<double> stall, ratio_needed, stall_needed;
  for (int i = 0; i < trials; ++i) {
    stall.push_back(restarted[i].longest_gap_ms / replaced[i].longest_gap_ms);
    ratio_needed.push_back(restarted[i].first_new_ms / replaced_when_needed[i].first_new_ms);
    stall_needed.push_back(restarted[i].longest_gap_ms / replaced_when_needed[i].longest_gap_ms);
  }
  std::printf("restart / replace (medians of per-trial ratios): first wave on the new program %.2fx, stall %.2fx\n",
              median(ratio), median(stall));
  std::printf("restart / needed:                                 first wave on the new program %.2fx, stall %.2fx\n",
              median(ratio_needed), median(stall_needed));
  return 0;
}
