// examples/async_pipeline/main.cpp — a multi-stage asynchronous pipeline
// with backpressure, on ferrum's scheduler.
//
// A producer coroutine makes requests of two size classes, "small" and
// "large", with sizes drawn from a seed. Each request runs as a coroutine of
// its own: one wave in the smallest bucket of its class that holds it (stage 1
// writes the payload on the GPU, stage 2 transforms it and copies the result
// out: request_encoder.hpp), then, once the wave's fence is reached, the host
// checks the result. Backpressure comes twice: the producer starts a request
// only with a ticket (at most --in-flight requests at once), and each wave
// waits for a lane of its bucket (at most `lanes` of a bucket on the GPU).
//
//   ferrum_async_pipeline [PLAN] [--device null|vulkan] [--requests N] [--in-flight N] [--seed S]
//                         [--discrete-layout]
//
// Exit codes: 0 every result was right; 1 a failed wave, a wrong result or
// bad usage; 77 --device vulkan where there is no Vulkan driver (1 instead
// when FERRUM_REQUIRE_VULKAN=1).
#include "pipeline_options.hpp"
#include "pipeline_stats.hpp"
#include "request_encoder.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/plan_json.hpp"
#include "ferrum/gpu/null_device.hpp"
#include "ferrum/gpu/vulkan_device.hpp"
#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

namespace asio = boost::asio;
using std::chrono::steady_clock;

namespace {

// A free ticket is a request allowed to start; its number is the request's
// region of the results arena.
using ticket_channel = asio::experimental::concurrent_channel<void(boost::system::error_code, std::size_t)>;

// What the producer and the requests share; it outlives them all.
struct pipeline {
  ferrum::scheduler& scheduler;
  const pipeline_gpu& gpu;
  pipeline_stats& stats;
  ticket_channel& tickets;
  std::size_t in_flight;
};

// One request, start to end, holding ticket `ticket`.
asio::awaitable<void> serve(pipeline p, request r, std::size_t ticket) {
  const steady_clock::time_point start = steady_clock::now();
  request_encoder encode(p.gpu, r, ticket);  // lives until the wave completes
  // The scheduler picks the smallest bucket of the class covering the extent.
  const ferrum::wave_request wave{.bucket_class = r.size_class, .extent = {1, r.words, 1}};
  auto [ec, report] = co_await p.scheduler.async_submit(wave, encode, asio::as_tuple(asio::use_awaitable));
  // Completed after the wave's fence: what the GPU wrote into the
  // results arena is visible here, and the lane is back in its pool.
  p.stats.record(r, ec, report, steady_clock::now() - start, ec ? 0 : p.gpu.mismatches(ticket, r));
}

asio::awaitable<void> produce(pipeline p, std::uint64_t requests, std::uint32_t seed) {
  const auto executor = co_await asio::this_coro::executor;
  std::mt19937 random(seed);
  for (std::uint64_t number = 1; number <= requests; ++number) {
    // Backpressure: waits while --in-flight requests are running.
    const std::size_t ticket = co_await p.tickets.async_receive(asio::use_awaitable);
    asio::co_spawn(executor, serve(p, make_request(number, random), ticket), [p, ticket](std::exception_ptr e) {
      if (e) p.stats.record_exception(e);
      // The channel has room for every ticket, so the send cannot fail.
      p.tickets.try_send(boost::system::error_code{}, ticket);
    });
  }
  // Every ticket back means every request has finished: none outlives this.
  for (std::size_t i = 0; i < p.in_flight; ++i) co_await p.tickets.async_receive(asio::use_awaitable);
  co_await p.scheduler.async_shutdown(asio::use_awaitable);
}

ferrum::result<std::unique_ptr<ferrum::gpu::device>> make_device(const pipeline_options& o) {
  if (o.device == "vulkan") {
    ferrum::gpu::vulkan_device_options options;
    options.discrete_layout = o.discrete_layout;
    return ferrum::gpu::create_vulkan_device(options);
  }
  // A CPU thread plays the GPU; each submission takes 100 us, so that waves
  // overlap and the lanes fill up.
  ferrum::gpu::null_device_options options;
  options.latency = std::chrono::microseconds(100);
  options.discrete_layout = o.discrete_layout;
  auto null = ferrum::gpu::null_device::create(options);
  if (!null) return null.error();
  return std::unique_ptr<ferrum::gpu::device>(std::move(*null));
}

int fail(const std::string& what) {
  std::cerr << "ferrum_async_pipeline: error: " << what << '\n';
  return 1;
}

int run(const pipeline_options& o) {
  std::ifstream file(o.plan, std::ios::binary);
  std::stringstream text;
  if (!(file && text << file.rdbuf())) return fail("cannot read the plan file '" + o.plan + "'");
  ferrum::result<ferrum::plan> plan = ferrum::parse_plan(text.str());
  if (!plan) return fail("plan '" + o.plan + "': " + plan.error().what());
  ferrum::result<ferrum::compiled_program> compiled = ferrum::compile(*plan);
  if (!compiled) return fail("compiling '" + o.plan + "': " + compiled.error().what());
  auto program = std::make_shared<const ferrum::compiled_program>(std::move(*compiled));

  auto device = make_device(o);
  if (!device) {
    const char* required = std::getenv("FERRUM_REQUIRE_VULKAN");
    if (device.error() == ferrum::errc::vulkan_unavailable && !(required && std::string_view(required) == "1")) {
      std::cerr << "ferrum_async_pipeline: skipped: no Vulkan device (" << device.error().what() << ")\n";
      return 77;
    }
    return fail("creating the " + o.device + " device: " + device.error().what());
  }

  // What the requests use is made before the scheduler, which outlives none of it.
  std::uint64_t max_words = 0;
  for (const ferrum::compiled_bucket& bucket : program->buckets) max_words = std::max(max_words, bucket.spec.dims[1]);
  auto gpu = pipeline_gpu::create(**device, o.in_flight, static_cast<std::size_t>(max_words));
  if (!gpu) return fail("creating the kernels and results arena: " + gpu.error().what());
  asio::thread_pool threads(2);
  pipeline_stats stats(*program);
  ticket_channel tickets(threads, o.in_flight);
  for (std::size_t ticket = 0; ticket < o.in_flight; ++ticket) tickets.try_send(boost::system::error_code{}, ticket);
  auto scheduler = ferrum::scheduler::create(program, **device, threads.get_executor(), {.encoder_tasks = 2});
  if (!scheduler) return fail("creating the scheduler: " + scheduler.error().what());
  const steady_clock::time_point start = steady_clock::now();
  const pipeline p{**scheduler, **gpu, stats, tickets, o.in_flight};
  asio::co_spawn(threads, produce(p, o.requests, o.seed), asio::use_future).get();
  const std::chrono::duration<double, std::milli> took = steady_clock::now() - start;

  std::cout << o.requests << " requests on " << (*device)->name() << " in " << std::lround(took.count())
            << " ms, at most " << o.in_flight << " at once; " << program->buckets.size() << " buckets x "
            << program->lanes << " lanes\n";
  const bool all_right = stats.print(std::cout, o.requests);
  const ferrum::scheduler_stats waves = (*scheduler)->stats();
  std::cout << "waves: " << waves.completed << " completed, " << waves.failed << " failed; at most "
            << waves.max_in_flight << " on the GPU at once\n"
            << (all_right ? "all results right\n" : "FAILED\n");
  return all_right ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<pipeline_options> o = parse_pipeline_options(argc, argv);
  if (!o) {
    std::cerr << pipeline_usage;
    return 1;
  }
  try {
    return run(*o);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}
