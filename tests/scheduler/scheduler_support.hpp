// Helpers for scheduler tests: a plan of N binding nodes in one or two
// buckets, a null device, and a scheduler whose waves run on a thread pool.
#pragma once

#include "eventually.hpp"
#include "null_device_support.hpp"
#include "plan_builder.hpp"
#include "wave_outcome.hpp"

#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/thread_pool.hpp>

#include <future>
#include <memory>
#include <string>
#include <thread>

namespace sched_test {

// `nodes` binding nodes of 64 bytes each (alignment 16) and buckets
// `step@1x1x1` and, when `two_buckets`, `step@1x4x1` (whose demands are the
// same: fixed-size bindings).
inline ferrum::plan make_plan(std::size_t nodes, std::uint32_t lanes, bool two_buckets = false) {
  ferrum::test::plan_builder b;
  for (std::size_t i = 0; i < nodes; ++i) {
    const std::string n = "node/n" + std::to_string(i);
    const std::string r = "resource/r" + std::to_string(i);
    b.binding_node(n, r, 64);
  }
  b.bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 1 << 20}});
  if (two_buckets) b.bucket("step", {1, 4, 1}, {{"pool/bindings", 0, 1 << 20}});
  return b.lanes(lanes).budget(std::uint64_t{1} << 30).build();
}

// Everything a scheduler test needs, destroyed in the right order.
struct fixture {
  explicit fixture(std::size_t nodes = 4, std::uint32_t lanes = 2, ferrum::gpu::null_device_options device_options = {},
                   ferrum::scheduler_options options = {}, bool two_buckets = false, std::size_t threads = 2)
      : plan(make_plan(nodes, lanes, two_buckets)),
        program(std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(plan))),
        device(::test::null_device(device_options)),
        pool(threads) {
    auto made = ferrum::scheduler::create(program, *device, pool.get_executor(), options);
    if (!made) FAIL(made.error().what());
    scheduler = std::move(*made);
  }
  ~fixture() {
    scheduler.reset();
    pool.join();
  }

  ferrum::plan plan;
  std::shared_ptr<const ferrum::compiled_program> program;
  std::unique_ptr<ferrum::gpu::null_device> device;
  boost::asio::thread_pool pool;
  std::unique_ptr<ferrum::scheduler> scheduler;
};

// Submits a wave whose handler is bound to `signal`.
template <class Encoder>
std::future<outcome> submit_cancellable(ferrum::scheduler& s, Encoder& encode, boost::asio::cancellation_signal& signal,
                                        ferrum::wave_request request = {"step", {1, 1, 1}}) {
  auto done = std::make_shared<std::promise<outcome>>();
  auto result = done->get_future();
  s.async_submit(request, encode,
                 boost::asio::bind_cancellation_slot(signal.slot(),
                                                     [done](boost::system::error_code ec, ferrum::wave_report report) {
                                                       done->set_value({ec, std::move(report)});
                                                     }));
  return result;
}

// Submits a wave whose handler is bound to `signal` and runs on `strand`:
// a test that emits while the wave may complete posts the emit to `strand`,
// as Asio asks (a signal and its slot's handler are not thread-safe).
template <class Encoder, class Strand>
std::future<outcome> submit_cancellable_on(const Strand& strand, ferrum::scheduler& s, Encoder& encode,
                                           boost::asio::cancellation_signal& signal, ferrum::wave_request request) {
  auto done = std::make_shared<std::promise<outcome>>();
  auto result = done->get_future();
  s.async_submit(request, encode,
                 boost::asio::bind_executor(
                     strand, boost::asio::bind_cancellation_slot(
                                 signal.slot(), [done](boost::system::error_code ec, ferrum::wave_report report) {
                                   done->set_value({ec, std::move(report)});
                                 })));
  return result;
}

// A null device whose every submission hangs for `duration` (until it shuts
// down, when zero).
inline ferrum::gpu::null_device_options hanging(std::chrono::milliseconds duration) {
  ferrum::gpu::null_device_options options;
  options.faults = {.hang = 1.0, .hang_duration = duration};
  return options;
}

// Polls a condition for up to ten seconds (tests/support/eventually.hpp).
using test_support::eventually;

}  // namespace sched_test
