// Lane memory on the Vulkan device, validation (synchronization included)
// on: interval aliasing and persistent resources proven by data
// (workspace_probe.hpp), as the scheduler tests do on the null device; and a
// v2 plan's nodes of both queue kinds (two_queue_waves.hpp), also over two
// logical devices under one scheduler. Where
// two resources share bytes, the device must order the later node's writes
// after the earlier node's reads: the probe's snapshots and checks see it.
#include "two_queue_waves.hpp"
#include "vulkan_test_support.hpp"
#include "wave_outcome.hpp"
#include "workspace_probe.hpp"

#include <boost/asio/thread_pool.hpp>

#include <array>
#include <future>
#include <random>

TEST_CASE("vulkan: lane memory aliasing and persistence hold by data (generated plans)", "[vulkan][workspace]") {
  // Both layouts: lavapipe's unified memory, and the discrete GPU's path
  // forced on it (device memory unmapped, uploads staged).
  const bool discrete = GENERATE(false, true);
  INFO("discrete_layout " << discrete);
  vulkan_test::session s;
  if (!s.open_layout(discrete)) return;
  std::mt19937_64 rng(5);
  workspace_probe::outcome total;
  for (int round = 0; round < 3; ++round) {
    const ferrum::plan p = workspace_probe::generate(rng, {});
    const workspace_probe::outcome o = workspace_probe::run(*s.device, p, 5);
    total.aliased_words += o.aliased_words;
    total.persistent_first_uses_checked += o.persistent_first_uses_checked;
  }
  CHECK(total.aliased_words > 0);
  CHECK(total.persistent_first_uses_checked > 0);
  s.finish();
}

TEST_CASE("vulkan: a v2 plan's transfer nodes copy what compute nodes wrote, and compute nodes read uploads",
          "[vulkan][queues]") {
  // Lavapipe has one queue: both kinds run on it, a wave is one submission,
  // and the order is the queue's (a barrier before every command).
  vulkan_test::session s;
  if (!s.open()) return;
  const ferrum::plan p = two_queue_waves::two_queue_plan();
  auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(p));
  two_queue_waves::two_queue_encoder encode;
  encode.hold_for = std::chrono::milliseconds(0);
  {
    boost::asio::thread_pool pool(2);
    auto made = ferrum::scheduler::create(program, *s.device, pool.get_executor(),
                                          {.fence_timeout = std::chrono::seconds(60), .encoder_tasks = 2});
    REQUIRE(made.has_value());
    std::unique_ptr<ferrum::scheduler> scheduler = std::move(*made);
    for (int i = 0; i < 6; ++i) {
      auto done = sched_test::submit(*scheduler, encode);
      CHECK_FALSE(sched_test::get(done, std::chrono::seconds(60)).ec);
    }
    scheduler.reset();
    pool.join();
  }
  CHECK(encode.checked_waves == 5);
  CHECK(encode.wrong_words == 0);
  CHECK(s.device->queue_count() == 1);
  s.finish();
}

TEST_CASE("vulkan: a scheduler over two logical devices runs each wave's queues on its own device, data checked",
          "[vulkan][queues][devices]") {
  // Lavapipe allows several logical devices of its one physical device: a
  // lane pool per (device, bucket), each lane's memory, lists and timeline on
  // its device, and the lane's next wave checks what its last one left.
  vulkan_test::session first;
  vulkan_test::session second;
  if (!first.open() || !second.open()) return;
  const ferrum::plan p = two_queue_waves::two_queue_plan();
  auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(p));
  two_queue_waves::two_queue_encoder encode;
  encode.hold_for = std::chrono::milliseconds(0);
  std::array<int, 2> per_device{};
  {
    boost::asio::thread_pool pool(2);
    ferrum::gpu::device* const devices[] = {first.device.get(), second.device.get()};
    auto made = ferrum::scheduler::create(program, devices, pool.get_executor(),
                                          {.fence_timeout = std::chrono::seconds(60), .encoder_tasks = 2});
    REQUIRE(made.has_value());
    std::unique_ptr<ferrum::scheduler> scheduler = std::move(*made);
    std::vector<std::future<std::pair<boost::system::error_code, std::size_t>>> waves;
    for (int i = 0; i < 8; ++i) {
      auto done = std::make_shared<std::promise<std::pair<boost::system::error_code, std::size_t>>>();
      waves.push_back(done->get_future());
      scheduler->async_submit({"step", {1, 1, 1}}, encode,
                              [done](boost::system::error_code ec, const ferrum::wave_report& r) {
                                done->set_value({ec, r.device});
                              });
    }
    for (auto& w : waves) {
      REQUIRE(w.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
      const auto [ec, device] = w.get();
      CHECK_FALSE(ec);
      REQUIRE(device < 2);
      ++per_device[device];
    }
    scheduler.reset();
    pool.join();
  }
  // One lane per device: every wave after each device's first checked its
  // lane's previous one.
  CHECK(per_device[0] > 0);
  CHECK(per_device[1] > 0);
  CHECK(encode.checked_waves == 6);
  CHECK(encode.wrong_words == 0);
  first.finish();
  second.finish();
}
