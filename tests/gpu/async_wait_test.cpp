// gpu::async_wait keeps Asio's contracts: the I/O executor it is given,
// outstanding work, arguments copied at initiation, cancellation, and the
// token styles — on an io_context and on a thread_pool.
#include "test_timeline.hpp"

#include "ferrum/gpu/async_wait.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/promise.hpp>
#include <boost/asio/experimental/use_promise.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <chrono>
#include <future>
#include <optional>
#include <thread>

namespace asio = boost::asio;
using boost::system::error_code;
using namespace std::chrono_literals;

TEST_CASE("async_wait: a handler without an executor runs on the executor given, on a thread_pool and an io_context",
          "[gpu]") {
  test::test_timeline t;
  SECTION("thread_pool") {
    asio::thread_pool pool(2);
    std::promise<bool> on_pool;
    ferrum::gpu::async_wait(pool.get_executor(), t, 1,
                            [&](error_code ec) { on_pool.set_value(!ec && pool.get_executor().running_in_this_thread()); });
    t.advance(1);
    auto done = on_pool.get_future();
    REQUIRE(done.wait_for(10s) == std::future_status::ready);
    CHECK(done.get());
    pool.join();
  }
  SECTION("io_context") {
    asio::io_context context;
    std::optional<bool> on_context;
    ferrum::gpu::async_wait(context.get_executor(), t, 1,
                            [&](error_code ec) { on_context = !ec && context.get_executor().running_in_this_thread(); });
    std::thread device([&] {
      std::this_thread::sleep_for(30ms);
      t.advance(1);
    });
    context.run();  // the pending wait keeps the context's work: run() waits for it
    device.join();
    REQUIRE(on_context.has_value());
    CHECK(*on_context);
  }
}

TEST_CASE("async_wait: deferred starts the wait when launched, with the arguments given at initiation", "[gpu]") {
  test::test_timeline t;
  asio::io_context context;
  std::uint64_t value = 2;
  auto op = ferrum::gpu::async_wait(context.get_executor(), t, value, asio::deferred);
  value = 100;  // copied already
  CHECK(t.pending() == 0);
  std::optional<error_code> result;
  std::move(op)([&](error_code ec) { result = ec; });
  CHECK(t.pending() == 1);
  t.advance(2);
  context.run();
  REQUIRE(result.has_value());
  CHECK_FALSE(*result);
}

TEST_CASE("async_wait: experimental::use_promise completes on the executor given", "[gpu]") {
  test::test_timeline t;
  asio::io_context context;
  auto p = ferrum::gpu::async_wait(context.get_executor(), t, 1, asio::experimental::use_promise);
  std::optional<bool> on_context;
  p([&](error_code ec) { on_context = !ec && context.get_executor().running_in_this_thread(); });
  t.advance(1);
  context.run();
  REQUIRE(on_context.has_value());
  CHECK(*on_context);
}

TEST_CASE("async_wait: a total cancellation removes only the wait, which had no side effect", "[gpu]") {
  test::test_timeline t;
  asio::io_context context;
  asio::cancellation_signal signal;
  std::optional<error_code> result;
  ferrum::gpu::async_wait(context.get_executor(), t, 5,
                          asio::bind_cancellation_slot(signal.slot(), [&](error_code ec) { result = ec; }));
  signal.emit(asio::cancellation_type::total);
  context.run();
  REQUIRE(result.has_value());
  CHECK(*result == asio::error::operation_aborted);
  CHECK(t.pending() == 0);
  CHECK(t.completed() == 0);
}
