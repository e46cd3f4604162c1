// Polling for a condition that another thread makes true, with a bound.
//
//   REQUIRE(test_support::eventually([&] { return pool.counts().free == 2; }));
#pragma once

#include <chrono>
#include <thread>

namespace test_support {

// Polls `condition` every millisecond for up to `limit`; whether it came true.
template <class Condition>
bool eventually(Condition condition, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace test_support
