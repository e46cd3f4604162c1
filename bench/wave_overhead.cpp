// wave_overhead — the scheduler's cost per wave and per node on the null
// device with no-op encoders, against two references measured in the same
// run: the floor (the same job done by a minimal Asio coroutine with ferrum's
// public primitives) and a hand-written thread loop without Asio or ferrum.
//
// All three columns run, per configuration, a plan of `nodes` binding nodes
// (1, 16, 256) in one bucket of `lanes` lanes (1, 2, 3) on a null device of
// their own, call a no-op encoder once per node per wave, submit one command
// list per node per wave and wait for each wave's timeline value; a lane's
// lists are reused only once its previous submission's value is reached.
//
// ferrum: a scheduler on a boost::asio::thread_pool of 2 threads,
// encoder_tasks 2, encoders that record nothing (the scheduler begins and
// ends each node's list every wave). `lanes x 2` waves are kept in flight:
// each completion, run on the pool, submits the next wave
// (bench_driver.hpp's wave_driver); the main thread sleeps until the run's
// last completion wakes it.
//
// floor: `lanes x 2` coroutines co_spawned on a thread_pool of 2 threads, so
// as many waves are in flight as for ferrum. Each loops over the run's waves:
// takes the next wave number, whose lane is the number modulo `lanes`; takes
// that lane's token (an Asio concurrent_channel holding one: two waves of a
// lane may be between taking it and submitting at once); co_awaits
// gpu::async_wait for the lane's previous submission value; records every
// node's list afresh, inline, as ferrum does (begin, the encoder through the
// same opaque function pointer as the baseline, end); submits the lane's
// lists with queue().submit_next; gives the token back; co_awaits
// gpu::async_wait for the new value. The last coroutine to finish wakes the main thread.
//
// baseline: one driver thread and two std::thread workers (a queue under a
// mutex and condition variables). Per wave: wait until the wave's lane
// (round robin over `lanes`) has its previous submission reached, split the
// nodes into the same number of chunks as ferrum (all but the last handed to
// the workers, the last run inline), call the encoder per node through the
// function pointer, join the chunks, and submit the lane's pre-recorded
// lists (recorded once: the baseline does less per node than the other two) (one per node, all empty but the last,
// whose host function wakes the driver through a condition variable) with queue().submit_next. Submissions of up to
// `lanes` waves are in flight while the driver encodes the next, as the lanes allow for ferrum.
//
// Figures: per configuration a warm-up of 200 waves, then `waves` timed
// waves. Wall time is the timed span (steady_clock); CPU time is
// getrusage(RUSAGE_SELF) user + system over the same span, which covers every
// thread of the process (pool, device worker, driver and workers); both are
// divided by waves. The columns run `repeats` times each, alternating; the
// table gives per column the median and the best wall µs per wave and the
// median CPU µs per wave, and ferrum's medians over the floor's and the
// baseline's. Per node: (the median at 256 nodes - the median at 1 node) /
// 255, in ns, per column and lanes.
//
// Device: by default the null device of latency 0, whose worker thread runs
// each submission and advances the timeline. With --inline, its
// inline_completion: each submission runs inside submit_next on the
// submitting thread and its value is reached when submit returns, so the
// columns measure their machinery alone (target: ferrum at 1 node <= 3 µs per
// wave).
//
// Then ferrum alone without and with a trace recorder, and without and with
// GPU timestamps (2 lanes; best of `repeats`, wall and CPU µs per wave and
// the on/off ratios).
//
// The figures used 28 runs per cell (`... 2000 28`); the default of 9
// gives stable medians on a 2-core machine in a fraction of the time.
//
//   ferrum_bench_wave_overhead [--inline] [waves] [repeats]     # defaults 2000 9
#include "bench_driver.hpp"
#include "bench_plan.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/gpu/async_wait.hpp"
#include "ferrum/gpu/null_device.hpp"
#include "ferrum/scheduler/scheduler.hpp"
#include "ferrum/scheduler/trace.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
using ferrum::bench::process_cpu_us;

constexpr std::size_t pool_threads = 2;
constexpr std::size_t encoder_tasks = 2;
constexpr std::size_t warm_up_waves = 200;
constexpr std::array<std::size_t, 3> node_counts{1, 16, 256};
constexpr std::array<std::uint32_t, 3> lane_counts{1, 2, 3};

// One timed run of a column: what its span cost.
struct run_cost {
  double wall_us = 0;
  double cpu_us = 0;
};

// Measures a span from its construction: wall time, and the CPU time of
// every thread of the process (a pool's, a device worker's).
class span_meter {
 public:
  span_meter() noexcept : wall_(std::chrono::steady_clock::now()), cpu_us_(process_cpu_us()) {}

  [[nodiscard]] run_cost elapsed() const noexcept {
    return {std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - wall_).count(),
            process_cpu_us() - cpu_us_};
  }

 private:
  std::chrono::steady_clock::time_point wall_;
  double cpu_us_;
};

// What a column is asked to run.
struct shape {
  std::size_t nodes;
  std::uint32_t lanes;
  std::size_t waves;
  const ferrum::gpu::null_device_options* device;
};

std::unique_ptr<ferrum::gpu::null_device> make_device(const shape& s) {
  return ferrum::gpu::null_device::create(*s.device).value();
}

// The no-op encoder every column calls per node; the floor and the baseline
// call it through a pointer they cannot see through, as ferrum calls its
// encoder.
void noop_node(std::size_t) noexcept {}
void (*volatile opaque_encoder)(std::size_t) noexcept = &noop_node;

void encode_nodes(std::size_t first, std::size_t last) noexcept {
  for (std::size_t node = first; node < last; ++node) opaque_encoder(node);
}

// A lane of the floor or the baseline: one list per node, as ferrum's lanes
// hold (recorded here; the floor records them again every wave).
struct lane_lists {
  std::vector<std::unique_ptr<ferrum::gpu::command_list>> owned;
  std::vector<ferrum::gpu::command_list*> submission;
};

// `last`, when it has a function, is recorded into each lane's last list.
std::vector<lane_lists> record_lanes(ferrum::gpu::device& device, const shape& s,
                                     ferrum::gpu::host_function last = {}) {
  std::vector<lane_lists> lanes(s.lanes);
  for (lane_lists& lane : lanes) {
    for (std::size_t n = 0; n < s.nodes; ++n) {
      auto list = device.create_command_list().value();
      list->begin().value();
      if (n + 1 == s.nodes && last.call != nullptr) list->host(last).value();
      list->end().value();
      lane.submission.push_back(list.get());
      lane.owned.push_back(std::move(list));
    }
  }
  return lanes;
}

// --- ferrum -----------------------------------------------------------------------

struct noop_encoder {
  void operator()(const ferrum::encode_context&) const noexcept {}
};

// `extra`: what a comparison turns on (a trace recorder, GPU timestamps);
// the fence timeout and encoder tasks are the bench's.
run_cost measure_ferrum(const shape& s, std::size_t& failures, ferrum::scheduler_options extra = {}) {
  const ferrum::plan p = ferrum::bench::binding_plan(s.nodes, s.lanes, 64);
  auto program = std::make_shared<const ferrum::compiled_program>(ferrum::compile(p).value());
  auto device = make_device(s);
  asio::thread_pool pool(pool_threads);
  run_cost cost;
  {
    extra.fence_timeout = std::chrono::milliseconds(5000);
    extra.encoder_tasks = encoder_tasks;
    auto scheduler = ferrum::scheduler::create(program, *device, pool.get_executor(), extra).value();
    noop_encoder encoder;
    ferrum::bench::wave_driver driver(*scheduler, pool, encoder);
    const std::size_t window = std::size_t{s.lanes} * 2;
    driver.run(warm_up_waves, window);
    const span_meter meter;
    driver.run(s.waves, window);
    cost = meter.elapsed();
    failures += driver.failures();
    // Shared: set_value may still run when the future is ready.
    auto shut = std::make_shared<std::promise<void>>();
    auto shut_done = shut->get_future();
    scheduler->async_shutdown([shut](boost::system::error_code) { shut->set_value(); });
    shut_done.wait();
  }
  pool.join();
  return cost;
}

// --- floor ------------------------------------------------------------------------

// The floor's producers and what they share (see the top of this file).
class floor_driver {
 public:
  floor_driver(ferrum::gpu::device& device, asio::thread_pool& pool, const shape& s)
      : queue_(device.queue()), pool_(pool), nodes_(s.nodes), lanes_(record_lanes(device, s)), values_(s.lanes, 0) {
    for (std::uint32_t l = 0; l < s.lanes; ++l)
      tokens_.emplace_back(pool.get_executor(), 1).try_send(boost::system::error_code{});
  }

  void run(std::size_t waves) {
    target_ = waves;
    next_.store(0);
    const std::size_t producers = lanes_.size() * 2;
    end_.reset(producers);
    // A failed submission is a bug of the bench: its exception ends the
    // process from the pool's thread.
    for (std::size_t i = 0; i < producers; ++i)
      asio::co_spawn(pool_, produce(), [](const std::exception_ptr& e) {
        if (e) std::rethrow_exception(e);
      });
    end_.wait();
  }

 private:
  asio::awaitable<void> produce() {
    const auto executor = pool_.get_executor();
    ferrum::gpu::timeline& timeline = queue_.timeline();
    for (std::size_t wave = next_.fetch_add(1); wave < target_; wave = next_.fetch_add(1)) {
      const std::size_t lane = wave % lanes_.size();
      co_await tokens_[lane].async_receive(asio::use_awaitable);
      co_await ferrum::gpu::async_wait(executor, timeline, values_[lane], asio::use_awaitable);
      // The same job as ferrum's: each node's list recorded afresh around
      // its encoder.
      for (std::size_t node = 0; node < nodes_; ++node) {
        ferrum::gpu::command_list& list = *lanes_[lane].owned[node];
        list.begin().value();
        opaque_encoder(node);
        list.end().value();
      }
      const std::uint64_t value = queue_.submit_next(lanes_[lane].submission).value();
      values_[lane] = value;
      tokens_[lane].try_send(boost::system::error_code{});
      co_await ferrum::gpu::async_wait(executor, timeline, value, asio::use_awaitable);
    }
    // Last: once every producer counted down, the driver may be reused or
    // destroyed.
    end_.count_down();
  }

  using lane_token = asio::experimental::concurrent_channel<void(boost::system::error_code)>;

  ferrum::gpu::queue& queue_;
  asio::thread_pool& pool_;
  std::size_t nodes_;
  std::vector<lane_lists> lanes_;
  // Per lane, its last submission's value; read and written by the holder of
  // its token.
  std::vector<std::uint64_t> values_;
  std::deque<lane_token> tokens_;  // a channel does not move
  std::size_t target_ = 0;
  std::atomic<std::size_t> next_{0};
  ferrum::bench::run_end end_;
};

run_cost measure_floor(const shape& s) {
  auto device = make_device(s);
  asio::thread_pool pool(pool_threads);
  floor_driver driver(*device, pool, s);
  driver.run(warm_up_waves);
  const span_meter meter;
  driver.run(s.waves);
  const run_cost cost = meter.elapsed();
  pool.join();
  return cost;
}

// --- baseline ------------------------------------------------------------------------

// Two worker threads taking chunk tasks from a queue; a wave joins its chunks
// on a counter and a condition variable.
class worker_pool {
 public:
  struct task {
    std::size_t first;
    std::size_t last;
  };

  explicit worker_pool(std::size_t threads) {
    for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
  }
  worker_pool(const worker_pool&) = delete;
  worker_pool& operator=(const worker_pool&) = delete;
  ~worker_pool() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  void post(task t) {
    {
      const std::lock_guard lock(mutex_);
      tasks_.push_back(t);
      ++pending_;
    }
    wake_.notify_one();
  }

  // Waits until every posted task has run.
  void join() {
    std::unique_lock lock(mutex_);
    joined_.wait(lock, [&] { return pending_ == 0; });
  }

 private:
  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      const task t = tasks_.front();
      tasks_.pop_front();
      lock.unlock();
      encode_nodes(t.first, t.last);
      lock.lock();
      if (--pending_ == 0) joined_.notify_one();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable joined_;
  std::deque<task> tasks_;
  std::size_t pending_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// Counts the submissions the device has run: the host function at the end of
// every submission bumps it and wakes the driver.
struct completion_signal {
  std::mutex mutex;
  std::condition_variable reached;
  std::uint64_t executed = 0;

  void operator()() noexcept {
    const std::lock_guard lock(mutex);
    ++executed;
    reached.notify_one();
  }

  // Waits until `value` is reached on `t`: parks until the host function of
  // the submission has run, then spins the few instructions until the
  // device advances the timeline (a list can be resubmitted only then).
  void wait(const ferrum::gpu::timeline& t, std::uint64_t value) {
    {
      std::unique_lock lock(mutex);
      reached.wait(lock, [&] { return executed >= value; });
    }
    while (!t.reached(value)) std::this_thread::yield();
  }
};

run_cost measure_baseline(const shape& s) {
  auto device = make_device(s);
  completion_signal signal;
  const std::vector<lane_lists> lanes = record_lanes(*device, s, ferrum::gpu::host_call(signal));
  worker_pool workers(pool_threads);
  const std::size_t chunks = std::max<std::size_t>(1, std::min(encoder_tasks, s.nodes));
  std::vector<std::uint64_t> lane_value(s.lanes, 0);
  ferrum::gpu::queue& queue = device->queue();

  const auto run = [&](std::size_t count) {
    for (std::size_t wave = 0; wave < count; ++wave) {
      const std::size_t lane = wave % s.lanes;
      // The lane's lists may be reused once its last submission is reached.
      if (lane_value[lane] != 0) signal.wait(queue.timeline(), lane_value[lane]);
      for (std::size_t c = 0; c + 1 < chunks; ++c) workers.post({c * s.nodes / chunks, (c + 1) * s.nodes / chunks});
      encode_nodes((chunks - 1) * s.nodes / chunks, s.nodes);
      workers.join();
      lane_value[lane] = queue.submit_next(lanes[lane].submission).value();
    }
    for (const std::uint64_t v : lane_value)
      if (v != 0) signal.wait(queue.timeline(), v);
  };
  run(warm_up_waves);
  const span_meter meter;
  run(s.waves);
  return meter.elapsed();
}

// --- figures -----------------------------------------------------------------------

// A column's runs of one configuration, per wave.
struct column_figures {
  double wall_median;
  double wall_best;
  double cpu_median;
};

using ferrum::bench::median;

double best(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

column_figures per_wave(const std::vector<run_cost>& runs, std::size_t waves) {
  std::vector<double> wall;
  std::vector<double> cpu;
  for (const run_cost& r : runs) {
    wall.push_back(r.wall_us / static_cast<double>(waves));
    cpu.push_back(r.cpu_us / static_cast<double>(waves));
  }
  return {median(wall), best(wall), median(cpu)};
}

enum column { ferrum_column, floor_column, baseline_column, column_count };
constexpr std::array<const char*, column_count> column_names{"ferrum", "floor", "baseline"};

}  // namespace

// Prints ferrum's wall and CPU µs per wave without and with `on` (2 lanes),
// best of `repeats` runs alternating, and the ratios.
void compare_option(const char* title, const ferrum::scheduler_options& on, std::size_t waves, int repeats,
                    const ferrum::gpu::null_device_options& device_options, std::size_t& failures) {
  std::printf("\n%s, best of %d\n\n", title, repeats);
  std::printf("%6s %6s | %10s %10s | %10s %10s | %8s %8s\n", "nodes", "lanes", "off us/w", "on us/w", "off cpu",
              "on cpu", "wall", "cpu");
  for (const std::size_t nodes : node_counts) {
    const shape s{nodes, 2, waves, &device_options};
    std::vector<double> off_wall, on_wall, off_cpu, on_cpu;
    for (int r = 0; r < repeats; ++r) {
      const run_cost off = measure_ferrum(s, failures);
      const run_cost with = measure_ferrum(s, failures, on);
      off_wall.push_back(off.wall_us);
      off_cpu.push_back(off.cpu_us);
      on_wall.push_back(with.wall_us);
      on_cpu.push_back(with.cpu_us);
    }
    const auto per_wave = [&](const std::vector<double>& v) { return best(v) / static_cast<double>(waves); };
    std::printf("%6zu %6u | %10.2f %10.2f | %10.2f %10.2f | %8.2f %8.2f\n", nodes, s.lanes, per_wave(off_wall),
                per_wave(on_wall), per_wave(off_cpu), per_wave(on_cpu), per_wave(on_wall) / per_wave(off_wall),
                per_wave(on_cpu) / per_wave(off_cpu));
    std::fflush(stdout);
  }
}

int main(int argc, char** argv) {
  const auto args = ferrum::bench::parse_args(argc, argv, {2000, 9}, {"--inline"});
  if (!args) return 2;
  const std::size_t waves = args->waves;
  const int repeats = args->repeats;
  ferrum::gpu::null_device_options device_options;
  device_options.inline_completion = args->has("--inline");
  std::printf("wave overhead: null device %s, no-op encoders, thread_pool of %zu, encoder_tasks %zu,\n",
              device_options.inline_completion ? "with inline_completion" : "of latency 0 (a worker thread)",
              pool_threads, encoder_tasks);
  std::printf("%zu waves per run after %zu warm-up, window lanes x 2, %d runs per column\n", waves, warm_up_waves,
              repeats);
  std::printf("us per wave: wall median and best run, CPU (every thread) median; ratios of the medians\n\n");
  std::printf("%12s |", "");
  for (const char* name : column_names) std::printf(" %-23s |", name);
  std::printf(" %-13s | %s\n", "ferrum/floor", "ferrum/base");
  std::printf("%6s %5s |", "nodes", "lanes");
  for (std::size_t c = 0; c < column_count; ++c) std::printf(" %7s %7s %7s |", "wall", "best", "cpu");
  std::printf(" %6s %6s | %6s %6s\n", "wall", "cpu", "wall", "cpu");

  std::size_t failures = 0;
  // [lanes][nodes][column]: kept for the per-node figures.
  std::array<std::array<std::array<column_figures, column_count>, node_counts.size()>, lane_counts.size()> figures{};
  for (std::size_t n = 0; n < node_counts.size(); ++n) {
    for (std::size_t l = 0; l < lane_counts.size(); ++l) {
      const shape s{node_counts[n], lane_counts[l], waves, &device_options};
      std::array<std::vector<run_cost>, column_count> runs;
      for (int r = 0; r < repeats; ++r) {
        runs[ferrum_column].push_back(measure_ferrum(s, failures));
        runs[floor_column].push_back(measure_floor(s));
        runs[baseline_column].push_back(measure_baseline(s));
      }
      std::array<column_figures, column_count>& f = figures[l][n];
      std::printf("%6zu %5u |", s.nodes, s.lanes);
      for (std::size_t c = 0; c < column_count; ++c) {
        f[c] = per_wave(runs[c], waves);
        std::printf(" %7.2f %7.2f %7.2f |", f[c].wall_median, f[c].wall_best, f[c].cpu_median);
      }
      const auto ratios = [&](column other) {
        std::printf(" %6.2f %6.2f", f[ferrum_column].wall_median / f[other].wall_median,
                    f[ferrum_column].cpu_median / f[other].cpu_median);
      };
      ratios(floor_column);
      std::printf(" |");
      ratios(baseline_column);
      std::printf("\n");
      std::fflush(stdout);
    }
  }

  const double extra_nodes = static_cast<double>(node_counts.back() - node_counts.front());
  std::printf("\nns per node: (median at %zu nodes - median at %zu) / %.0f\n\n", node_counts.back(),
              node_counts.front(), extra_nodes);
  std::printf("%5s", "lanes");
  for (const char* name : column_names) std::printf(" | %-15s", name);
  std::printf("\n%5s", "");
  for (std::size_t c = 0; c < column_count; ++c) std::printf(" | %7s %7s", "wall", "cpu");
  std::printf("\n");
  for (std::size_t l = 0; l < lane_counts.size(); ++l) {
    std::printf("%5u", lane_counts[l]);
    for (std::size_t c = 0; c < column_count; ++c) {
      const column_figures& most = figures[l].back()[c];
      const column_figures& least = figures[l].front()[c];
      std::printf(" | %7.1f %7.1f", (most.wall_median - least.wall_median) * 1000.0 / extra_nodes,
                  (most.cpu_median - least.cpu_median) * 1000.0 / extra_nodes);
    }
    std::printf("\n");
  }

  // Tracing and GPU timestamps: the same waves without and with each,
  // runs alternating.
  ferrum::trace_recorder trace(std::size_t{1} << 16);
  compare_option("tracing: ferrum waves without and with a trace recorder (a ring of 64k spans)", {.trace = &trace},
                 waves, repeats, device_options, failures);
  compare_option("gpu timestamps: ferrum waves without and with scheduler_options::gpu_timestamps",
                 {.gpu_timestamps = true}, waves, repeats, device_options, failures);
  if (failures != 0) std::printf("\n%zu ferrum waves failed (figures above include them)\n", failures);
  return 0;
}
