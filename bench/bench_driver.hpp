// bench_driver.hpp — what the scheduler benchmarks share: their command
// line ([options] [waves] [repeats]), the process's CPU time, the end of a
// run that only its last
// completion signals, and a driver that keeps a window of waves in flight
// through a scheduler (each completion, on the pool, submits the next wave
// until the target is reached).
//
//   const auto args = ferrum::bench::parse_args(argc, argv, {2000, 5}, {"--inline"});
//   if (!args) return 2;                           // usage printed
//   const bool inline_device = args->has("--inline");
//   ferrum::bench::wave_driver driver(scheduler, pool, encoder);
//   driver.run(200, window);                       // warm-up
//   const double us = driver.run(args->waves, window);
#pragma once

#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/thread_pool.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ferrum::bench {

// The middle value of `v` (the upper one of an even count); v not empty.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct bench_args {
  std::size_t waves;
  int repeats;
  // The options given, among those the benchmark accepts: flags, and
  // options with a value (`--name value`) with their value.
  std::vector<std::string_view> options = {};
  std::vector<std::pair<std::string_view, std::string_view>> values = {};

  [[nodiscard]] bool has(std::string_view option) const noexcept {
    return std::find(options.begin(), options.end(), option) != options.end();
  }
  // The value of `option` (the last one given), if given.
  [[nodiscard]] std::optional<std::string_view> value(std::string_view option) const noexcept {
    for (auto v = values.rbegin(); v != values.rend(); ++v)
      if (v->first == option) return v->second;
    return std::nullopt;
  }
};

// `[options] [waves] [repeats]`: waves and repeats default to `defaults`',
// options (arguments starting with `--`, anywhere) are the flags of
// `accepted` and the options of `valued`, each followed by its value.
// Prints the usage and gives nothing for an unknown option, a valued option
// without its value, or when waves is not a positive number.
inline std::optional<bench_args> parse_args(int argc, char** argv, bench_args defaults,
                                            std::initializer_list<std::string_view> accepted = {},
                                            std::initializer_list<std::string_view> valued = {}) {
  const auto among = [](std::initializer_list<std::string_view> list, std::string_view arg) {
    return std::find(list.begin(), list.end(), arg) != list.end();
  };
  bench_args args = defaults;
  bool valid = true;
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (among(valued, arg)) {
      valid = valid && i + 1 < argc;
      if (i + 1 < argc) args.values.emplace_back(arg, argv[++i]);
    } else if (arg.starts_with("--")) {
      valid = valid && among(accepted, arg);
      args.options.push_back(arg);
    } else if (++positional == 1) {
      args.waves = std::strtoul(argv[i], nullptr, 10);
    } else if (positional == 2) {
      args.repeats = std::max(1, std::atoi(argv[i]));
    }
  }
  if (!valid || args.waves == 0) {
    std::string usage;
    for (const std::string_view option : valued) usage.append("[").append(option).append(" V] ");
    for (const std::string_view option : accepted) usage.append("[").append(option).append("] ");
    std::fprintf(stderr, "usage: %s %s[waves] [repeats]\n", argv[0], usage.c_str());
    return std::nullopt;
  }
  return args;
}

// `--device null|vulkan` of `args` (null when not given) into `vulkan`;
// false for another device.
[[nodiscard]] inline bool device_option(const bench_args& args, bool& vulkan) {
  const std::string_view kind = args.value("--device").value_or("null");
  vulkan = kind == "vulkan";
  return kind == "null" || vulkan;
}

// The number given to `option` of `args`, if any, into `value`; false when
// it is not a positive whole number.
template <class Number>
[[nodiscard]] bool positive_option(const bench_args& args, std::string_view option, Number& value) {
  const std::optional<std::string_view> text = args.value(option);
  if (!text) return true;
  value = static_cast<Number>(std::strtoull(std::string(*text).c_str(), nullptr, 10));
  return value > 0;
}

// The CPU time of every thread of the process so far (getrusage user +
// system), in microseconds.
inline double process_cpu_us() noexcept {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto us = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec); };
  return us(usage.ru_utime) + us(usage.ru_stime);
}

// The end of a run of `count` completions: only the last one wakes the
// thread that waits, so that thread sleeps through the run instead of being
// woken per completion (a wake-up and a context switch per wave, on the cores
// the pool runs on).
class run_end {
 public:
  void reset(std::size_t count) {
    remaining_.store(count);
    const std::lock_guard lock(mutex_);
    ended_ = count == 0;
  }

  void count_down() noexcept {
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    // Notified under the lock: once it sees the end, the waiter may destroy
    // this.
    const std::lock_guard lock(mutex_);
    ended_ = true;
    ended_signal_.notify_one();
  }

  void wait() {
    std::unique_lock lock(mutex_);
    ended_signal_.wait(lock, [&] { return ended_; });
  }

 private:
  std::atomic<std::size_t> remaining_{0};
  std::mutex mutex_;
  std::condition_variable ended_signal_;
  bool ended_ = true;
};

template <class Encoder>
class wave_driver {
 public:
  // Every wave asks for `request` (its bucket class must outlive the driver).
  wave_driver(scheduler& s, boost::asio::thread_pool& pool, Encoder& encoder,
              wave_request request = {"step", {1, 1, 1}})
      : scheduler_(s), pool_(pool), encoder_(encoder), request_(request) {}

  // Runs `waves` waves with `window` in flight; returns the span in µs.
  double run(std::size_t waves, std::size_t window) {
    target_ = waves;
    issued_.store(std::min(window, waves));
    end_.reset(waves);
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < std::min(window, waves); ++i) submit();
    end_.wait();
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  }

  [[nodiscard]] std::size_t failures() const noexcept { return failures_.load(); }

 private:
  void submit() {
    scheduler_.async_submit(
        request_, encoder_,
        boost::asio::bind_executor(pool_, [this](boost::system::error_code ec, const wave_report&) { completed(ec); }));
  }

  void completed(boost::system::error_code ec) {
    if (ec) failures_.fetch_add(1);
    if (issued_.fetch_add(1) < target_) submit();
    // Last: after the run's last count-down the driver may be reused or
    // destroyed.
    end_.count_down();
  }

  scheduler& scheduler_;
  boost::asio::thread_pool& pool_;
  Encoder& encoder_;
  const wave_request request_;
  std::size_t target_ = 0;
  std::atomic<std::size_t> issued_{0};
  std::atomic<std::size_t> failures_{0};
  run_end end_;
};

}  // namespace ferrum::bench
