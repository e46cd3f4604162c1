// GPU time per node (scheduler_options::gpu_timestamps) on the null device:
// what wave reports carry, on a thread_pool and on an io_context, with and
// without replay and coroutine encoders; what the trace draws; what a device
// without timestamps says.
#include "gpu_time_checks.hpp"
#include "scheduler_support.hpp"

#include "ferrum/scheduler/trace.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <sstream>
#include <thread>

using ferrum::gpu_interval;
using gpu_time::check_gpu_times;
using gpu_time::run_waves;
using gpu_time::timed_wave;

namespace {

ferrum::scheduler_options timed(bool replay = false, ferrum::trace_recorder* trace = nullptr) {
  ferrum::scheduler_options o;
  o.encoder_tasks = 2;
  o.gpu_timestamps = true;
  o.replay = replay;
  o.trace = trace;
  return o;
}

// Each node fills its slot: GPU work for the stamps to bracket.
void fill_slot(const ferrum::encode_context& c) {
  if (!c.replay) test::require(c.commands.fill(c.slot, static_cast<std::uint32_t>(c.wave)));
}

}  // namespace

TEST_CASE("gpu timestamps: each node's GPU span lies in its wave's submission, in node order (thread_pool)",
          "[scheduler]") {
  sched_test::fixture f(6, 3, {}, timed());
  auto encode = fill_slot;
  check_gpu_times(run_waves(*f.scheduler, encode, 30), 6);
}

TEST_CASE("gpu timestamps: the same on an io_context run by the test's thread", "[scheduler]") {
  const auto plan = sched_test::make_plan(5, 2);
  auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(plan));
  auto device = ::test::null_device();
  boost::asio::io_context context;
  auto s = test::require(ferrum::scheduler::create(program, *device, context.get_executor(), timed()));
  auto encode = fill_slot;
  check_gpu_times(run_waves(*s, encode, 12, [&] { context.run(); }), 5);
}

TEST_CASE("gpu timestamps: replayed lanes write fresh stamps every wave", "[scheduler]") {
  sched_test::fixture f(4, 2, {}, timed(true));
  auto encode = fill_slot;
  auto first = run_waves(*f.scheduler, encode, 2);
  auto later = run_waves(*f.scheduler, encode, 10);
  check_gpu_times(later, 4);
  gpu_interval earliest_first = first.front().nodes.front();
  for (const timed_wave& w : first) earliest_first.end = std::max(earliest_first.end, w.nodes.back().end);
  for (const timed_wave& w : later) CHECK(w.nodes.front().begin >= earliest_first.end);
}

TEST_CASE("gpu timestamps: coroutine encoders are timed too", "[scheduler]") {
  sched_test::fixture f(4, 2, {}, timed());
  auto encode = [](const ferrum::encode_context& c) -> boost::asio::awaitable<void> {
    test::require(c.commands.fill(c.slot, 1u));
    co_return;
  };
  check_gpu_times(run_waves(*f.scheduler, encode, 8), 4);
}

TEST_CASE("gpu timestamps: reports carry none when off or when the wave failed", "[scheduler]") {
  SECTION("off") {
    sched_test::fixture f(3, 2);
    auto encode = fill_slot;
    for (const timed_wave& w : run_waves(*f.scheduler, encode, 4)) {
      CHECK_FALSE(w.ec);
      CHECK(w.nodes.empty());
      CHECK_FALSE(w.report.gpu.has_value());
    }
  }
  SECTION("an encoder throws") {
    sched_test::fixture f(3, 2, {}, timed());
    auto encode = [](const ferrum::encode_context& c) {
      if (c.node_index == 1) throw std::runtime_error("refused");
    };
    const auto waves = run_waves(*f.scheduler, encode, 2);
    for (const timed_wave& w : waves) {
      CHECK(w.ec == ferrum::errc::encoder_failed);
      CHECK(w.nodes.empty());
      CHECK_FALSE(w.report.gpu.has_value());
    }
  }
}

TEST_CASE("gpu timestamps: a device without them fails scheduler::create with timestamps_unsupported", "[scheduler]") {
  const auto plan = sched_test::make_plan(2, 1);
  auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(plan));
  ferrum::gpu::null_device_options options;
  options.timestamps = false;
  auto device = ::test::null_device(options);
  boost::asio::io_context context;
  auto made = ferrum::scheduler::create(program, *device, context.get_executor(), timed());
  REQUIRE_FALSE(made.has_value());
  CHECK(made.error() == ferrum::errc::timestamps_unsupported);
  // Without the option the same device runs waves.
  CHECK(ferrum::scheduler::create(program, *device, context.get_executor(), {}).has_value());
}

TEST_CASE("gpu timestamps: the Chrome trace has a GPU track with one span per node, inside its wave's submission",
          "[scheduler]") {
  ferrum::trace_recorder recorder(1 << 14);
  constexpr std::size_t waves = 10;
  constexpr std::size_t nodes = 4;
  {
    sched_test::fixture f(nodes, 2, {}, timed(false, &recorder));
    auto encode = fill_slot;
    check_gpu_times(run_waves(*f.scheduler, encode, waves), nodes);
    std::ostringstream svg;
    ferrum::write_timeline_svg(svg, recorder, f.plan);
    CHECK(svg.str().find(">gpu queue</text>") != std::string::npos);
    CHECK(svg.str().find(">gpu (per node)</text>") != std::string::npos);

    std::ostringstream out;
    ferrum::write_chrome_trace(out, recorder, f.plan);
    const auto trace = nlohmann::json::parse(out.str());
    // Per wave, when its submit phase began and its fence phase ended (µs).
    std::map<int, double> submits;
    std::map<int, double> fences;
    std::vector<nlohmann::json> gpu;
    bool gpu_process = false;
    for (const auto& e : trace.at("traceEvents")) {
      if (e.at("ph") == "M") {
        gpu_process = gpu_process || (e.at("pid") == 3 && e.at("args").at("name") == "gpu");
        continue;
      }
      if (e.at("cat") == "gpu") {
        gpu.push_back(e);
      } else if (e.at("name") == "submit") {
        submits[e.at("args").at("wave").get<int>()] = e.at("ts").get<double>();
      } else if (e.at("name") == "fence") {
        fences[e.at("args").at("wave").get<int>()] = e.at("ts").get<double>() + e.at("dur").get<double>();
      }
    }
    CHECK(gpu_process);
    REQUIRE(gpu.size() == waves * nodes);
    for (const auto& e : gpu) {
      const auto& args = e.at("args");
      const int node = args.at("node").get<int>();
      CHECK(e.at("name") == "node/n" + std::to_string(node));
      CHECK(e.at("pid") == 3);
      CHECK(args.at("bucket") == "step@1x1x1");
      CHECK(args.at("lane").get<int>() < 2);
      // The GPU ran the node between its wave's submission and the fence's
      // observation, up to the printed nanosecond.
      const int wave = args.at("wave").get<int>();
      const double ts = e.at("ts").get<double>();
      CHECK(ts >= submits.at(wave) - 0.002);
      CHECK(ts + e.at("dur").get<double>() <= fences.at(wave) + 0.002);
    }
  }
}
