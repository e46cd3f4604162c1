// gpu::async_wait keeps Asio's contracts: the I/O executor it is given,
// outstanding work, arguments copied at initiation, cancellation, and the
// token styles — on an io_context and on a thread_pool.
#include "test_timeline.hpp"

#include "ferrum/gpu/async_wait.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/experimental/promise.hpp>
#include <boost/asio/experimental/use_promise.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <array>
#include <chrono>
#include <future>
#include <memory>
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
    ferrum::gpu::async_wait(pool.get_executor(), t, 1, [&](error_code ec) {
      on_pool.set_value(!ec && pool.get_executor().running_in_this_thread());
    });
    t.advance(1);
    auto done = on_pool.get_future();
    REQUIRE(done.wait_for(10s) == std::future_status::ready);
    CHECK(done.get());
    pool.join();
  }
  SECTION("io_context") {
    asio::io_context context;
    std::optional<bool> on_context;
    ferrum::gpu::async_wait(context.get_executor(), t, 1, [&](error_code ec) {
      on_context = !ec && context.get_executor().running_in_this_thread();
    });
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

TEST_CASE("async_wait: use_awaitable, as_tuple, redirect_error, use_future and awaitable operators", "[gpu]") {
  test::test_timeline t;
  asio::thread_pool pool(2);
  auto body = [](test::test_timeline* tl) -> asio::awaitable<int> {
    const auto ex = co_await asio::this_coro::executor;
    co_await ferrum::gpu::async_wait(ex, *tl, 1, asio::use_awaitable);
    auto [ec] = co_await ferrum::gpu::async_wait(ex, *tl, 2, asio::as_tuple(asio::use_awaitable));
    error_code redirected;
    co_await ferrum::gpu::async_wait(ex, *tl, 3, asio::redirect_error(asio::use_awaitable, redirected));
    // The loser of || is cancelled: its wait leaves the timeline.
    using namespace asio::experimental::awaitable_operators;
    asio::steady_timer timer(ex, 10ms);
    auto winner =
        co_await (ferrum::gpu::async_wait(ex, *tl, 100, asio::use_awaitable) || timer.async_wait(asio::use_awaitable));
    co_return (ec || redirected || winner.index() != 1) ? -1 : 1;
  };
  auto result = asio::co_spawn(pool, body(&t), asio::use_future);
  std::future<void> later = ferrum::gpu::async_wait(pool.get_executor(), t, 3, asio::use_future);
  std::this_thread::sleep_for(5ms);
  t.advance(3);
  REQUIRE(later.wait_for(10s) == std::future_status::ready);
  later.get();
  REQUIRE(result.wait_for(10s) == std::future_status::ready);
  CHECK(result.get() == 1);
  CHECK(t.pending() == 0);  // the cancelled wait on 100 is gone
  pool.join();
}

TEST_CASE("async_wait: parallel_group waits for all or for one, cancelling the rest", "[gpu]") {
  test::test_timeline t;
  asio::io_context context;
  const auto ex = context.get_executor();
  std::optional<std::array<std::size_t, 2>> all;
  asio::experimental::make_parallel_group(ferrum::gpu::async_wait(ex, t, 1, asio::deferred),
                                          ferrum::gpu::async_wait(ex, t, 2, asio::deferred))
      .async_wait(asio::experimental::wait_for_all(),
                  [&](std::array<std::size_t, 2> order, error_code, error_code) { all = order; });
  t.advance(2);
  context.run();
  REQUIRE(all.has_value());

  std::optional<error_code> loser;
  asio::experimental::make_parallel_group(ferrum::gpu::async_wait(ex, t, 3, asio::deferred),
                                          ferrum::gpu::async_wait(ex, t, 50, asio::deferred))
      .async_wait(asio::experimental::wait_for_one(),
                  [&](std::array<std::size_t, 2> order, error_code, error_code second) {
                    if (order[0] == 0) loser = second;
                  });
  t.advance(3);
  context.restart();
  context.run();
  REQUIRE(loser.has_value());
  CHECK(*loser == asio::error::operation_aborted);
  CHECK(t.pending() == 0);
}

TEST_CASE("async_wait: a completion queued on an executor that is destroyed frees the wait and its handler", "[gpu]") {
  test::test_timeline t;
  auto held_by_handler = std::make_shared<int>(0);
  bool handled = false;
  {
    asio::io_context never_run;
    ferrum::gpu::async_wait(never_run.get_executor(), t, 1,
                            [&handled, held_by_handler](error_code) { handled = true; });
    t.advance(1);  // the completion is queued on `never_run`
    CHECK(held_by_handler.use_count() == 2);
  }
  CHECK_FALSE(handled);
  CHECK(held_by_handler.use_count() == 1);  // the handler went with the operation
  CHECK(t.pending() == 0);
}
