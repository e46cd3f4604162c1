// In steady state a wave allocates nothing: counted with a replaced global
// operator new over 1,000 waves after warm-up, on the null device — and over
// 20,000 waves (5,000 under a sanitizer) on a thread_pool, with a window as large as the scheduler
// reserves waves for, tracing and GPU timestamps on, where a wave or frame
// made at a rare new peak of waves alive at once would show.
//
// And a frame declared again after frame_builder::reset() and hashed, or
// found in a program_cache, allocates nothing once warm.
//
// Its own binary: it links the `ferrum` tool's replacement of the global
// operator new (tools/allocation_counter.cpp), which counts every allocation
// of the process.
#include "allocation_counter.hpp"
#include "frame_shapes.hpp"
#include "sanitized.hpp"
#include "scheduler_support.hpp"

#include "ferrum/binding/program_cache.hpp"
#include "ferrum/scheduler/trace.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace {

// Keeps `window` waves in flight until `total` have completed, submitting
// the next from each completion; counts failures without allocating.
// Completions run on `completions` (one thread at a time: an io_context's
// thread, or a strand).
template <class CompletionExecutor>
struct wave_loop {
  ferrum::scheduler& scheduler;
  CompletionExecutor completions;
  std::size_t total;
  std::size_t window;
  std::size_t submitted = 0;
  std::atomic<std::size_t> completed{0};
  std::size_t failed = 0;
  // With readbacks (one per wave in flight, reserved): each wave keeps its
  // lane in one, which its completion reads and gives back.
  std::vector<ferrum::wave_readback*> free_readbacks{};

  void operator()(const ferrum::encode_context& c) const {
    // Records real commands: a fill of each of the node's resources, found
    // by id as an encoder would (unless replaying them).
    if (c.replay) return;
    for (const ferrum::node_resource& listed : c.resources) {
      const ferrum::node_resource* r = c.resource(listed.id->view());
      if (r != &listed) throw std::runtime_error("resource lookup failed");
      if (!c.commands.fill(r->range, static_cast<std::uint32_t>(c.wave))) throw std::runtime_error("fill refused");
    }
  }

  void pump() {
    while (submitted < total && submitted - completed.load() < window) {
      ++submitted;
      ferrum::wave_readback* kept = nullptr;
      if (!free_readbacks.empty()) {
        kept = free_readbacks.back();
        free_readbacks.pop_back();
      }
      scheduler.async_submit({.bucket_class = "step", .readback = kept}, *this,
                             boost::asio::bind_executor(
                                 completions, [this, kept](boost::system::error_code ec, const ferrum::wave_report&) {
                                   failed += ec ? 1 : 0;
                                   if (kept != nullptr) {
                                     failed += !ec && !kept->bytes("resource/r0") ? 1 : 0;
                                     kept->reset();
                                     free_readbacks.push_back(kept);
                                   }
                                   pump();
                                   completed.fetch_add(1);
                                 }));
    }
  }

  // Adds `waves` to run and returns once they all completed: `drive` runs
  // the executor until then (io_context::run) or waits for them.
  template <class Drive>
  void run(std::size_t waves, Drive&& drive) {
    total += waves;
    // Started on the completions' executor, as every later submission is:
    // on a pool's strand, completions would otherwise run beside this loop.
    boost::asio::post(completions, [this] { pump(); });
    drive(*this);
    REQUIRE(completed.load() == total);
  }
};

// How a run goes: waves kept in flight, waves of warm-up and waves counted.
struct run_shape {
  std::size_t window;
  std::size_t warm_up = 200;
  std::size_t counted = 1000;
  bool readback = false;  // every wave keeps its lane for its completion
};

// Runs `shape.warm_up` waves, then counts the allocations of
// `shape.counted` more, on a scheduler over `executor`; completions are
// delivered through `completions`, and `drive` runs each batch to its end.
template <class CompletionExecutor, class Drive>
std::uint64_t count_waves(const boost::asio::any_io_executor& executor, CompletionExecutor completions, Drive drive,
                          std::size_t nodes, std::uint32_t lanes, const ferrum::scheduler_options& settings,
                          run_shape shape, std::chrono::microseconds latency) {
  const auto plan = sched_test::make_plan(nodes, lanes);
  auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(plan));
  // The GPU takes its time, as a real one does: while it runs one wave the
  // others of the window wait for their fences, so that warm-up reaches the
  // peak of waves awaiting a fence at once (each holds a fence-timeout timer
  // in the io_context's timer heap, which grows to that peak once).
  ferrum::gpu::null_device_options options;
  options.latency = latency;
  auto device = ::test::null_device(options);
  auto scheduler = test::require(ferrum::scheduler::create(program, *device, executor, settings));
  wave_loop<CompletionExecutor> loop{*scheduler, completions, 0, shape.window};
  // After the scheduler: every lane is given back before it goes.
  std::vector<ferrum::wave_readback> readbacks(shape.readback ? shape.window : 0);
  loop.free_readbacks.reserve(readbacks.size());
  for (ferrum::wave_readback& r : readbacks) loop.free_readbacks.push_back(&r);
  using ferrum::tools::allocations_so_far;
  // Warm-up: waves, frames, post buffers and Asio's caches reach their peak. Counted
  // too, to show that the counter sees the scheduler's allocations.
  const std::uint64_t start = allocations_so_far();
  loop.run(shape.warm_up, drive);
  CHECK(allocations_so_far() > start);
  const std::uint64_t warm = allocations_so_far();
  loop.run(shape.counted, drive);
  const std::uint64_t steady = allocations_so_far() - warm;
  CHECK(loop.failed == 0);
  return steady;
}

// Completions are delivered on the io_context itself, or through a strand.
enum class delivery { direct, strand };

// On one io_context run by this thread, 3 waves per 3 lanes (below the
// reserve), the GPU 300 µs per submission.
std::uint64_t allocations_over(std::size_t nodes, std::uint32_t lanes, const ferrum::scheduler_options& settings,
                               delivery how = delivery::direct, bool readback = false) {
  boost::asio::io_context context;
  const auto drive = [&](auto&) {
    context.restart();
    context.run();
  };
  const run_shape shape{.window = lanes, .readback = readback};
  constexpr std::chrono::microseconds latency{300};
  if (how == delivery::strand)
    return count_waves(context.get_executor(), boost::asio::make_strand(context), drive, nodes, lanes, settings, shape,
                       latency);
  return count_waves(context.get_executor(), context.get_executor(), drive, nodes, lanes, settings, shape, latency);
}

}  // namespace

TEST_CASE("zero allocations: 1,000 waves after warm-up allocate nothing (16 nodes, 3 lanes)", "[scheduler]") {
  const std::uint64_t count = allocations_over(16, 3, {});
  INFO(count << " allocations over 1000 waves");
  CHECK(count == 0);
}

TEST_CASE("zero allocations: also with the nodes split into several encoder tasks", "[scheduler]") {
  const std::uint64_t count = allocations_over(64, 2, {.encoder_tasks = 4});
  INFO(count << " allocations over 1000 waves");
  CHECK(count == 0);
}

TEST_CASE("zero allocations: also when completions go through a strand", "[scheduler]") {
  const std::uint64_t count = allocations_over(16, 3, {}, delivery::strand);
  INFO(count << " allocations over 1000 waves");
  CHECK(count == 0);
}

TEST_CASE("zero allocations: also when every wave keeps its lane in a readback its completion reads", "[scheduler]") {
  const std::uint64_t count = allocations_over(16, 3, {}, delivery::direct, true);
  INFO(count << " allocations over 1000 waves");
  CHECK(count == 0);
}

TEST_CASE("zero allocations: also with a trace recorder taking every span", "[scheduler]") {
  // Smaller than the run's spans: the ring wraps, as a long-running trace does.
  ferrum::trace_recorder trace(4096);
  const std::uint64_t count = allocations_over(16, 3, {.trace = &trace});
  INFO(count << " allocations over 1000 waves");
  CHECK(count == 0);
  CHECK(trace.dropped() > 0);
}

TEST_CASE("zero allocations: also when lanes replay their recorded lists", "[scheduler]") {
  const std::uint64_t count = allocations_over(16, 3, {.replay = true});
  INFO(count << " allocations over 1000 waves");
  CHECK(count == 0);
}

TEST_CASE("zero allocations: also with GPU timestamps, read back and traced every wave", "[scheduler]") {
  ferrum::trace_recorder trace(4096);
  const std::uint64_t timed = allocations_over(16, 3, {.gpu_timestamps = true});
  const std::uint64_t traced = allocations_over(16, 3, {.gpu_timestamps = true, .trace = &trace});
  INFO(timed << " and " << traced << " allocations over 1000 waves");
  CHECK(timed == 0);
  CHECK(traced == 0);
  CHECK(trace.dropped() > 0);
}

TEST_CASE(
    "zero allocations: 20,000 waves (5,000 under a sanitizer) on a thread_pool, as many in flight as the scheduler "
    "reserves, traced and "
    "timed, allocate nothing",
    "[scheduler]") {
  // Two lanes and a window of twice the lanes submitted ahead, each
  // completion submitting the next wave while its own is still alive, and a
  // pool thread possibly still ending the coroutine of a wave whose
  // completion ran first: reserved as scheduler_options::reserved_waves
  // says (N = 4 submitted, D = 1 delivering through a strand, E = 2 pool
  // threads). The strand's completions run on both pool threads in turn.
  constexpr std::uint32_t lanes = 2;
  constexpr std::uint64_t counted = test_support::sanitized ? 5000 : 20000;
  boost::asio::thread_pool pool(2);
  ferrum::trace_recorder trace(4096);
  const ferrum::scheduler_options settings{
      .encoder_tasks = 2, .gpu_timestamps = true, .trace = &trace, .reserved_waves = 2 * lanes + 1 + 2};
  const auto wait = [](auto& loop) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (loop.completed.load() < loop.total && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  const std::uint64_t count =
      count_waves(pool.get_executor(), boost::asio::make_strand(pool), wait, 8, lanes, settings,
                  {.window = 2 * lanes, .warm_up = 2000, .counted = counted}, std::chrono::microseconds(20));
  pool.join();
  INFO(count << " allocations over " << counted << " waves");
  CHECK(count == 0);
  CHECK(trace.dropped() > 0);
}

TEST_CASE("zero allocations: a frame declared again and hashed, and its compiled program found", "[frame_builder]") {
  const ferrum::test::chain_names names(100);
  ferrum::frame_builder f;
  ferrum::program_cache cache(2);
  const auto declare = [&](std::size_t length) -> ferrum::frame_builder& {
    f.reset();
    ferrum::test::declare_chain(f, names, length);
    return f;
  };
  std::size_t failed = 0;
  // Three shapes in turn: each hash() misses the two encodings the builder
  // keeps, so each is taken with SHA-256; two in turn: found in the cache.
  const auto rounds = [&](int n) {
    for (int i = 0; i < n; ++i) {
      failed += declare(static_cast<std::size_t>(98 + i % 3)).hash() ? 0 : 1;
      failed += cache.get(declare(static_cast<std::size_t>(99 + i % 2))) ? 0 : 1;
    }
  };
  rounds(6);  // warm: storage grown, both programs compiled
  const std::uint64_t before = ferrum::tools::allocations_so_far();
  rounds(60);
  CHECK(ferrum::tools::allocations_so_far() - before == 0);
  CHECK(failed == 0);
  CHECK(cache.stats().misses == 2);
}
