// bench_driver.hpp — keeps a window of waves in flight through a scheduler,
// for the benchmarks: each completion (on the pool) submits the next wave
// until the target is reached.
//
//   ferrum::bench::wave_driver driver(scheduler, pool, encoder);
//   driver.run(200, window);                       // warm-up
//   const double us = driver.run(2000, window);    // timed
#pragma once

#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/thread_pool.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace ferrum::bench {

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
