#include "null_device_support.hpp"

#include "ferrum/gpu/builtin_kernels.hpp"

#include <atomic>
#include <map>
#include <thread>

using namespace std::chrono_literals;
using ferrum::errc;
using ferrum::gpu::fault_kind;
using ferrum::gpu::null_device_options;
namespace builtin = ferrum::gpu::builtin;

TEST_CASE("null device: arenas are zeroed, aligned, sized and reported by name and limits", "[gpu]") {
  auto device = test::null_device();
  CHECK(device->name() == "null");
  CHECK(device->kind() == "null");
  auto arena = test::require(device->create_arena(1000));
  CHECK(arena->size() == 1000);
  CHECK(reinterpret_cast<std::uintptr_t>(arena->bytes().data()) % 64 == 0);
  CHECK(std::all_of(arena->bytes().begin(), arena->bytes().end(), [](std::byte b) { return b == std::byte{0}; }));
  CHECK(device->create_arena(0).error() == errc::invalid_arena_size);
  null_device_options small;
  small.max_arena_bytes = 64;
  CHECK(test::null_device(small)->create_arena(65).error() == errc::invalid_arena_size);
}

TEST_CASE("null device: kernels, fills, copies and host functions run in order over the arena", "[gpu]") {
  auto device = test::null_device();
  auto arena = test::require(device->create_arena(4096));
  auto counter = test::require(device->create_arena(4));
  auto writer = test::require(device->create_kernel(builtin::write_pattern()));
  auto checker = test::require(device->create_kernel(builtin::check_pattern()));
  auto list = test::require(device->create_command_list());
  std::uint32_t seen_by_host = 0;
  auto observe = [&] { seen_by_host = test::word_at(*arena, 64 + 3); };
  const std::uint32_t seed = 0xfe44;
  const std::uint64_t value = test::submit(*device, *list, [&](ferrum::gpu::command_list& l) {
    test::require(l.fill(arena->whole(), 0xdeadbeef));
    test::require(l.dispatch(*writer, arena->range(256, 1024), {}, std::array{seed}));
    test::require(l.host(ferrum::gpu::host_call(observe)));
    test::require(l.copy(arena->range(256, 1024), arena->range(2048, 1024)));
    test::require(l.dispatch(*checker, arena->range(2048, 1024), counter->whole(), std::array{seed}));
    test::require(l.fill(arena->range(2048, 8), 0));
    test::require(l.dispatch(*checker, arena->range(2048, 1024), counter->whole(), std::array{seed}));
  });
  CHECK(list->size() == 7);
  REQUIRE(test::wait_for(device->queue().timeline(), value) == boost::system::error_code{});
  CHECK(test::word_at(*arena, 0) == 0xdeadbeef);
  CHECK(test::word_at(*arena, 63) == 0xdeadbeef);
  for (std::uint32_t i = 0; i < 256; ++i) {
    CHECK(test::word_at(*arena, 64 + i) == builtin::pattern_word(seed, i));
  }
  CHECK(test::word_at(*arena, 320) == 0xdeadbeef);
  CHECK(seen_by_host == builtin::pattern_word(seed, 3));
  CHECK(test::word_at(*counter, 0) == 2);  // the first check found nothing, the second the 2 zeroed words
}

TEST_CASE("null device: the CPU kernels cover every word of an operand of several blocks", "[gpu]") {
  // The CPU forms work through 1024-word blocks: 2500 words are two whole
  // blocks and a partial one, at a range that does not start the arena.
  constexpr std::uint32_t words = 2500;
  auto device = test::null_device();
  auto arena = test::require(device->create_arena(4 * (words + 8)));
  auto counter = test::require(device->create_arena(4));
  auto writer = test::require(device->create_kernel(builtin::write_pattern()));
  auto checker = test::require(device->create_kernel(builtin::check_pattern()));
  auto affine = test::require(device->create_kernel(builtin::affine()));
  auto list = test::require(device->create_command_list());
  const auto range = arena->range(16, 4 * words);
  const std::uint32_t seed = 7;
  const std::uint64_t value = test::submit(*device, *list, [&](ferrum::gpu::command_list& l) {
    test::require(l.fill(arena->whole(), 0xdeadbeef));
    test::require(l.dispatch(*writer, range, {}, std::array{seed}));
    test::require(l.dispatch(*checker, range, counter->whole(), std::array{seed}));
    // One word in each block differs: the first, a middle and the last.
    test::require(l.fill(arena->range(16 + 4 * 0, 4), 0));
    test::require(l.fill(arena->range(16 + 4 * 1500, 4), 0));
    test::require(l.fill(arena->range(16 + 4 * (words - 1), 4), 0));
    test::require(l.dispatch(*checker, range, counter->whole(), std::array{seed}));
    test::require(l.dispatch(*affine, range, {}, std::array{3u, 1u}));
  });
  REQUIRE(test::wait_for(device->queue().timeline(), value) == boost::system::error_code{});
  CHECK(test::word_at(*counter, 0) == 3);
  CHECK(test::word_at(*arena, 3) == 0xdeadbeef);
  CHECK(test::word_at(*arena, 4 + words) == 0xdeadbeef);
  std::uint32_t wrong = 0;
  for (std::uint32_t i = 0; i < words; ++i) {
    const bool zeroed = i == 0 || i == 1500 || i == words - 1;
    const std::uint32_t before = zeroed ? 0 : builtin::pattern_word(seed, i);
    wrong += test::word_at(*arena, 4 + i) != before * 3 + 1 ? 1u : 0u;
  }
  CHECK(wrong == 0);
}

TEST_CASE("null device: submissions run in submission order across many lists", "[gpu]") {
  auto device = test::null_device();
  auto arena = test::require(device->create_arena(64));
  auto affine = test::require(device->create_kernel(builtin::affine()));
  std::vector<std::unique_ptr<ferrum::gpu::command_list>> lists;
  std::uint32_t expected = 0;
  std::uint64_t last = 0;
  for (std::uint32_t i = 1; i <= 200; ++i) {
    lists.push_back(test::require(device->create_command_list()));
    last = test::submit(*device, *lists.back(), [&](ferrum::gpu::command_list& l) {
      test::require(l.dispatch(*affine, arena->whole(), {}, std::array{3u, i}));
    });
    expected = expected * 3 + i;
  }
  CHECK(last == 200);
  REQUIRE(test::wait_for(device->queue().timeline(), last) == boost::system::error_code{});
  for (std::size_t word = 0; word < 16; ++word) CHECK(test::word_at(*arena, word) == expected);
}

TEST_CASE("null device: faults are decided by seed and submission number alone", "[gpu]") {
  ferrum::gpu::null_fault_options options{.seed = 42, .lost = 0.01, .hang = 0.02, .delay = 0.2};
  std::map<fault_kind, int> counts;
  for (std::uint64_t s = 1; s <= 20000; ++s) {
    const auto first = ferrum::gpu::decide_fault(options, s);
    const auto again = ferrum::gpu::decide_fault(options, s);
    REQUIRE(first.has_value() == again.has_value());
    if (!first) continue;
    CHECK(first->kind == again->kind);
    CHECK(first->delay == again->delay);
    CHECK(first->delay <= options.max_delay);
    ++counts[first->kind];
  }
  // Expected 200, 400 and 4000 of 20000: each within a generous band.
  CHECK(counts[fault_kind::lost] > 120);
  CHECK(counts[fault_kind::lost] < 280);
  CHECK(counts[fault_kind::hang] > 300);
  CHECK(counts[fault_kind::hang] < 500);
  CHECK(counts[fault_kind::delay] > 3700);
  CHECK(counts[fault_kind::delay] < 4300);
  options.seed = 43;
  int differing = 0;
  for (std::uint64_t s = 1; s <= 1000; ++s) {
    differing += ferrum::gpu::decide_fault(options, s).has_value() !=
                 ferrum::gpu::decide_fault({.seed = 42, .lost = 0.01, .hang = 0.02, .delay = 0.2}, s).has_value();
  }
  CHECK(differing > 50);
}

namespace {

// The first submission number (from 1) that gets `kind` under `options`.
std::uint64_t first_with(const ferrum::gpu::null_fault_options& options, fault_kind kind) {
  for (std::uint64_t s = 1;; ++s) {
    const auto fault = ferrum::gpu::decide_fault(options, s);
    if (fault && fault->kind == kind) return s;
  }
}

// Submits `count` empty submissions; returns the last value.
std::uint64_t submit_empty(ferrum::gpu::device& device, std::uint64_t count) {
  std::uint64_t value = device.queue().last_submitted();
  for (std::uint64_t i = 0; i < count; ++i) test::require(device.queue().submit({}, ++value));
  return value;
}

}  // namespace

TEST_CASE("null device: a delay fault makes its submission late but it completes", "[gpu]") {
  null_device_options options;
  options.faults = {.seed = 1, .delay = 0.5, .max_delay = 20ms};
  const std::uint64_t delayed = first_with(options.faults, fault_kind::delay);
  auto device = test::null_device(options);
  const std::uint64_t last = submit_empty(*device, delayed);
  CHECK(test::wait_for(device->queue().timeline(), last) == boost::system::error_code{});
  CHECK(device->injected_faults().delay >= 1);
  CHECK(device->injected_faults().hang == 0);
}

TEST_CASE("null device: a hang stalls its value and every later one for hang_duration", "[gpu]") {
  null_device_options options;
  options.faults = {.seed = 3, .hang = 0.3, .hang_duration = 150ms};
  const std::uint64_t hung = first_with(options.faults, fault_kind::hang);
  auto device = test::null_device(options);
  ferrum::gpu::timeline& t = device->queue().timeline();
  const std::uint64_t last = submit_empty(*device, hung + 1);
  CHECK(test::wait_for(t, hung - 1, 5s) == boost::system::error_code{});
  CHECK(test::wait_for(t, hung, 20ms) == std::nullopt);
  CHECK(test::wait_for(t, last, 5s) == boost::system::error_code{});
  CHECK(device->injected_faults().hang >= 1);
}

TEST_CASE("null device: a hang without end fails its waits with device_shut_down when the device goes", "[gpu]") {
  null_device_options options;
  options.faults = {.seed = 5, .hang = 1.0};
  auto device = test::null_device(options);
  const std::uint64_t value = submit_empty(*device, 2);
  test::require_shut_down_fails(device, value);
}

TEST_CASE("null device: a lost fault fails pending and later waits and every later operation", "[gpu]") {
  null_device_options options;
  options.faults = {.seed = 11, .lost = 0.2};
  const std::uint64_t lost_at = first_with(options.faults, fault_kind::lost);
  auto device = test::null_device(options);
  ferrum::gpu::timeline& t = device->queue().timeline();
  auto arena = test::require(device->create_arena(64));
  auto list = test::require(device->create_command_list());
  // The worker may reach the lost submission while later ones are still
  // being submitted: those then fail with device_lost themselves.
  for (std::uint64_t value = 1; value <= lost_at + 3; ++value) {
    const auto submitted = device->queue().submit({}, value);
    if (!submitted) {
      CHECK(submitted.error() == errc::device_lost);
      CHECK(value > lost_at);
      break;
    }
  }
  const std::uint64_t last = device->queue().last_submitted();
  CHECK(test::wait_for(t, lost_at) == errc::device_lost);
  CHECK(test::wait_for(t, last + 10) == errc::device_lost);
  CHECK(device->lost());
  CHECK(device->injected_faults().lost == 1);
  CHECK(t.completed() < lost_at);
  CHECK(device->queue().submit({}, last + 1).error() == errc::device_lost);
  CHECK(device->create_arena(64).error() == errc::device_lost);
  CHECK(device->create_command_list().error() == errc::device_lost);
  CHECK(list->begin().error() == errc::device_lost);
}

TEST_CASE("null device: losing the device by hand fails what is pending", "[gpu]") {
  null_device_options options;
  options.faults = {.seed = 0, .hang = 1.0};
  auto device = test::null_device(options);
  const std::uint64_t value = submit_empty(*device, 1);
  std::promise<boost::system::error_code> done;
  ferrum::gpu::async_wait(device->queue().timeline(), value, [&](boost::system::error_code ec) { done.set_value(ec); });
  device->lose();
  auto result = done.get_future();
  REQUIRE(result.wait_for(5s) == std::future_status::ready);
  CHECK(result.get() == errc::device_lost);
}

TEST_CASE("null device: shutting down with work in flight completes every waiter", "[gpu]") {
  null_device_options options;
  options.latency = 2ms;
  auto device = test::null_device(options);
  const std::uint64_t last = submit_empty(*device, 50);
  std::atomic<int> ok{0};
  std::atomic<int> shut_down{0};
  std::vector<std::future<void>> done;
  for (std::uint64_t v = 1; v <= last; ++v) {
    auto promise = std::make_shared<std::promise<void>>();
    done.push_back(promise->get_future());
    ferrum::gpu::async_wait(device->queue().timeline(), v, [&, promise](boost::system::error_code ec) {
      (ec ? shut_down : ok).fetch_add(1);
      CHECK((!ec || ec == errc::device_shut_down));
      promise->set_value();
    });
  }
  std::this_thread::sleep_for(10ms);
  device.reset();
  for (auto& f : done) REQUIRE(f.wait_for(5s) == std::future_status::ready);
  CHECK(ok.load() + shut_down.load() == static_cast<int>(last));
  CHECK(shut_down.load() > 0);
}

TEST_CASE("null device: cancelling a wait does not cancel the GPU work behind it", "[gpu]") {
  null_device_options options;
  options.latency = 20ms;
  auto device = test::null_device(options);
  auto list = test::require(device->create_command_list());
  std::atomic<bool> ran{false};
  auto mark = [&] { ran.store(true); };
  const std::uint64_t value = test::submit(
      *device, *list, [&](ferrum::gpu::command_list& l) { test::require(l.host(ferrum::gpu::host_call(mark))); });
  boost::asio::io_context context;
  boost::asio::cancellation_signal signal;
  std::optional<boost::system::error_code> result;
  ferrum::gpu::async_wait(
      device->queue().timeline(), value,
      boost::asio::bind_cancellation_slot(
          signal.slot(), boost::asio::bind_executor(context, [&](boost::system::error_code ec) { result = ec; })));
  signal.emit(boost::asio::cancellation_type::terminal);
  context.run();
  CHECK(result == boost::asio::error::operation_aborted);
  CHECK(test::wait_for(device->queue().timeline(), value) == boost::system::error_code{});
  CHECK(ran.load());
}

TEST_CASE("null device: options outside their range are rejected", "[gpu]") {
  const auto rejected = [](auto change) {
    null_device_options options;
    change(options);
    return ferrum::gpu::null_device::create(options).error() == errc::invalid_device_option;
  };
  CHECK(rejected([](null_device_options& o) { o.faults.lost = 1.5; }));
  CHECK(rejected([](null_device_options& o) { o.faults.delay = -0.1; }));
  CHECK(rejected([](null_device_options& o) { o.faults.hang = std::nan(""); }));
  CHECK(rejected([](null_device_options& o) { o.faults.max_delay = -1us; }));
  CHECK(rejected([](null_device_options& o) { o.latency = -1us; }));
  CHECK(rejected([](null_device_options& o) { o.max_arena_bytes = 0; }));
  CHECK(ferrum::gpu::null_device::create({}).has_value());
}

TEST_CASE("null device: with inline_completion a submission has run and is reached when submit returns", "[gpu]") {
  null_device_options options;
  options.inline_completion = true;
  auto device = test::null_device(options);
  auto arena = test::require(device->create_arena(256));
  auto list = test::require(device->create_command_list());
  std::thread::id host_thread;
  std::uint32_t seen_by_host = 0;
  int host_calls = 0;
  auto observe = [&] {
    host_thread = std::this_thread::get_id();
    seen_by_host = test::word_at(*arena, 0);
    ++host_calls;
  };
  const std::uint64_t value = test::submit(*device, *list, [&](ferrum::gpu::command_list& l) {
    test::require(l.fill(arena->range(0, 128), 0xfe44));
    test::require(l.host(ferrum::gpu::host_call(observe)));
    test::require(l.copy(arena->range(0, 128), arena->range(128, 128)));
  });
  // Nothing is awaited: submit itself ran the commands, on this thread.
  CHECK(device->queue().timeline().completed() == value);
  CHECK(host_thread == std::this_thread::get_id());
  CHECK(seen_by_host == 0xfe44);
  CHECK(test::word_at(*arena, 63) == 0xfe44);
  CHECK(test::word_at(*arena, 32) == 0xfe44);
  // The list is submitted again as it is, with submit_next: the copy runs
  // again over what the host wrote since.
  test::set_word(*arena, 32, 7);
  ferrum::gpu::command_list* lists[] = {list.get()};
  const std::uint64_t next = test::require(device->queue().submit_next(lists));
  CHECK(next == value + 1);
  CHECK(device->queue().timeline().reached(next));
  CHECK(host_calls == 2);
  CHECK(test::word_at(*arena, 32) == 0xfe44);
  CHECK(test::wait_for(device->queue().timeline(), next) == boost::system::error_code{});
}

TEST_CASE("null device: with inline_completion a lost fault loses the device inside submit", "[gpu]") {
  null_device_options options;
  options.inline_completion = true;
  options.faults = {.seed = 11, .lost = 0.2};
  const std::uint64_t lost_at = first_with(options.faults, fault_kind::lost);
  auto device = test::null_device(options);
  ferrum::gpu::timeline& t = device->queue().timeline();
  // The lost submission is accepted, as when the worker reaches it later.
  CHECK(submit_empty(*device, lost_at) == lost_at);
  CHECK(t.completed() == lost_at - 1);
  CHECK(device->lost());
  CHECK(device->injected_faults().lost == 1);
  CHECK(test::wait_for(t, lost_at) == errc::device_lost);
  CHECK(device->queue().submit({}, lost_at + 1).error() == errc::device_lost);
}

TEST_CASE("null device: inline_completion refuses the options that would pause the submitter", "[gpu]") {
  const auto refusal = [](auto change) {
    null_device_options options;
    options.inline_completion = true;
    change(options);
    auto device = ferrum::gpu::null_device::create(options);
    REQUIRE_FALSE(device.has_value());
    CHECK(device.error() == errc::invalid_device_option);
    return device.error().what();
  };
  CHECK_THAT(refusal([](null_device_options& o) { o.latency = 1us; }),
             Catch::Contains("inline_completion cannot be combined with latency"));
  CHECK_THAT(refusal([](null_device_options& o) { o.faults.delay = 0.1; }), Catch::EndsWith("with faults.delay"));
  CHECK_THAT(refusal([](null_device_options& o) {
               o.latency = 1us;
               o.faults.hang = 0.5;
             }),
             Catch::EndsWith("with latency, faults.hang"));
  // Faults that do not pause, and durations of faults that cannot occur, are
  // accepted.
  null_device_options accepted;
  accepted.inline_completion = true;
  accepted.faults = {.seed = 1, .lost = 0.5, .max_delay = 5ms, .hang_duration = 5ms};
  CHECK(ferrum::gpu::null_device::create(accepted).has_value());
}

TEST_CASE("null device: reorder_unordered runs what no barrier orders last to first, across a submission's lists",
          "[gpu]") {
  null_device_options options;
  options.reorder_unordered = true;
  auto device = test::require(ferrum::gpu::null_device::create(options));
  auto arena = test::require(device->create_arena(64));
  arena->guard();
  const std::array granted{arena->range(0, 64)};
  const auto fill_twice = [&](ferrum::gpu::list_opening second_opening) {
    auto first = test::require(device->create_command_list());
    auto second = test::require(device->create_command_list());
    first->grant(granted);
    second->grant(granted);
    test::require(first->begin(ferrum::gpu::list_opening::by_hazards));
    test::require(first->fill(granted[0], 1u));
    test::require(first->end());
    test::require(second->begin(second_opening));
    test::require(second->fill(granted[0], 2u));
    test::require(second->fill(arena->range(0, 4), 3u));
    test::require(second->end());
    ferrum::gpu::command_list* lists[] = {first.get(), second.get()};
    test::require_reached(device->queue().timeline(), test::require(device->queue().submit_next(lists)));
    return std::array{test::word_at(*arena, 0), test::word_at(*arena, 15)};
  };
  // No barrier between the lists: the second's first fill runs before the
  // first's; its second fill comes after a barrier, so last.
  CHECK(fill_twice(ferrum::gpu::list_opening::by_hazards) == std::array<std::uint32_t, 2>{3u, 1u});
  // Ordered by the second list's opening barrier: submission order.
  CHECK(fill_twice(ferrum::gpu::list_opening::barrier) == std::array<std::uint32_t, 2>{3u, 2u});
}

TEST_CASE("null device: with reorder_unordered a host function or timestamp still divides the stretches", "[gpu]") {
  null_device_options options;
  options.reorder_unordered = true;
  auto device = test::require(ferrum::gpu::null_device::create(options));
  auto arena = test::require(device->create_arena(64));
  auto stamps = test::require(device->create_timestamp_pool(1));
  std::uint32_t seen = 0;
  auto observe = [&] { seen = test::word_at(*arena, 0); };
  arena->guard();
  const std::array granted{arena->whole()};
  auto first = test::require(device->create_command_list());
  auto second = test::require(device->create_command_list());
  first->grant(granted);
  second->grant(granted);
  test::require(first->begin(ferrum::gpu::list_opening::by_hazards));
  test::require(first->fill(arena->whole(), 1u));
  test::require(first->end());
  // No barrier anywhere: the host function and the timestamp are what
  // order the fills.
  test::require(second->begin(ferrum::gpu::list_opening::by_hazards));
  test::require(second->host(ferrum::gpu::host_call(observe)));
  test::require(second->timestamp(*stamps, 0));
  test::require(second->fill(arena->range(0, 4), 2u));
  test::require(second->end());
  ferrum::gpu::command_list* lists[] = {first.get(), second.get()};
  test::require_reached(device->queue().timeline(), test::require(device->queue().submit_next(lists)));
  CHECK(first->barriers() + second->barriers() == 0);
  CHECK(seen == 1u);
  CHECK(test::word_at(*arena, 0) == 2u);
  CHECK(test::word_at(*arena, 1) == 1u);
}
