// How waves fail: cancellation at each step, fence timeouts, device loss,
// shutdown and destruction with waves in flight.
#include "scheduler_support.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <atomic>
#include <set>
#include <thread>

using namespace std::chrono_literals;
using ferrum::errc;
using sched_test::eventually;
using sched_test::fixture;
using sched_test::hanging;

TEST_CASE("failure: a wave cancelled before it starts completes with operation_aborted and takes no lane",
          "[scheduler]") {
  fixture f(2, 1, {}, {}, false, 1);
  // The executor's only thread is held, so the wave cannot start before the
  // cancellation is emitted.
  std::promise<void> hold;
  boost::asio::post(f.pool, [gate = hold.get_future().share()] { gate.wait(); });
  std::atomic<bool> encoded{false};
  auto encode = [&](const ferrum::encode_context&) { encoded.store(true); };
  boost::asio::cancellation_signal signal;
  auto done = sched_test::submit_cancellable(*f.scheduler, encode, signal);
  signal.emit(boost::asio::cancellation_type::terminal);
  hold.set_value();
  const auto o = sched_test::get(done);
  CHECK_FALSE(encoded.load());
  CHECK(o.ec == boost::asio::error::operation_aborted);
  CHECK_FALSE(o.report.ended[0].has_value());
  CHECK(f.device->queue().last_submitted() == 0);
  CHECK(f.scheduler->stats().cancelled == 1);
}

TEST_CASE("failure: a wave cancelled while queued for a lane leaves the queue and is never handed one", "[scheduler]") {
  fixture f(2, 1, hanging(150ms));
  auto encode = [](const ferrum::encode_context&) {};
  auto first = sched_test::submit(*f.scheduler, encode);
  REQUIRE(eventually([&] { return f.device->queue().last_submitted() == 1; }));
  auto never = [](const ferrum::encode_context&) { FAIL("a cancelled wave encoded"); };
  boost::asio::cancellation_signal signal;
  auto queued = sched_test::submit_cancellable(*f.scheduler, never, signal);
  REQUIRE(eventually([&] { return f.scheduler->pools()[0]->counts().waiting == 1; }));
  signal.emit(boost::asio::cancellation_type::terminal);
  const auto o = sched_test::get(queued);
  CHECK(o.ec == boost::asio::error::operation_aborted);
  CHECK_FALSE(o.report.ended[0].has_value());
  CHECK(f.scheduler->pools()[0]->counts().waiting == 0);
  CHECK_FALSE(sched_test::get(first).ec);
  CHECK(f.device->queue().last_submitted() == 1);
}

TEST_CASE("failure: a wave cancelled while encoding submits nothing and releases its lane at once", "[scheduler]") {
  fixture f(6, 1);
  boost::asio::cancellation_signal signal;
  std::atomic<int> encoded{0};
  auto encode = [&](const ferrum::encode_context& c) {
    encoded.fetch_add(1);
    // Emitted from inside the wave: it happens before the wave completes.
    if (c.node_index == 1) signal.emit(boost::asio::cancellation_type::terminal);
  };
  auto done = sched_test::submit_cancellable(*f.scheduler, encode, signal);
  const auto o = sched_test::get(done);
  CHECK(o.ec == boost::asio::error::operation_aborted);
  CHECK(o.report.submitted_value == 0);
  CHECK(encoded.load() == 2);  // one chunk: the nodes after the cancellation were skipped
  CHECK(f.device->queue().last_submitted() == 0);
  CHECK(f.scheduler->pools()[0]->counts().free == 1);
}

TEST_CASE("failure: a wave cancelled after submit completes at once but keeps its lane until the fence",
          "[scheduler]") {
  fixture f(2, 1, hanging(300ms));
  auto encode = [](const ferrum::encode_context&) {};
  boost::asio::cancellation_signal signal;
  auto done = sched_test::submit_cancellable(*f.scheduler, encode, signal);
  REQUIRE(eventually([&] { return f.device->queue().last_submitted() == 1; }));
  REQUIRE(eventually([&] { return f.device->queue().timeline().pending() > 0; }));  // awaiting the fence
  signal.emit(boost::asio::cancellation_type::terminal);
  const auto o = sched_test::get(done);
  CHECK(o.ec == boost::asio::error::operation_aborted);
  CHECK(o.report.submitted_value == 1);
  CHECK_FALSE(f.device->queue().timeline().reached(1));
  CHECK(f.scheduler->pools()[0]->counts().in_flight == 1);  // the GPU may still write it
  REQUIRE(eventually([&] { return f.scheduler->pools()[0]->counts().free == 1; }));
  CHECK(f.device->queue().timeline().reached(1));
}

TEST_CASE("failure: a fence timeout fails the wave and quarantines its lane until the fence is reached",
          "[scheduler]") {
  fixture f(2, 2, hanging(400ms), {.fence_timeout = 50ms});
  auto encode = [](const ferrum::encode_context&) {};
  auto done = sched_test::submit(*f.scheduler, encode);
  const auto o = sched_test::get(done);
  CHECK(o.ec == errc::fence_timeout);
  CHECK(o.report.submitted_value == 1);
  CHECK_FALSE(f.device->queue().timeline().reached(1));
  const auto counts = f.scheduler->pools()[0]->counts();
  CHECK(counts.quarantined == 1);
  CHECK(counts.free == 1);
  REQUIRE(eventually([&] { return f.scheduler->pools()[0]->counts().free == 2; }));
  CHECK(f.scheduler->pools()[0]->counts().quarantined == 0);
  CHECK(f.scheduler->stats().failed == 1);
}

TEST_CASE("failure: when every lane is quarantined, queued and later waves fail with all_lanes_quarantined",
          "[scheduler]") {
  fixture f(2, 1, hanging(0ms), {.fence_timeout = 50ms});
  auto encode = [](const ferrum::encode_context&) {};
  // Both start at once on the pool's threads: one takes the lane and times
  // out, the other waits for it and fails when it is quarantined.
  auto a = sched_test::submit(*f.scheduler, encode);
  auto b = sched_test::submit(*f.scheduler, encode);
  const std::set<boost::system::error_code> outcomes{sched_test::get(a).ec, sched_test::get(b).ec};
  CHECK(outcomes == std::set<boost::system::error_code>{make_error_code(errc::fence_timeout),
                                                        make_error_code(errc::all_lanes_quarantined)});
  auto later = sched_test::submit(*f.scheduler, encode);
  CHECK(sched_test::get(later).ec == errc::all_lanes_quarantined);
  // The scheduler goes with the hang unresolved: the lane's memory goes to
  // the device, which frees it once the work is drained.
}

TEST_CASE("failure: a lost device fails the waves in flight and every later one with device_lost", "[scheduler]") {
  ferrum::gpu::null_device_options options;
  options.latency = 20ms;
  fixture f(2, 2, options);
  auto encode = [](const ferrum::encode_context&) {};
  auto a = sched_test::submit(*f.scheduler, encode);
  auto b = sched_test::submit(*f.scheduler, encode);
  REQUIRE(eventually([&] { return f.device->queue().last_submitted() == 2; }));
  f.device->lose();
  CHECK(sched_test::get(a).ec == errc::device_lost);
  CHECK(sched_test::get(b).ec == errc::device_lost);
  const auto started = std::chrono::steady_clock::now();
  auto later = sched_test::submit(*f.scheduler, encode);
  CHECK(sched_test::get(later).ec == errc::device_lost);
  CHECK(std::chrono::steady_clock::now() - started < 1s);
  CHECK(f.scheduler->pools()[0]->counts().quarantined == 2);
}

TEST_CASE("failure: async_shutdown drains the waves in flight and refuses later ones", "[scheduler]") {
  ferrum::gpu::null_device_options options;
  options.latency = 5ms;
  fixture f(2, 2, options);
  auto encode = [](const ferrum::encode_context&) {};
  std::vector<std::future<sched_test::outcome>> waves;
  for (int i = 0; i < 6; ++i) waves.push_back(sched_test::submit(*f.scheduler, encode));
  std::promise<boost::system::error_code> drained;
  f.scheduler->async_shutdown([&](boost::system::error_code ec) { drained.set_value(ec); });
  auto refused = sched_test::submit(*f.scheduler, encode);
  CHECK(sched_test::get(refused).ec == errc::scheduler_shut_down);
  auto shutdown = drained.get_future();
  REQUIRE(shutdown.wait_for(10s) == std::future_status::ready);
  CHECK_FALSE(shutdown.get());
  // Every wave accepted before the shutdown ran to its end.
  for (auto& w : waves) CHECK_FALSE(sched_test::get(w).ec);
  CHECK(f.scheduler->stats().live == 0);
  const auto counts = f.scheduler->pools()[0]->counts();
  CHECK(counts.free == 2);
  CHECK(counts.in_flight == 0);
}

TEST_CASE("failure: destroying a scheduler with waves in flight waits for their fences", "[scheduler]") {
  ferrum::gpu::null_device_options options;
  options.latency = 30ms;
  fixture f(2, 2, options);
  auto encode = [](const ferrum::encode_context&) {};
  auto a = sched_test::submit(*f.scheduler, encode);
  auto b = sched_test::submit(*f.scheduler, encode);
  REQUIRE(eventually([&] { return f.device->queue().last_submitted() == 2; }));
  f.scheduler.reset();
  // Both fences were reached before the lanes' memory could go.
  CHECK(f.device->queue().timeline().reached(2));
  CHECK_FALSE(sched_test::get(a).ec);
  CHECK_FALSE(sched_test::get(b).ec);
}

TEST_CASE("failure: async_shutdown after a fence timeout completes only once the quarantined lane's fence is reached",
          "[scheduler]") {
  fixture f(2, 1, hanging(300ms), {.fence_timeout = 50ms});
  auto encode = [](const ferrum::encode_context&) {};
  auto done = sched_test::submit(*f.scheduler, encode);
  CHECK(sched_test::get(done).ec == errc::fence_timeout);
  std::promise<boost::system::error_code> drained;
  f.scheduler->async_shutdown([&](boost::system::error_code ec) { drained.set_value(ec); });
  auto shutdown = drained.get_future();
  CHECK(shutdown.wait_for(100ms) == std::future_status::timeout);  // the GPU still holds the lane
  REQUIRE(shutdown.wait_for(10s) == std::future_status::ready);
  CHECK_FALSE(shutdown.get());
  CHECK(f.device->queue().timeline().reached(1));
  CHECK(f.scheduler->pools()[0]->counts().free == 1);
}

TEST_CASE("failure: async_shutdown completes only after every wave's handler has run", "[scheduler]") {
  // The handlers run on an io_context of their own, so that the shutdown's
  // completion could overtake them if the scheduler let it.
  boost::asio::io_context handlers;
  auto guard = boost::asio::make_work_guard(handlers);
  std::thread handler_thread([&] { handlers.run(); });
  int overtaken = 0;
  for (int round = 0; round < 100; ++round) {
    fixture f(1, 1);
    auto encode = [](const ferrum::encode_context&) {};
    std::atomic<bool> handled{false};
    f.scheduler->async_submit({"step", {1, 1, 1}}, encode,
                              boost::asio::bind_executor(handlers, [&](boost::system::error_code, ferrum::wave_report) {
                                handled.store(true);
                              }));
    std::promise<bool> shut;
    f.scheduler->async_shutdown([&](boost::system::error_code) { shut.set_value(handled.load()); });
    overtaken += shut.get_future().get() ? 0 : 1;
  }
  guard.reset();
  handler_thread.join();
  CHECK(overtaken == 0);
}

TEST_CASE(
    "failure: an encoder that submits its node's list itself fails the wave, whose lane waits for that "
    "submission",
    "[scheduler]") {
  fixture f(2, 1, hanging(300ms));
  ferrum::gpu::device& device = *f.device;
  auto encode = [&device](const ferrum::encode_context& c) {
    if (c.node_index != 0) return;
    c.commands.end().value();
    ferrum::gpu::command_list* lists[] = {&c.commands};
    (void)device.queue().submit_next(lists).value();  // behind the scheduler's back
  };
  auto done = sched_test::submit(*f.scheduler, encode);
  const auto o = sched_test::get(done);
  CHECK(o.ec == errc::command_list_state);  // the scheduler could not end the list
  CHECK(o.report.failed_node == 0u);
  // The lane is not free while that submission may still write it.
  CHECK_FALSE(f.device->queue().timeline().reached(1));
  CHECK(f.scheduler->pools()[0]->counts().quarantined == 1);
  REQUIRE(eventually([&] { return f.scheduler->pools()[0]->counts().free == 1; }));
  CHECK(f.device->queue().timeline().reached(1));
}
