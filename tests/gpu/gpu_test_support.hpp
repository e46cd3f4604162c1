// Helpers for tests of any device: unwrapping results, waiting with a time
// limit, recording and submitting one list, reading arena words, holding a
// queue's worker until the test lets it go.
#pragma once

#include "test_namespace.hpp"

#include "ferrum/gpu/async_wait.hpp"
#include "ferrum/gpu/device.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <span>

namespace ferrum::test {

template <class T>
T require(ferrum::result<T> r) {
  if (!r) FAIL(r.error().what());
  return std::move(*r);
}

inline void require(ferrum::result<void> r) {
  if (!r) FAIL(r.error().what());
}

// The outcome of waiting for `value` up to `limit`; nullopt when the wait did
// not complete in time.
inline std::optional<boost::system::error_code> wait_for(ferrum::gpu::timeline& t, std::uint64_t value,
                                                         std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  // Shared: a wait that outlives the limit completes later, into the promise.
  auto done = std::make_shared<std::promise<boost::system::error_code>>();
  std::future<boost::system::error_code> result = done->get_future();
  ferrum::gpu::async_wait(t, value, [done](boost::system::error_code ec) { done->set_value(ec); });
  if (result.wait_for(limit) != std::future_status::ready) return std::nullopt;
  return result.get();
}

// Checks that `value`, which the device's compute queue will not reach,
// is still pending after 30 ms and that destroying the device then fails
// its wait with device_shut_down.
template <class Device>
void require_shut_down_fails(std::unique_ptr<Device>& device, std::uint64_t value) {
  using namespace std::chrono_literals;
  std::promise<boost::system::error_code> done;
  ferrum::gpu::async_wait(device->queue().timeline(), value, [&](boost::system::error_code ec) { done.set_value(ec); });
  auto result = done.get_future();
  CHECK(result.wait_for(30ms) == std::future_status::timeout);
  device.reset();
  REQUIRE(result.wait_for(5s) == std::future_status::ready);
  CHECK(result.get() == errc::device_shut_down);
}

inline void require_reached(ferrum::gpu::timeline& t, std::uint64_t value) {
  const std::optional<boost::system::error_code> ec = wait_for(t, value);
  REQUIRE(ec.has_value());
  INFO(ec->message());
  REQUIRE_FALSE(*ec);
}

// Submits `list` as it is with the queue's next value; returns that value.
inline std::uint64_t resubmit(ferrum::gpu::device& device, ferrum::gpu::command_list& list) {
  const std::uint64_t value = device.queue().last_submitted() + 1;
  ferrum::gpu::command_list* lists[] = {&list};
  require(device.queue().submit(lists, value));
  return value;
}

// Records `commands` into `list` and submits it with the queue's next value;
// returns that value.
template <class Record>
std::uint64_t submit(ferrum::gpu::device& device, ferrum::gpu::command_list& list, Record commands) {
  require(list.begin());
  commands(list);
  require(list.end());
  return resubmit(device, list);
}

// Records `commands` into `list` and submits it to `q` with the queue's next
// value, after `waits`; returns that value.
template <class Record>
std::uint64_t submit_on(ferrum::gpu::queue& q, ferrum::gpu::command_list& list, Record commands,
                        std::span<const ferrum::gpu::queue_wait> waits = {}) {
  require(list.begin());
  commands(list);
  require(list.end());
  ferrum::gpu::command_list* lists[] = {&list};
  return require(q.submit_next(lists, waits));
}

inline std::uint32_t word_at(const ferrum::gpu::arena& a, std::size_t word) {
  std::uint32_t value = 0;
  std::memcpy(&value, a.bytes().data() + word * 4, 4);
  return value;
}

inline void set_word(ferrum::gpu::arena& a, std::size_t word, std::uint32_t value) {
  std::memcpy(a.bytes().data() + word * 4, &value, 4);
}

// Holds a queue's worker inside a host function until the test opens it: work
// submitted after the gate waits, so a test can order what runs first
// deterministically.
class host_gate {
 public:
  void hold() {
    std::unique_lock lock(mutex_);
    opened_.wait(lock, [&] { return open_; });
  }
  void open() {
    {
      const std::lock_guard lock(mutex_);
      open_ = true;
    }
    opened_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable opened_;
  bool open_ = false;
};

}  // namespace ferrum::test
