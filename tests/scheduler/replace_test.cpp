// scheduler::async_replace: a new program while waves run — which program a
// wave runs on, when the old one goes, its errors, and Asio's contract (on an
// io_context and a thread_pool).
#include "contract_fixture.hpp"

#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using boost::system::error_code;
using ferrum::errc;
using sched_test::contract_fixture;
using sched_test::on_io_context;
using sched_test::on_thread_pool;

namespace {

std::shared_ptr<const ferrum::compiled_program> program_of(std::size_t nodes, std::uint32_t lanes,
                                                           bool two_buckets = false) {
  return std::make_shared<const ferrum::compiled_program>(
      ferrum::test::compile_ok(sched_test::make_plan(nodes, lanes, two_buckets)));
}

std::future<error_code> replace(ferrum::scheduler& s, std::shared_ptr<const ferrum::compiled_program> program) {
  auto done = std::make_shared<std::promise<error_code>>();
  auto result = done->get_future();
  s.async_replace(std::move(program), [done](error_code ec) { done->set_value(ec); });
  return result;
}

error_code ready(std::future<error_code>& f) {
  REQUIRE(f.wait_for(20s) == std::future_status::ready);
  return f.get();
}

// Records what the lane held before the wave (node 0's view).
struct recording_encoder {
  mutable std::atomic<std::uint64_t> previous{~std::uint64_t{0}};
  void operator()(const ferrum::encode_context& c) const {
    if (c.node_index == 0) previous = c.lane_previous_wave;
    test::require(c.commands.fill(c.slot, 3u));
  }
};

// Fence timeouts of 30 ms.
ferrum::scheduler_options short_fence() {
  ferrum::scheduler_options options;
  options.fence_timeout = 30ms;
  return options;
}

// Runs one wave whose fence times out: its lane stays quarantined until the
// device's hang ends.
sched_test::outcome timed_out_wave(ferrum::scheduler& s) {
  static const recording_encoder encode;
  auto failed = sched_test::submit(s, encode);
  sched_test::outcome o = sched_test::get(failed);
  REQUIRE(o.ec == errc::fence_timeout);
  return o;
}

}  // namespace

TEMPLATE_TEST_CASE("async_replace: waves accepted after it run on the new program, earlier ones finish on the old",
                   "[scheduler]", on_io_context, on_thread_pool) {
  // Each submission takes 60 ms: the first wave is on the GPU when the
  // program is replaced.
  ferrum::gpu::null_device_options slow;
  slow.latency = 60ms;
  contract_fixture<TestType> f(slow);
  const auto next = program_of(6, 3, true);
  recording_encoder encode;
  std::mutex mutex;
  std::vector<std::string> order;
  const auto note = [&](std::string what) {
    const std::lock_guard lock(mutex);
    order.push_back(std::move(what));
  };
  std::promise<ferrum::wave_report> old_report;
  f.scheduler->async_submit({"step", {1, 1, 1}}, encode, [&](error_code ec, ferrum::wave_report r) {
    CHECK_FALSE(ec);
    note("old wave");
    old_report.set_value(std::move(r));
  });
  REQUIRE(sched_test::eventually([&] { return f.scheduler->stats().in_flight == 1; }));
  std::promise<error_code> replaced;
  f.scheduler->async_replace(next, [&](error_code ec) {
    note("replaced");
    replaced.set_value(ec);
  });
  // From the initiation on: the new program's pools and program.
  CHECK(f.scheduler->program() == next);
  CHECK(f.scheduler->pools().size() == next->buckets.size());
  auto new_wave = sched_test::submit(*f.scheduler, encode, {"step", {1, 4, 1}});
  const auto [ec, report] = sched_test::get(new_wave);
  CHECK_FALSE(ec);
  CHECK(report.program == next->hash);
  CHECK(report.nodes == 6);
  REQUIRE(report.bucket != nullptr);
  CHECK(report.bucket->str() == "step@1x4x1");  // a bucket only the new program has
  CHECK(encode.previous.load() == 0);           // a fresh lane: nothing left in it
  auto old_future = old_report.get_future();
  REQUIRE(old_future.wait_for(20s) == std::future_status::ready);
  const ferrum::wave_report old = old_future.get();
  CHECK(old.program == f.program->hash);
  CHECK(old.nodes == 3);
  auto replaced_future = replaced.get_future();
  CHECK_FALSE(ready(replaced_future));
  {
    // It completed only once the old program's last wave was done.
    const std::lock_guard lock(mutex);
    REQUIRE(order.size() == 2);
    CHECK(order[0] == "old wave");
    CHECK(order[1] == "replaced");
  }
  // What remains is the new program's lanes: every lane of both buckets.
  CHECK(f.scheduler->stats().lanes == 6);
  CHECK(f.scheduler->stats().lane_bytes == 3 * (next->buckets[0].lane_bytes() + next->buckets[1].lane_bytes()));
}

TEMPLATE_TEST_CASE("async_replace: every completion token style, lazy ones replacing only when launched", "[scheduler]",
                   on_io_context, on_thread_pool) {
  contract_fixture<TestType> f;
  ferrum::scheduler& s = *f.scheduler;
  const auto next = program_of(5, 2);
  SECTION("use_future") {
    std::future<void> done = s.async_replace(next, asio::use_future);
    REQUIRE(done.wait_for(20s) == std::future_status::ready);
    CHECK_NOTHROW(done.get());
    CHECK(s.program() == next);
  }
  SECTION("use_awaitable, in a coroutine on the scheduler's executor") {
    auto body = [](ferrum::scheduler* sch,
                   std::shared_ptr<const ferrum::compiled_program> p) -> asio::awaitable<std::uint64_t> {
      co_await sch->async_replace(p, asio::use_awaitable);
      co_return sch->stats().lanes;
    };
    auto lanes = asio::co_spawn(s.get_executor(), body(&s, next), asio::use_future);
    REQUIRE(lanes.wait_for(20s) == std::future_status::ready);
    CHECK(lanes.get() == 2);  // the old program's lanes are gone
  }
  SECTION("deferred: the program is copied now, the replacement made at launch") {
    std::weak_ptr<const ferrum::compiled_program> watched = next;
    auto op = s.async_replace(std::shared_ptr<const ferrum::compiled_program>(next), asio::deferred);
    CHECK(s.program() == f.program);  // nothing replaced yet
    recording_encoder encode;
    auto before = sched_test::submit(s, encode);
    CHECK(sched_test::get(before).report.program == f.program->hash);
    std::future<void> done = std::move(op)(asio::use_future);
    REQUIRE(done.wait_for(20s) == std::future_status::ready);
    done.get();
    CHECK(s.program() == next);
    auto after = sched_test::submit(s, encode);
    CHECK(sched_test::get(after).report.program == next->hash);
    CHECK_FALSE(watched.expired());
  }
}

TEST_CASE("async_replace keeps outstanding work on its handler's executor until it completes", "[scheduler]") {
  // The old program's wave is on the GPU for 100 ms; the handler is bound to
  // an io_context nothing else keeps busy.
  contract_fixture<on_thread_pool> f(sched_test::hanging(100ms));
  recording_encoder encode;
  auto wave = sched_test::submit(*f.scheduler, encode);
  REQUIRE(sched_test::eventually([&] { return f.scheduler->stats().in_flight == 1; }));
  asio::io_context ctx;
  std::optional<error_code> handled;
  f.scheduler->async_replace(program_of(3, 2), asio::bind_executor(ctx, [&](error_code ec) { handled = ec; }));
  ctx.run();  // returns only once the handler ran
  REQUIRE(handled.has_value());
  CHECK_FALSE(*handled);
  CHECK_FALSE(sched_test::get(wave).ec);
}

TEMPLATE_TEST_CASE("async_replace keeps its pending handler in memory from the handler's associated allocator",
                   "[scheduler]", on_io_context, on_thread_pool) {
  contract_fixture<TestType> f;
  std::atomic<int> allocations{0};
  std::atomic<int> deallocations{0};
  std::promise<error_code> replaced;
  f.scheduler->async_replace(program_of(3, 2),
                             asio::bind_allocator(sched_test::counting_allocator<void>(&allocations, &deallocations),
                                                  [&](error_code ec) { replaced.set_value(ec); }));
  auto done = replaced.get_future();
  CHECK_FALSE(ready(done));
  CHECK(allocations >= 1);
  REQUIRE(sched_test::eventually([&] { return deallocations.load() == allocations.load(); }));
}

TEST_CASE("async_replace completes only once the old program's quarantined lane came back from its fence",
          "[scheduler]") {
  // The submission hangs 300 ms: the lane comes back once it ends.
  contract_fixture<on_thread_pool> f(sched_test::hanging(300ms), short_fence());
  const ferrum::wave_report report = timed_out_wave(*f.scheduler).report;
  auto done = replace(*f.scheduler, program_of(3, 2));
  CHECK(done.wait_for(50ms) == std::future_status::timeout);
  CHECK_FALSE(ready(done));
  CHECK(f.device->queue().timeline().reached(report.submitted_value));
  CHECK(f.scheduler->stats().lanes == 2);  // the new program's alone
}

TEST_CASE("async_replace refuses what it cannot run, and the old program goes on serving", "[scheduler]") {
  ferrum::gpu::null_device_options small;
  small.max_arena_bytes = 1 << 16;
  contract_fixture<on_thread_pool> f(small);
  recording_encoder encode;
  SECTION("no program") {
    auto done = replace(*f.scheduler, nullptr);
    CHECK(ready(done) == errc::invalid_scheduler_option);
  }
  SECTION("a program whose lanes the device refuses") {
    // 2,000 nodes of 64-byte slots: a lane above the device's 64 KiB.
    auto done = replace(*f.scheduler, program_of(2000, 2));
    CHECK(ready(done) == errc::invalid_arena_size);
  }
  SECTION("after async_shutdown") {
    auto shut = f.scheduler->async_shutdown(asio::use_future);
    REQUIRE(shut.wait_for(20s) == std::future_status::ready);
    auto done = replace(*f.scheduler, program_of(3, 2));
    CHECK(ready(done) == errc::scheduler_shut_down);
    return;
  }
  CHECK(f.scheduler->program() == f.program);
  auto wave = sched_test::submit(*f.scheduler, encode);
  const auto [ec, report] = sched_test::get(wave);
  CHECK_FALSE(ec);
  CHECK(report.program == f.program->hash);
}

TEST_CASE("destroying a scheduler with async_replace pending invokes the handler with operation_aborted",
          "[scheduler]") {
  // The old program's lane stays quarantined: its fence never comes while
  // the scheduler lives.
  contract_fixture<on_thread_pool> f(sched_test::hanging(0ms), short_fence());
  (void)timed_out_wave(*f.scheduler);
  auto done = replace(*f.scheduler, program_of(3, 2));
  CHECK(done.wait_for(50ms) == std::future_status::timeout);
  f.scheduler.reset();
  CHECK(ready(done) == asio::error::operation_aborted);
}

TEST_CASE("async_replace: overlapping replacements each complete, and only the last program remains", "[scheduler]") {
  ferrum::gpu::null_device_options slow;
  slow.latency = 20ms;
  ferrum::scheduler_options options;
  options.make_lanes = ferrum::lane_making::when_needed;
  contract_fixture<on_thread_pool> f(slow, options);
  recording_encoder encode;
  std::vector<std::future<sched_test::outcome>> waves;
  std::vector<std::future<error_code>> replacements;
  std::vector<std::shared_ptr<const ferrum::compiled_program>> programs;
  for (int i = 0; i < 4; ++i) {
    programs.push_back(program_of(static_cast<std::size_t>(2 + i), 2));
    waves.push_back(sched_test::submit(*f.scheduler, encode));
    replacements.push_back(replace(*f.scheduler, programs.back()));
  }
  for (auto& w : waves) CHECK_FALSE(sched_test::get(w).ec);
  for (auto& r : replacements) CHECK_FALSE(ready(r));
  CHECK(f.scheduler->program() == programs.back());
  // Made when needed, the last program has no lane until a wave needs one.
  CHECK(f.scheduler->stats().lanes == 0);
  auto last = sched_test::submit(*f.scheduler, encode);
  CHECK(sched_test::get(last).report.program == programs.back()->hash);
  CHECK(f.scheduler->stats().lanes == 1);
}

namespace {

// One thread runs `Context`, as a game loop's io_context does.
struct one_thread_io_context {
  asio::io_context context{1};
  asio::executor_work_guard<asio::io_context::executor_type> guard{context.get_executor()};
  std::thread thread{[this] { context.run(); }};
  [[nodiscard]] asio::any_io_executor executor() { return context.get_executor(); }
  void stop() {
    guard.reset();
    thread.join();
  }
};

struct one_thread_pool {
  asio::thread_pool context{1};
  [[nodiscard]] asio::any_io_executor executor() { return context.get_executor(); }
  void stop() { context.join(); }
};

}  // namespace

TEMPLATE_TEST_CASE(
    "a scheduler destroyed in its async_shutdown handler returns while a replaced program's quarantined lane comes "
    "back, and the replacement completes once",
    "[scheduler]", one_thread_io_context, one_thread_pool) {
  // The pattern scheduler.hpp recommends, on one thread: the old program's
  // lane is quarantined (its fence timed out at 20 ms, the submission hangs
  // 150 ms), a replacement waits for it, and the shutdown handler destroys
  // the scheduler. The thread is busy while the hang ends, so that the
  // lane's return queues both the shutdown's completion and the old
  // program's retirement: the destructor must not wait for what is queued
  // behind the handler it runs in.
  TestType context;
  const ferrum::plan plan = sched_test::make_plan(3, 1);
  auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(plan));
  auto device = ::test::null_device(sched_test::hanging(150ms));
  ferrum::scheduler_options options;
  options.fence_timeout = 20ms;
  auto s = ferrum::scheduler::create(program, *device, context.executor(), options).value();
  (void)timed_out_wave(*s);
  asio::post(context.executor(), [] { std::this_thread::sleep_for(400ms); });
  std::atomic<int> replaced{0};
  std::atomic<bool> replaced_ok{false};
  s->async_replace(program_of(3, 1), [&](error_code ec) {
    replaced_ok = !ec;
    replaced.fetch_add(1);
  });
  std::promise<error_code> shut;
  s->async_shutdown([&](error_code ec) {
    s.reset();  // returns: nothing it waits for is queued behind this handler
    shut.set_value(ec);
  });
  auto done = shut.get_future();
  if (done.wait_for(20s) != std::future_status::ready) {
    // The executor's one thread is stuck in ~scheduler: nothing can end
    // this test but the process.
    std::fputs("~scheduler in an async_shutdown handler never returned\n", stderr);
    std::_Exit(1);
  }
  CHECK_FALSE(done.get());
  context.stop();  // returns once the scheduler's work is gone
  CHECK(s == nullptr);
  CHECK(replaced == 1);
  CHECK(replaced_ok);
}
