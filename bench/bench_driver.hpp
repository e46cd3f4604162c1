// bench_driver.hpp — what the scheduler benchmarks share: their command
// line ([waves] [repeats]) and a driver that keeps a window of waves in
// flight through a scheduler (each completion, on the pool, submits the next
// wave until the target is reached).
//
//   const auto args = ferrum::bench::parse_args(argc, argv, {2000, 5});
//   if (!args) return 2;                           // usage printed
//   ferrum::bench::wave_driver driver(scheduler, pool, encoder);
//   driver.run(200, window);                       // warm-up
//   const double us = driver.run(args->waves, window);
#pragma once

#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/thread_pool.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>

namespace ferrum::bench {

struct bench_args {
  std::size_t waves;
  int repeats;
};

// `[waves] [repeats]`, each defaulting to `defaults`'; prints the usage and
// gives nothing when waves is not a positive number.
inline std::optional<bench_args> parse_args(int argc, char** argv, bench_args defaults) {
  bench_args args = defaults;
  if (argc > 1) args.waves = std::strtoul(argv[1], nullptr, 10);
  if (argc > 2) args.repeats = std::max(1, std::atoi(argv[2]));
  if (args.waves == 0) {
    std::fprintf(stderr, "usage: %s [waves] [repeats]\n", argv[0]);
    return std::nullopt;
  }
  return args;
}

template <class Encoder>
class wave_driver {
 public:
  wave_driver(scheduler& s, boost::asio::thread_pool& pool, Encoder& encoder)
      : scheduler_(s), pool_(pool), encoder_(encoder) {}

  // Runs `waves` waves with `window` in flight; returns the span in µs.
  double run(std::size_t waves, std::size_t window) {
    target_ = waves;
    issued_.store(std::min(window, waves));
    {
      const std::lock_guard lock(mutex_);
      done_ = 0;
    }
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < std::min(window, waves); ++i) submit();
    std::unique_lock lock(mutex_);
    finished_.wait(lock, [&] { return done_ == target_; });
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  }

  [[nodiscard]] std::size_t failures() const noexcept { return failures_.load(); }

 private:
  void submit() {
    scheduler_.async_submit(request_, encoder_,
                            boost::asio::bind_executor(pool_, [this](boost::system::error_code ec, const wave_report&) {
                              completed(ec);
                            }));
  }

  void completed(boost::system::error_code ec) {
    if (ec) failures_.fetch_add(1);
    if (issued_.fetch_add(1) < target_) submit();
    // Notified under the lock: once done_ reaches the target the driver may
    // be destroyed.
    const std::lock_guard lock(mutex_);
    ++done_;
    finished_.notify_one();
  }

  scheduler& scheduler_;
  boost::asio::thread_pool& pool_;
  Encoder& encoder_;
  const wave_request request_{"step", {1, 1, 1}};
  std::size_t target_ = 0;
  std::atomic<std::size_t> issued_{0};
  std::atomic<std::size_t> failures_{0};
  std::mutex mutex_;
  std::condition_variable finished_;
  std::size_t done_ = 0;
};

}  // namespace ferrum::bench
