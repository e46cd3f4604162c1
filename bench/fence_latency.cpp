// fence_latency — fence wake-up latency: from the timeline reaching a value to
// the coroutine that awaits it resuming, p50/p99/max.
//
// * null device: the submission's last command is a host function that
//   sleeps a little (so the coroutine is parked, as in a frame loop) and then
//   stamps the time; the worker advances the timeline right after it.
// * Vulkan (lavapipe, or a GPU when present): a thread spinning on
//   vkGetSemaphoreCounterValue stamps when the GPU's counter reaches the value;
//   the submission is a small compute dispatch. The spinner takes a core, so
//   on a 2-core machine the figure includes some contention.
// * baseline: the same hand-off without ferrum — one thread stamps and
//   notifies a std::condition_variable that another thread sleeps on: the
//   cost of waking a parked thread, which any waiter that parks pays.
//
//   ferrum_bench_fence_latency [samples]      # default 2000
#include "ferrum/gpu/async_wait.hpp"
#include "ferrum/gpu/builtin_kernels.hpp"
#include "ferrum/gpu/null_device.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct summary {
  double p50 = 0;
  double p99 = 0;
  double max = 0;
};

summary summarize(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  const auto at = [&](double q) { return us[static_cast<std::size_t>(q * static_cast<double>(us.size() - 1))]; };
  return {at(0.50), at(0.99), us.back()};
}

double micros(clock_type::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

void print(const char* what, const summary& s) { std::printf("%-34s %9.1f %9.1f %9.1f\n", what, s.p50, s.p99, s.max); }

// Runs `samples` rounds of: submit (via `submit`, which returns the value),
// co_await the value, and record now - reached_at() once resumed.
template <class Submit, class ReachedAt>
std::vector<double> measure(ferrum::gpu::timeline& t, int samples, Submit submit, ReachedAt reached_at) {
  asio::io_context context;
  std::vector<double> latencies;
  latencies.reserve(static_cast<std::size_t>(samples));
  auto loop = [](ferrum::gpu::timeline& tl, int n, Submit s, ReachedAt r,
                 std::vector<double>& out) -> asio::awaitable<void> {
    for (int i = 0; i < n; ++i) {
      const std::uint64_t value = s();
      co_await ferrum::gpu::async_wait(tl, value, asio::use_awaitable);
      const clock_type::time_point resumed = clock_type::now();
      out.push_back(micros(resumed - r(value)));
    }
  };
  std::exception_ptr failure;
  asio::co_spawn(context, loop(t, samples, submit, reached_at, latencies), [&](std::exception_ptr e) { failure = e; });
  context.run();
  if (failure) std::rethrow_exception(failure);
  return latencies;
}

std::optional<summary> null_device_latency(int samples) {
  auto device = ferrum::gpu::null_device::create({});
  if (!device) return std::nullopt;
  ferrum::gpu::device& d = **device;
  auto list = d.create_command_list().value();
  clock_type::time_point reached;
  auto stamp = [&reached] {
    std::this_thread::sleep_for(200us);
    reached = clock_type::now();
  };
  list->begin().value();
  list->host(ferrum::gpu::host_call(stamp)).value();
  list->end().value();
  ferrum::gpu::command_list* lists[] = {list.get()};
  auto submit = [&] {
    const std::uint64_t value = d.queue().last_submitted() + 1;
    d.queue().submit(lists, value).value();  // the recorded list, replayed
    return value;
  };
  return summarize(measure(d.queue().timeline(), samples, submit, [&](std::uint64_t) { return reached; }));
}

std::optional<summary> vulkan_latency(int samples) {
  auto device = ferrum::gpu::create_vulkan_device({});
  if (!device) {
    std::printf("%-34s skipped: %s\n", "vulkan", device.error().what().c_str());
    return std::nullopt;
  }
  ferrum::gpu::device& d = **device;
  const ferrum::gpu::vulkan_native_handles native = *ferrum::gpu::native_handles(d);
  std::printf("vulkan device: %s\n", d.name().c_str());
  auto arena = d.create_arena(1 << 20).value();
  auto writer = d.create_kernel(ferrum::gpu::builtin::write_pattern()).value();
  auto list = d.create_command_list().value();
  list->begin().value();
  list->dispatch(*writer, arena->whole(), {}, std::array<std::uint32_t, 1>{7}).value();
  list->end().value();
  ferrum::gpu::command_list* lists[] = {list.get()};

  // The spinner stamps when the counter reaches each value it is given.
  std::atomic<std::uint64_t> watched{0};
  std::atomic<bool> stop{false};
  std::atomic<clock_type::rep> reached_ticks{0};
  std::atomic<std::uint64_t> reached_value{0};
  std::thread spinner([&] {
    while (!stop.load(std::memory_order_acquire)) {
      const std::uint64_t want = watched.load(std::memory_order_acquire);
      if (want == 0 || reached_value.load(std::memory_order_relaxed) == want) continue;
      std::uint64_t counter = 0;
      if (vkGetSemaphoreCounterValue(native.device, native.timeline, &counter) != VK_SUCCESS) break;
      if (counter >= want) {
        reached_ticks.store(clock_type::now().time_since_epoch().count(), std::memory_order_relaxed);
        reached_value.store(want, std::memory_order_release);
      }
    }
  });
  auto submit = [&] {
    const std::uint64_t value = d.queue().last_submitted() + 1;
    watched.store(value, std::memory_order_release);
    d.queue().submit(lists, value).value();
    return value;
  };
  auto reached_at = [&](std::uint64_t value) {
    // The resumed coroutine may beat the spinner's stamp by a hair.
    while (reached_value.load(std::memory_order_acquire) != value) std::this_thread::yield();
    return clock_type::time_point(clock_type::duration(reached_ticks.load(std::memory_order_relaxed)));
  };
  std::vector<double> latencies = measure(d.queue().timeline(), samples, submit, reached_at);
  stop.store(true, std::memory_order_release);
  spinner.join();
  return summarize(std::move(latencies));
}

summary condition_variable_baseline(int samples) {
  std::mutex mutex;
  std::condition_variable cv;
  int round = 0;
  clock_type::time_point stamped;
  std::vector<double> latencies;
  std::thread notifier([&] {
    for (int i = 1; i <= samples; ++i) {
      std::this_thread::sleep_for(200us);
      {
        const std::lock_guard lock(mutex);
        round = i;
        stamped = clock_type::now();
      }
      cv.notify_one();
    }
  });
  for (int i = 1; i <= samples; ++i) {
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return round >= i; });
    latencies.push_back(micros(clock_type::now() - stamped));
  }
  notifier.join();
  return summarize(std::move(latencies));
}

}  // namespace

int main(int argc, char** argv) {
  const int samples = argc > 1 ? std::max(10, std::atoi(argv[1])) : 2000;
  std::printf("fence wake-up latency, %d samples, microseconds\n", samples);
  std::printf("%-34s %9s %9s %9s\n", "", "p50", "p99", "max");
  const summary baseline = condition_variable_baseline(samples);
  print("baseline: condition_variable wake", baseline);
  if (const auto null = null_device_latency(samples)) {
    print("null device -> coroutine", *null);
    std::printf("%-34s %9.2f %9.2f\n", "  ratio to baseline", null->p50 / baseline.p50, null->p99 / baseline.p99);
  }
  if (const auto vulkan = vulkan_latency(samples)) {
    print("vulkan timeline -> coroutine", *vulkan);
    std::printf("%-34s %9.2f %9.2f\n", "  ratio to baseline", vulkan->p50 / baseline.p50, vulkan->p99 / baseline.p99);
  }
  return 0;
}
