// wave_outcome.hpp — one wave submitted from a test, and its outcome
// awaited with a time limit (scheduler tests, on any device).
#pragma once

#include "ferrum/scheduler/scheduler.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <memory>

namespace sched_test {

struct outcome {
  boost::system::error_code ec;
  ferrum::wave_report report;
};

// Submits one wave and returns a future of its outcome.
template <class Encoder>
std::future<outcome> submit(ferrum::scheduler& s, Encoder& encode, ferrum::wave_request request = {"step", {1, 1, 1}}) {
  auto done = std::make_shared<std::promise<outcome>>();
  auto result = done->get_future();
  s.async_submit(request, encode, [done](boost::system::error_code ec, ferrum::wave_report report) {
    done->set_value({ec, std::move(report)});
  });
  return result;
}

// The outcome, once the wave completed within `limit`.
inline outcome get(std::future<outcome>& f, std::chrono::seconds limit = std::chrono::seconds(20)) {
  REQUIRE(f.wait_for(limit) == std::future_status::ready);
  return f.get();
}

}  // namespace sched_test
