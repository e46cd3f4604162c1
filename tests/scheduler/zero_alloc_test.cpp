// In steady state a wave allocates nothing: counted with a replaced global
// operator new over 1,000 waves after warm-up, on the null device.
//
// Its own binary: it links the `ferrum` tool's replacement of the global
// operator new (tools/allocation_counter.cpp), which counts every allocation
// of the process.
#include "allocation_counter.hpp"
#include "scheduler_support.hpp"

#include "ferrum/scheduler/trace.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>

namespace {

// Keeps `window` waves in flight on a single-threaded io_context until
// `total` have completed; counts failures without allocating.
template <class CompletionExecutor>
struct wave_loop {
  ferrum::scheduler& scheduler;
  CompletionExecutor completions;
  std::size_t total;
  std::size_t window;
  std::size_t submitted = 0;
  std::size_t completed = 0;
  std::size_t failed = 0;

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
    while (submitted < total && submitted - completed < window) {
      ++submitted;
      scheduler.async_submit(
          {"step", {1, 1, 1}}, *this,
          boost::asio::bind_executor(completions, [this](boost::system::error_code ec, const ferrum::wave_report&) {
            ++completed;
            failed += ec ? 1 : 0;
            pump();
          }));
    }
  }

  void run(boost::asio::io_context& context, std::size_t waves) {
    total += waves;
    pump();
    context.restart();
    context.run();
  }
};

// Runs 200 waves of warm-up, then counts the allocations of 1,000 more;
// completions are delivered through `completions`.
template <class CompletionExecutor>
std::uint64_t count_waves(boost::asio::io_context& context, CompletionExecutor completions, std::size_t nodes,
                          std::uint32_t lanes, const ferrum::scheduler_options& settings) {
  const auto plan = sched_test::make_plan(nodes, lanes);
  auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(plan));
  // The GPU takes its time, as a real one does: while it runs one wave the
  // others of the window wait for their fences, so that warm-up reaches the
  // peak of waves awaiting a fence at once (each holds a fence-timeout timer
  // in the io_context's timer heap, which grows to that peak once).
  ferrum::gpu::null_device_options options;
  options.latency = std::chrono::microseconds(300);
  auto device = ::test::null_device(options);
  auto scheduler = test::require(ferrum::scheduler::create(plan, program, *device, context.get_executor(), settings));
  wave_loop<CompletionExecutor> loop{*scheduler, completions, 0, lanes};
  using ferrum::tools::allocations_so_far;
  // Warm-up: waves, frames, post buffers and Asio's caches reach their peak. Counted
  // too, to show that the counter sees the scheduler's allocations.
  const std::uint64_t start = allocations_so_far();
  loop.run(context, 200);
  REQUIRE(loop.completed == 200);
  CHECK(allocations_so_far() > start);
  const std::uint64_t warm = allocations_so_far();
  loop.run(context, 1000);
  const std::uint64_t steady = allocations_so_far() - warm;
  REQUIRE(loop.completed == 1200);
  CHECK(loop.failed == 0);
  return steady;
}

// Completions are delivered on the io_context itself, or through a strand.
enum class delivery { direct, strand };

std::uint64_t allocations_over(std::size_t nodes, std::uint32_t lanes, const ferrum::scheduler_options& settings,
                               delivery how = delivery::direct) {
  if (how == delivery::strand) {
    boost::asio::io_context context;
    return count_waves(context, boost::asio::make_strand(context), nodes, lanes, settings);
  }
  boost::asio::io_context context;
  return count_waves(context, context.get_executor(), nodes, lanes, settings);
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
