// Awaiting the Vulkan device's timeline with each kind of completion token,
// from many threads at once, with cancellation and across shutdown — each
// with the queue's timeline watched alone (lavapipe's one queue) and as on
// a device with several queues (vulkan_device_options::wait_any).
#include "ferrum/error.hpp"
#include "ferrum/gpu/async_wait.hpp"
#include "ferrum/gpu/builtin_kernels.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include "vulkan_test_support.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <exception>
#include <optional>
#include <thread>
#include <tuple>
#include <vector>

namespace asio = boost::asio;
using boost::system::error_code;
using ferrum::errc;
using ferrum::gpu::async_wait;
using namespace vulkan_test;

namespace {

// Writes the pattern of `seed` over `a` in one submission; returns its value.
std::uint64_t write_pattern(ferrum::gpu::device& device, ferrum::gpu::command_list& list,
                            const ferrum::gpu::kernel& writer, const ferrum::gpu::arena& a, std::uint32_t seed) {
  const std::array<std::uint32_t, 1> push{seed};
  return submit(device, list, [&](ferrum::gpu::command_list& l) { require(l.dispatch(writer, a.whole(), {}, push)); });
}

bool has_pattern(const ferrum::gpu::arena& a, std::uint32_t seed) {
  for (std::size_t i = 0; i < a.size() / 4; ++i) {
    if (word_at(a, i) != ferrum::gpu::builtin::pattern_word(seed, static_cast<std::uint32_t>(i))) return false;
  }
  return true;
}

// A coroutine that awaits one value; parameters by value, nothing captured.
asio::awaitable<error_code> await_value(ferrum::gpu::timeline* t, std::uint64_t value) {
  auto [ec] = co_await async_wait(*t, value, asio::as_tuple(asio::use_awaitable));
  co_return ec;
}

// Runs await_value on `context` and returns its outcome (nullopt: it did not
// finish). The completion handler owns the result: nothing is detached.
std::optional<error_code> co_wait(asio::io_context& context, ferrum::gpu::timeline& t, std::uint64_t value) {
  std::optional<error_code> outcome;
  bool threw = false;
  asio::co_spawn(context, await_value(&t, value), [&](std::exception_ptr e, error_code ec) {
    threw = e != nullptr;
    outcome = ec;
  });
  context.restart();
  context.run();
  CHECK_FALSE(threw);
  return outcome;
}

// Opens `s` with the fence waiter in each of its two ways (a section each).
bool open_both_ways(session& s) {
  ferrum::gpu::vulkan_device_options options;
  options.wait_any = GENERATE(false, true);
  INFO("wait_any " << options.wait_any);
  return s.open(options);
}

}  // namespace

TEST_CASE("vulkan: async_wait completes a future once the GPU reached the value", "[vulkan]") {
  session s;
  if (!open_both_ways(s)) return;
  ferrum::gpu::device& device = *s.device;
  auto arena = require(device.create_arena(4096));
  auto writer = require(device.create_kernel(ferrum::gpu::builtin::write_pattern()));
  auto list = require(device.create_command_list());
  const std::uint64_t value = write_pattern(device, *list, *writer, *arena, 11);
  std::future<void> done = async_wait(device.queue().timeline(), value, asio::use_future);
  REQUIRE(done.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  CHECK_NOTHROW(done.get());
  CHECK(device.queue().timeline().reached(value));
  CHECK(has_pattern(*arena, 11));
  list.reset();
  writer.reset();
  arena.reset();
  s.finish();
}

TEST_CASE("vulkan: async_wait runs a callback on its io_context, also for a value already reached", "[vulkan]") {
  session s;
  if (!open_both_ways(s)) return;
  ferrum::gpu::device& device = *s.device;
  ferrum::gpu::timeline& timeline = device.queue().timeline();
  auto arena = require(device.create_arena(4096));
  auto writer = require(device.create_kernel(ferrum::gpu::builtin::write_pattern()));
  auto list = require(device.create_command_list());
  asio::io_context context;
  const auto this_thread = std::this_thread::get_id();

  const std::uint64_t value = write_pattern(device, *list, *writer, *arena, 12);
  std::optional<error_code> first;
  bool on_runner = false;
  async_wait(timeline, value, asio::bind_executor(context, [&](error_code ec) {
               first = ec;
               on_runner = std::this_thread::get_id() == this_thread;
             }));
  // The pending wait keeps the context's work count: run() returns once it ran.
  context.run();
  REQUIRE(first.has_value());
  CHECK_FALSE(*first);
  CHECK(on_runner);
  CHECK(has_pattern(*arena, 12));

  // Reached already: completed through the context, never inside async_wait.
  std::optional<error_code> second;
  async_wait(timeline, value, asio::bind_executor(context, [&](error_code ec) { second = ec; }));
  CHECK_FALSE(second.has_value());
  context.restart();
  CHECK(context.run() == 1);
  REQUIRE(second.has_value());
  CHECK_FALSE(*second);
  list.reset();
  writer.reset();
  arena.reset();
  s.finish();
}

TEST_CASE("vulkan: a coroutine co_awaits the timeline, also for a value already reached", "[vulkan]") {
  session s;
  if (!open_both_ways(s)) return;
  ferrum::gpu::device& device = *s.device;
  auto arena = require(device.create_arena(4096));
  auto writer = require(device.create_kernel(ferrum::gpu::builtin::write_pattern()));
  auto list = require(device.create_command_list());
  asio::io_context context;

  const std::uint64_t value = write_pattern(device, *list, *writer, *arena, 13);
  const std::optional<error_code> pending = co_wait(context, device.queue().timeline(), value);
  REQUIRE(pending.has_value());
  CHECK_FALSE(*pending);
  CHECK(has_pattern(*arena, 13));

  const std::optional<error_code> reached = co_wait(context, device.queue().timeline(), value);
  REQUIRE(reached.has_value());
  CHECK_FALSE(*reached);
  list.reset();
  writer.reset();
  arena.reset();
  s.finish();
}

TEST_CASE("vulkan: many waiters on different values from several threads all complete", "[vulkan]") {
  session s;
  if (!open_both_ways(s)) return;
  ferrum::gpu::device& device = *s.device;
  ferrum::gpu::timeline& timeline = device.queue().timeline();
  constexpr std::uint64_t values = 24;
  constexpr int threads = 4;
  constexpr int waits_per_thread = 40;
  auto arena = require(device.create_arena(4096));
  std::vector<std::unique_ptr<ferrum::gpu::command_list>> lists;
  for (std::uint64_t v = 0; v < values; ++v) lists.push_back(require(device.create_command_list()));

  asio::thread_pool pool(2);
  std::atomic<int> succeeded{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> waiters;
  for (int t = 0; t < threads; ++t) {
    waiters.emplace_back([&, t] {
      for (int i = 0; i < waits_per_thread; ++i) {
        const std::uint64_t value = static_cast<std::uint64_t>(t * 7 + i * 5) % values + 1;
        async_wait(timeline, value, asio::bind_executor(pool, [&succeeded, &failed](error_code ec) {
                     (ec ? failed : succeeded).fetch_add(1);
                   }));
      }
    });
  }
  // Submissions race the waits: some values are reached before their
  // waits start, some after.
  for (std::uint64_t v = 1; v <= values; ++v) {
    ferrum::gpu::command_list& list = *lists[v - 1];
    require(list.begin());
    require(list.fill(arena->range((v % 16) * 256, 256), static_cast<std::uint32_t>(v)));
    require(list.end());
    ferrum::gpu::command_list* one[] = {&list};
    require(device.queue().submit(one, v));
  }
  for (std::thread& w : waiters) w.join();
  constexpr int total = threads * waits_per_thread;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (succeeded.load() + failed.load() < total && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(succeeded.load() == total);
  CHECK(failed.load() == 0);
  CHECK(timeline.pending() == 0);
  lists.clear();
  arena.reset();
  s.finish();
  pool.join();
}

TEST_CASE("vulkan: cancelling a pending wait gives operation_aborted and the GPU work still completes", "[vulkan]") {
  session s;
  if (!open_both_ways(s)) return;
  ferrum::gpu::device& device = *s.device;
  ferrum::gpu::timeline& timeline = device.queue().timeline();
  auto arena = require(device.create_arena(4096));
  auto writer = require(device.create_kernel(ferrum::gpu::builtin::write_pattern()));
  auto list = require(device.create_command_list());
  asio::io_context context;
  asio::cancellation_signal cancel;

  // Awaited before it is submitted, so the wait is certainly pending when
  // cancelled.
  std::optional<error_code> outcome;
  async_wait(
      timeline, 1,
      asio::bind_cancellation_slot(cancel.slot(), asio::bind_executor(context, [&](error_code ec) { outcome = ec; })));
  CHECK(timeline.pending() == 1);
  cancel.emit(asio::cancellation_type::terminal);
  context.run();
  REQUIRE(outcome.has_value());
  CHECK(*outcome == asio::error::operation_aborted);
  CHECK(timeline.pending() == 0);

  const std::uint64_t value = write_pattern(device, *list, *writer, *arena, 14);
  REQUIRE(value == 1);
  require_reached(timeline, value);
  CHECK(has_pattern(*arena, 14));
  list.reset();
  writer.reset();
  arena.reset();
  s.finish();
}

TEST_CASE("vulkan: a wait on a value never submitted completes with device_shut_down", "[vulkan]") {
  session s;
  if (!open_both_ways(s)) return;
  ferrum::gpu::device& device = *s.device;
  asio::io_context context;
  require(device.queue().submit({}, 1));
  std::optional<error_code> reached;
  std::optional<error_code> never;
  async_wait(device.queue().timeline(), 1, asio::bind_executor(context, [&](error_code ec) { reached = ec; }));
  async_wait(device.queue().timeline(), 2, asio::bind_executor(context, [&](error_code ec) { never = ec; }));
  // Destroying the device waits for value 1 and fails the wait on 2.
  s.finish();
  context.run();
  REQUIRE(reached.has_value());
  CHECK_FALSE(*reached);
  REQUIRE(never.has_value());
  CHECK(*never == errc::device_shut_down);
}
