#include "scheduler_support.hpp"

#include "ferrum/gpu/builtin_kernels.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <mutex>
#include <set>

using namespace std::chrono_literals;
using ferrum::errc;
using sched_test::fixture;

TEST_CASE("wave: every node is encoded once, into its own slot, and the wave completes after its fence",
          "[scheduler]") {
  fixture f(4, 2);
  std::mutex mutex;
  std::set<std::size_t> nodes;
  std::atomic<int> wrong_slot{0};
  auto encode = [&](const ferrum::encode_context& c) {
    {
      const std::lock_guard lock(mutex);
      CHECK(nodes.insert(c.node_index).second);
    }
    REQUIRE(c.binding != nullptr);
    // The handle reaches exactly the slot the layout gives this node.
    const ferrum::binding_slot& slot = c.binding->slot();
    if (c.binding->bytes().size() != slot.capacity || c.slot.size != slot.capacity || c.slot.offset != slot.offset ||
        c.binding->bytes().data() != c.slot.arena->bytes().data() + slot.offset)
      wrong_slot.fetch_add(1);
    test::require(c.commands.fill(c.slot, static_cast<std::uint32_t>(c.node_index + 1)));
  };
  ferrum::wave_readback readback;
  auto done = sched_test::submit(*f.scheduler, encode, {.bucket_class = "step", .readback = &readback});
  const auto [ec, report] = sched_test::get(done);
  CHECK_FALSE(ec);
  CHECK(nodes == std::set<std::size_t>{0, 1, 2, 3});
  CHECK(wrong_slot.load() == 0);
  CHECK(report.wave == 1);
  CHECK(report.nodes == 4);
  REQUIRE(report.bucket != nullptr);
  CHECK(report.bucket->str() == "step@1x1x1");
  CHECK(report.submitted_value >= 1);
  CHECK(f.device->queue().timeline().reached(report.submitted_value));
  for (std::size_t p = 0; p < ferrum::wave_phase_count; ++p) CHECK(report.ended[p].has_value());
  // The fills ran on the lane's arena before the fence.
  REQUIRE(readback);
  CHECK(readback.wave() == report.wave);
  CHECK(readback.lane() == report.lane);
  for (const ferrum::binding_slot& slot : f.program->buckets[0].binding->slots())
    CHECK(test::word_at(*readback->arena_of(ferrum::memory_class::upload), slot.offset / 4) == slot.node_index + 1);
  readback.reset();
  const auto counts = f.scheduler->pools()[0]->counts();
  CHECK(counts.free == 2);
  CHECK(counts.in_flight == 0);
  const auto stats = f.scheduler->stats();
  CHECK(stats.completed == 1);
  CHECK(stats.in_flight == 0);
}

TEST_CASE("wave: the smallest bucket of the class that covers the extent is picked, else no_bucket_fits",
          "[scheduler]") {
  fixture f(2, 1, {}, {}, true);
  auto encode = [](const ferrum::encode_context&) {};
  auto small = sched_test::submit(*f.scheduler, encode, {"step", {1, 1, 1}});
  auto large = sched_test::submit(*f.scheduler, encode, {"step", {1, 3, 1}});
  auto too_large = sched_test::submit(*f.scheduler, encode, {"step", {1, 5, 1}});
  auto other_class = sched_test::submit(*f.scheduler, encode, {"frame", {1, 1, 1}});
  const auto s = sched_test::get(small);
  const auto l = sched_test::get(large);
  CHECK_FALSE(s.ec);
  CHECK(s.report.bucket->str() == "step@1x1x1");
  CHECK_FALSE(l.ec);
  CHECK(l.report.bucket->str() == "step@1x4x1");
  const auto t = sched_test::get(too_large);
  CHECK(t.ec == errc::no_bucket_fits);
  CHECK(t.report.bucket == nullptr);
  CHECK(sched_test::get(other_class).ec == errc::no_bucket_fits);
}

TEST_CASE("wave: an encoder that throws fails the wave with its node and message, submitting nothing", "[scheduler]") {
  fixture f(8, 1, {}, {.encoder_tasks = 3});
  std::atomic<int> calls{0};
  auto encode = [&](const ferrum::encode_context& c) {
    calls.fetch_add(1);
    if (c.node_index == 5) throw std::runtime_error("node five cannot encode");
  };
  auto done = sched_test::submit(*f.scheduler, encode);
  const auto [ec, report] = sched_test::get(done);
  CHECK(ec == errc::encoder_failed);
  CHECK(report.failed_node == 5u);
  CHECK(report.message == "node five cannot encode");
  CHECK(report.submitted_value == 0);
  CHECK(f.device->queue().last_submitted() == 0);
  CHECK(calls.load() <= 8);
  // The lane came back at once and serves the next wave.
  auto fine = [](const ferrum::encode_context&) {};
  auto next = sched_test::submit(*f.scheduler, fine);
  CHECK_FALSE(sched_test::get(next).ec);
  CHECK(f.scheduler->pools()[0]->counts().free == 1);
  CHECK(f.scheduler->stats().failed == 1);
}

TEST_CASE("wave: an encoder throwing something that is not an exception still fails only its wave", "[scheduler]") {
  fixture f(2, 1);
  auto encode = [](const ferrum::encode_context& c) {
    if (c.node_index == 1) throw 42;
  };
  auto done = sched_test::submit(*f.scheduler, encode);
  const auto [ec, report] = sched_test::get(done);
  CHECK(ec == errc::encoder_failed);
  CHECK(report.failed_node == 1u);
  CHECK_FALSE(report.message.empty());
}

TEST_CASE("wave: at most `lanes` waves of a bucket hold a lane at once, and all lanes are used", "[scheduler]") {
  ferrum::gpu::null_device_options slow;
  slow.latency = 2ms;
  fixture f(2, 2, slow, {}, false, 3);
  auto encode = [](const ferrum::encode_context&) {};
  std::vector<std::future<sched_test::outcome>> waves;
  for (int i = 0; i < 20; ++i) waves.push_back(sched_test::submit(*f.scheduler, encode));
  std::set<std::uint32_t> lanes;
  for (auto& w : waves) {
    const auto o = sched_test::get(w);
    CHECK_FALSE(o.ec);
    lanes.insert(o.report.lane);
  }
  CHECK(f.scheduler->stats().max_in_flight == 2);
  CHECK(lanes == std::set<std::uint32_t>{0, 1});
  const auto counts = f.scheduler->pools()[0]->counts();
  CHECK(counts.free == 2);
  CHECK(counts.waiting == 0);
}

namespace {

// A coroutine encoder: suspends on a timer before recording, so the wave's
// fan-in must wait for encoders that outlive their chunk.
struct suspending_encoder {
  std::atomic<int> finished{0};
  std::size_t throw_at = SIZE_MAX;

  boost::asio::awaitable<void> operator()(const ferrum::encode_context& c) {
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, 2ms);
    co_await timer.async_wait(boost::asio::use_awaitable);
    if (c.node_index == throw_at) throw std::runtime_error("late failure");
    test::require(c.commands.fill(c.slot, static_cast<std::uint32_t>(c.node_index + 100)));
    finished.fetch_add(1);
  }
};

}  // namespace

TEST_CASE("wave: coroutine encoders may suspend, and the wave waits for all of them", "[scheduler]") {
  fixture f(5, 1, {}, {.encoder_tasks = 2});
  suspending_encoder encode;
  ferrum::wave_readback readback;
  auto done = sched_test::submit(*f.scheduler, encode, {.bucket_class = "step", .readback = &readback});
  CHECK_FALSE(sched_test::get(done).ec);
  CHECK(encode.finished.load() == 5);
  REQUIRE(readback);
  for (const ferrum::binding_slot& slot : f.program->buckets[0].binding->slots())
    CHECK(test::word_at(*readback->arena_of(ferrum::memory_class::upload), slot.offset / 4) == slot.node_index + 100);
}

TEST_CASE("wave: a coroutine encoder that throws after suspending fails the wave with its node", "[scheduler]") {
  fixture f(4, 1);
  suspending_encoder encode;
  encode.throw_at = 2;
  auto done = sched_test::submit(*f.scheduler, encode);
  const auto [ec, report] = sched_test::get(done);
  CHECK(ec == errc::encoder_failed);
  CHECK(report.failed_node == 2u);
  CHECK(report.message == "late failure");
  CHECK(f.device->queue().last_submitted() == 0);
}
