// The timeline and async_wait, without a device: the device side is played by
// a test timeline (test_timeline.hpp) whose advance() and fail() the tests call.
#include "test_timeline.hpp"

#include "ferrum/error.hpp"
#include "ferrum/gpu/async_wait.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

namespace asio = boost::asio;
using boost::system::error_code;
using ferrum::gpu::async_wait;
using ferrum::gpu::timeline;
using test::test_timeline;

// Only devices move a timeline: outside a device's own subclass, advance() and
// fail() cannot be called, nor a bare timeline made. (A requires-expression
// checks access where the concept is defined, here outside the class.)
template <class T>
concept can_advance = requires(T& t) {
  t.advance(std::uint64_t{5});
};
template <class T>
concept can_fail = requires(T& t, error_code ec) {
  t.fail(ec);
};
static_assert(!can_advance<timeline>, "timeline::advance must not be callable by users");
static_assert(!can_fail<timeline>, "timeline::fail must not be callable by users");
static_assert(!std::is_default_constructible_v<timeline>, "a timeline is always a device's subclass");
// The concepts are not false for every type: the test timeline, which plays
// the device, passes them.
static_assert(can_advance<test_timeline> && can_fail<test_timeline>);

TEST_CASE("timeline: a wait on a value already reached completes at once, but not inside async_wait", "[gpu]") {
  asio::io_context context;
  test_timeline t;
  t.advance(3);
  std::optional<error_code> result;
  async_wait(t, 2, asio::bind_executor(context, [&](error_code ec) { result = ec; }));
  CHECK_FALSE(result.has_value());
  CHECK(context.run() == 1);
  REQUIRE(result.has_value());
  CHECK_FALSE(*result);
}

TEST_CASE("timeline: waits complete in value order as the timeline advances, each once", "[gpu]") {
  asio::io_context context;
  test_timeline t;
  std::vector<std::uint64_t> completed;
  for (const std::uint64_t value : {5u, 1u, 3u, 3u, 2u}) {
    async_wait(t, value, asio::bind_executor(context, [&completed, &t, value](error_code ec) {
                 CHECK_FALSE(ec);
                 CHECK(t.reached(value));
                 completed.push_back(value);
               }));
  }
  CHECK(t.pending() == 5);
  CHECK(t.lowest_pending() == 1u);
  t.advance(3);
  // poll, not run: the wait on 5 keeps the context's work count while pending.
  context.poll();
  CHECK(completed == std::vector<std::uint64_t>{1, 2, 3, 3});
  CHECK(t.lowest_pending() == 5u);
  t.advance(2);  // backwards: ignored
  CHECK(t.completed() == 3);
  t.advance(9);
  CHECK(context.run() == 1);
  CHECK(completed.back() == 5);
  CHECK(t.pending() == 0);
  CHECK_FALSE(t.lowest_pending().has_value());
}

TEST_CASE("timeline: a coroutine awaits a value with use_awaitable", "[gpu]") {
  asio::io_context context;
  test_timeline t;
  std::optional<std::uint64_t> seen;
  std::exception_ptr failure;
  auto waiter = [](timeline& tl, std::uint64_t value) -> asio::awaitable<std::uint64_t> {
    co_await async_wait(tl, value, asio::use_awaitable);
    co_return tl.completed();
  };
  asio::co_spawn(context, waiter(t, 7), [&](std::exception_ptr e, std::uint64_t value) {
    failure = e;
    seen = value;
  });
  context.poll();
  CHECK_FALSE(seen.has_value());
  std::thread device([&t] { t.advance(7); });
  context.run();
  device.join();
  CHECK_FALSE(failure);
  CHECK(seen == 7u);
}

TEST_CASE("timeline: a wait can be taken as a std::future", "[gpu]") {
  test_timeline t;
  std::future<void> done = async_wait(t, 1, asio::use_future);
  CHECK(done.wait_for(std::chrono::milliseconds(1)) == std::future_status::timeout);
  t.advance(1);
  CHECK_NOTHROW(done.get());
}

TEST_CASE("timeline: many waiters on different values from several threads each complete once", "[gpu]") {
  asio::thread_pool pool(3);
  test_timeline t;
  constexpr std::uint64_t last = 400;
  constexpr int threads = 4;
  std::atomic<int> completions{0};
  std::atomic<int> errors{0};
  std::atomic<int> early{0};
  std::vector<std::thread> waiters;
  for (int w = 0; w < threads; ++w) {
    waiters.emplace_back([&, w] {
      for (std::uint64_t value = 1 + static_cast<std::uint64_t>(w); value <= last; value += threads) {
        async_wait(t, value, asio::bind_executor(pool, [&, value](error_code ec) {
                     if (ec) errors.fetch_add(1);
                     if (!t.reached(value)) early.fetch_add(1);
                     completions.fetch_add(1);
                   }));
      }
    });
  }
  for (std::uint64_t value = 1; value <= last; ++value) {
    t.advance(value);
    if (value % 50 == 0) std::this_thread::yield();
  }
  for (std::thread& w : waiters) w.join();
  pool.join();
  CHECK(completions.load() == static_cast<int>(last));
  CHECK(errors.load() == 0);
  CHECK(early.load() == 0);
  CHECK(t.pending() == 0);
}

TEST_CASE("timeline: cancelling a pending wait completes it with operation_aborted and removes it", "[gpu]") {
  asio::io_context context;
  test_timeline t;
  asio::cancellation_signal signal;
  std::optional<error_code> result;
  async_wait(
      t, 4,
      asio::bind_cancellation_slot(signal.slot(), asio::bind_executor(context, [&](error_code ec) { result = ec; })));
  CHECK(t.pending() == 1);
  signal.emit(asio::cancellation_type::terminal);
  CHECK(t.pending() == 0);
  context.run();
  REQUIRE(result.has_value());
  CHECK(*result == asio::error::operation_aborted);
  // The value itself is unaffected: a later wait still sees it reached.
  t.advance(4);
  CHECK(t.reached(4));
}

TEST_CASE("timeline: a cancellation after completion changes nothing", "[gpu]") {
  asio::io_context context;
  test_timeline t;
  asio::cancellation_signal signal;
  int calls = 0;
  std::optional<error_code> result;
  async_wait(t, 1, asio::bind_cancellation_slot(signal.slot(), asio::bind_executor(context, [&](error_code ec) {
                                                  ++calls;
                                                  result = ec;
                                                })));
  t.advance(1);
  context.run();
  signal.emit(asio::cancellation_type::terminal);
  context.restart();
  context.run();
  CHECK(calls == 1);
  CHECK_FALSE(*result);
}

TEST_CASE("timeline: a failure completes pending waits and every later one with its code", "[gpu]") {
  asio::io_context context;
  test_timeline t;
  std::vector<error_code> results;
  auto record = asio::bind_executor(context, [&](error_code ec) { results.push_back(ec); });
  async_wait(t, 1, record);
  async_wait(t, 2, record);
  t.fail(make_error_code(ferrum::errc::device_lost));
  t.fail(make_error_code(ferrum::errc::device_shut_down));  // the first failure wins
  async_wait(t, 3, record);
  context.run();
  REQUIRE(results.size() == 3);
  for (const error_code& ec : results) CHECK(ec == ferrum::errc::device_lost);
  CHECK(t.failure() == ferrum::errc::device_lost);
}

namespace {

// A bare timeline wait that counts its completions.
struct counted_wait : ferrum::gpu::timeline_wait {
  explicit counted_wait(std::uint64_t at) : timeline_wait(at, &done) {}
  static void done(timeline_wait* w, error_code) noexcept { ++static_cast<counted_wait*>(w)->completions; }
  int completions = 0;
};

// Starts `w` on `t` twice, as a caller that forgot it is pending would.
error_code start_twice(test_timeline& t, counted_wait& w) {
  REQUIRE_FALSE(t.start_wait(&w));
  return t.start_wait(&w);
}

}  // namespace

TEST_CASE("timeline: a wait started again while pending is refused with wait_already_pending", "[gpu]") {
#ifdef NDEBUG
  test_timeline t;
  counted_wait w(5);
  CHECK(start_twice(t, w) == ferrum::errc::wait_already_pending);
  // Nothing changed: linked once, completed once.
  CHECK(t.pending() == 1);
  t.advance(5);
  CHECK(w.completions == 1);
  CHECK(t.pending() == 0);
  // Once completed it may be started again.
  w.value = 7;
  CHECK_FALSE(t.start_wait(&w));
  CHECK(t.pending() == 1);
  t.advance(7);
  CHECK(w.completions == 2);
#else
  // Assertions on: the misuse stops the process where it happens. In a
  // child, so that the test sees it.
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The default action: not Catch2's handler, which reports and exits.
    (void)std::signal(SIGABRT, SIG_DFL);
    test_timeline t;
    counted_wait w(5);
    (void)start_twice(t, w);
    _exit(0);  // not reached: the assertion aborts
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
#endif
}

TEST_CASE("timeline: a wait taken back or completed is no longer pending and may start again", "[gpu]") {
  test_timeline t;
  counted_wait w(3);
  CHECK_FALSE(t.start_wait(&w));
  CHECK(t.cancel_wait(&w));
  CHECK_FALSE(t.start_wait(&w));  // taken back: not pending
  CHECK(t.pending() == 1);
  t.fail(make_error_code(ferrum::errc::device_lost));
  CHECK(w.completions == 1);
  CHECK_FALSE(t.start_wait(&w));  // failed: completes at once, again
  CHECK(w.completions == 2);
  CHECK(t.pending() == 0);
}
