// Helpers for tests that run on the null device.
#pragma once

#include "ferrum/gpu/async_wait.hpp"
#include "ferrum/gpu/null_device.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>

#include <array>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>

namespace test {

inline std::unique_ptr<ferrum::gpu::null_device> null_device(const ferrum::gpu::null_device_options& options = {}) {
  auto device = ferrum::gpu::null_device::create(options);
  REQUIRE(device.has_value());
  return std::move(*device);
}

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
                                                         std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  // Shared: a wait that outlives the limit completes later, into the promise.
  auto done = std::make_shared<std::promise<boost::system::error_code>>();
  std::future<boost::system::error_code> result = done->get_future();
  ferrum::gpu::async_wait(t, value, [done](boost::system::error_code ec) { done->set_value(ec); });
  if (result.wait_for(limit) != std::future_status::ready) return std::nullopt;
  return result.get();
}

// Records `commands` into `list` and submits it with the queue's next value;
// returns that value.
template <class Record>
std::uint64_t submit(ferrum::gpu::device& device, ferrum::gpu::command_list& list, Record commands) {
  require(list.begin());
  commands(list);
  require(list.end());
  const std::uint64_t value = device.queue().last_submitted() + 1;
  ferrum::gpu::command_list* lists[] = {&list};
  require(device.queue().submit(lists, value));
  return value;
}

inline std::uint32_t word_at(const ferrum::gpu::arena& a, std::size_t word) {
  std::uint32_t value = 0;
  std::memcpy(&value, a.bytes().data() + word * 4, 4);
  return value;
}

}  // namespace test
