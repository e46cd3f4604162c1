// wave_overhead — the scheduler's cost per wave and per node on the null
// device with no-op encoders, against a plain baseline measured in the same
// run.
//
// ferrum: one bucket of `lanes` lanes, a plan of `nodes` binding nodes, a
// boost::asio::thread_pool of 2 threads, encoder_tasks 2, encoders that
// record nothing. `lanes x 2` waves are kept in flight: each completion (run
// on the pool) submits the next wave. Per configuration: a warm-up, then
// `waves` timed waves; µs/wave and ns/node are the timed span divided by
// waves and by waves x nodes. Each side is run `repeats` times, alternating;
// the table gives the best run of each (the least disturbed by other load on
// a shared machine) and, last, the ratio of the medians.
//
// baseline: the same work without coroutines, Asio or ferrum. One driver
// thread and two std::thread workers (a queue under a mutex and condition
// variables). Per wave: wait until the wave's lane (round robin over `lanes`)
// has its previous submission reached, split the nodes into the same number
// of chunks as ferrum (all but the last handed to the workers, the last run
// inline), call the same no-op encoder per node through a function pointer,
// join the chunks, and submit the lane's pre-recorded lists (one per node,
// all empty but the last, whose host function wakes the driver through a
// condition variable) with queue().submit_next on its own null device.
// Submissions of up to `lanes` waves are in flight while the driver encodes
// the next, as the lanes allow for ferrum.
//
//   ferrum_bench_wave_overhead [waves] [repeats]     # defaults 2000 5
#include "bench_driver.hpp"
#include "bench_plan.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/gpu/null_device.hpp"
#include "ferrum/scheduler/scheduler.hpp"
#include "ferrum/scheduler/trace.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/thread_pool.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;

constexpr std::size_t pool_threads = 2;
constexpr std::size_t encoder_tasks = 2;
constexpr std::size_t warm_up_waves = 200;

std::unique_ptr<ferrum::gpu::null_device> make_device() { return ferrum::gpu::null_device::create({}).value(); }

double elapsed_us(clock_type::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double best(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

// The no-op encoder both sides call per node; the baseline calls it through a
// pointer it cannot see through, as ferrum calls its encoder.
void noop_node(std::size_t) noexcept {}
void (*volatile baseline_encoder)(std::size_t) noexcept = &noop_node;

// --- ferrum -----------------------------------------------------------------------

struct noop_encoder {
  void operator()(const ferrum::encode_context&) const noexcept {}
};

double measure_ferrum(std::size_t nodes, std::uint32_t lanes, std::size_t waves, std::size_t& failures,
                      ferrum::trace_recorder* trace = nullptr) {
  const ferrum::plan p = ferrum::bench::binding_plan(nodes, lanes, 64);
  auto program = std::make_shared<const ferrum::compiled_program>(ferrum::compile(p).value());
  auto device = make_device();
  asio::thread_pool pool(pool_threads);
  double us = 0;
  {
    auto s = ferrum::scheduler::create(p, program, *device, pool.get_executor(),
                                       {.fence_timeout = std::chrono::milliseconds(5000),
                                        .encoder_tasks = encoder_tasks,
                                        .trace = trace})
                 .value();
    noop_encoder encoder;
    ferrum::bench::wave_driver driver(*s, pool, encoder);
    const std::size_t window = std::size_t{lanes} * 2;
    driver.run(warm_up_waves, window);
    us = driver.run(waves, window);
    failures += driver.failures();
    // Shared: set_value may still run when the future is ready.
    auto shut = std::make_shared<std::promise<void>>();
    auto shut_done = shut->get_future();
    s->async_shutdown([shut](boost::system::error_code) { shut->set_value(); });
    shut_done.wait();
  }
  pool.join();
  return us;
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

  static void run(task t) noexcept {
    for (std::size_t node = t.first; node < t.last; ++node) baseline_encoder(node);
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
      run(t);
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
  // device's worker advances the timeline (a list can be resubmitted only
  // then).
  void wait(const ferrum::gpu::timeline& t, std::uint64_t value) {
    {
      std::unique_lock lock(mutex);
      reached.wait(lock, [&] { return executed >= value; });
    }
    while (!t.reached(value)) std::this_thread::yield();
  }
};

double measure_baseline(std::size_t nodes, std::uint32_t lanes, std::size_t waves) {
  auto device = make_device();
  completion_signal signal;
  // Per lane: one list per node, recorded once and replayed; the last one
  // carries the host function.
  std::vector<std::vector<std::unique_ptr<ferrum::gpu::command_list>>> lists(lanes);
  std::vector<std::vector<ferrum::gpu::command_list*>> submission(lanes);
  for (std::uint32_t l = 0; l < lanes; ++l) {
    for (std::size_t n = 0; n < nodes; ++n) {
      auto list = device->create_command_list().value();
      list->begin().value();
      if (n + 1 == nodes) list->host(ferrum::gpu::host_call(signal)).value();
      list->end().value();
      submission[l].push_back(list.get());
      lists[l].push_back(std::move(list));
    }
  }
  worker_pool workers(pool_threads);
  const std::size_t chunks = std::max<std::size_t>(1, std::min(encoder_tasks, nodes));
  std::vector<std::uint64_t> lane_value(lanes, 0);
  ferrum::gpu::queue& queue = device->queue();

  const auto run = [&](std::size_t count) {
    for (std::size_t wave = 0; wave < count; ++wave) {
      const std::size_t lane = wave % lanes;
      // The lane's lists may be reused once its last submission is reached.
      if (lane_value[lane] != 0) signal.wait(queue.timeline(), lane_value[lane]);
      for (std::size_t c = 0; c + 1 < chunks; ++c) workers.post({c * nodes / chunks, (c + 1) * nodes / chunks});
      worker_pool::run({(chunks - 1) * nodes / chunks, nodes});
      workers.join();
      lane_value[lane] = queue.submit_next(submission[lane]).value();
    }
    for (const std::uint64_t v : lane_value)
      if (v != 0) signal.wait(queue.timeline(), v);
  };
  run(warm_up_waves);
  const auto start = clock_type::now();
  run(waves);
  return elapsed_us(clock_type::now() - start);
}

}  // namespace

int main(int argc, char** argv) {
  const auto args = ferrum::bench::parse_args(argc, argv, {2000, 5});
  if (!args) return 2;
  const std::size_t waves = args->waves;
  const int repeats = args->repeats;
  std::printf("wave overhead: null device, no-op encoders, thread_pool of %zu, encoder_tasks %zu,\n", pool_threads,
              encoder_tasks);
  std::printf("%zu waves per run after %zu warm-up, window lanes x 2, best of %d runs (last column: medians)\n\n",
              waves, warm_up_waves, repeats);
  std::printf("%6s %6s | %12s %10s | %12s %10s | %8s %8s\n", "nodes", "lanes", "ferrum us/w", "ns/node", "base us/w",
              "ns/node", "ratio", "median");
  std::size_t failures = 0;
  for (const std::size_t nodes : {std::size_t{1}, std::size_t{16}, std::size_t{256}}) {
    for (const std::uint32_t lanes : {1u, 2u, 3u}) {
      std::vector<double> ferrum_us;
      std::vector<double> base_us;
      for (int r = 0; r < repeats; ++r) {
        ferrum_us.push_back(measure_ferrum(nodes, lanes, waves, failures));
        base_us.push_back(measure_baseline(nodes, lanes, waves));
      }
      const double f = best(ferrum_us) / static_cast<double>(waves);
      const double b = best(base_us) / static_cast<double>(waves);
      const double per_node = 1000.0 / static_cast<double>(nodes);
      std::printf("%6zu %6u | %12.2f %10.1f | %12.2f %10.1f | %8.2f %8.2f\n", nodes, lanes, f, f * per_node, b,
                  b * per_node, f / b, median(ferrum_us) / median(base_us));
      std::fflush(stdout);
    }
  }
  // Tracing: the same waves without and with a recorder, runs alternating.
  std::printf("\ntracing: ferrum waves without and with a trace recorder (a ring of 64k spans), best of %d\n\n",
              repeats);
  std::printf("%6s %6s | %12s %12s | %8s\n", "nodes", "lanes", "off us/w", "on us/w", "on/off");
  ferrum::trace_recorder trace(std::size_t{1} << 16);
  for (const std::size_t nodes : {std::size_t{1}, std::size_t{16}, std::size_t{256}}) {
    const std::uint32_t lanes = 2;
    std::vector<double> off_us;
    std::vector<double> on_us;
    for (int r = 0; r < repeats; ++r) {
      off_us.push_back(measure_ferrum(nodes, lanes, waves, failures));
      on_us.push_back(measure_ferrum(nodes, lanes, waves, failures, &trace));
    }
    const double off = best(off_us) / static_cast<double>(waves);
    const double on = best(on_us) / static_cast<double>(waves);
    std::printf("%6zu %6u | %12.2f %12.2f | %8.2f\n", nodes, lanes, off, on, on / off);
    std::fflush(stdout);
  }
  if (failures != 0) std::printf("\n%zu ferrum waves failed (figures above include them)\n", failures);
  return 0;
}
