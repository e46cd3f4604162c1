// Lanes made when needed (scheduler_options::make_lanes) and given back
// (trim): what exists, what a wave waits for, what a failure does.
#include "held_lanes.hpp"
#include "scheduler_support.hpp"

#include "ferrum/scheduler/async_acquire.hpp"

#include <boost/asio/io_context.hpp>

#include <atomic>
#include <vector>

using namespace std::chrono_literals;
using ferrum::errc;
using sched_test::fixture;

namespace {

ferrum::scheduler_options when_needed() {
  ferrum::scheduler_options o;
  o.make_lanes = ferrum::lane_making::when_needed;
  return o;
}

auto fill_encoder() {
  return [](const ferrum::encode_context& c) { test::require(c.commands.fill(c.slot, 7u)); };
}

}  // namespace

TEST_CASE("lane making: made when needed, a scheduler holds no lane until a wave of a bucket needs one",
          "[scheduler]") {
  fixture f(4, 3, {}, when_needed(), true);
  CHECK(f.scheduler->stats().lanes == 0);
  CHECK(f.scheduler->stats().lane_bytes == 0);
  for (const auto& pool : f.scheduler->pools()) {
    const ferrum::lane_counts c = pool->counts();
    CHECK(c.capacity == 3);
    CHECK(c.lanes == 0);
  }
  auto encode = fill_encoder();
  ferrum::wave_readback readback;
  auto done = sched_test::submit(*f.scheduler, encode, {.bucket_class = "step", .readback = &readback});
  const auto [ec, report] = sched_test::get(done);
  CHECK_FALSE(ec);
  // Only the bucket the wave ran in has a lane, and only one.
  const ferrum::lane_counts used = f.scheduler->pools()[0]->counts();
  CHECK(used.lanes == 1);
  CHECK(used.bytes == f.program->buckets[0].lane_bytes());
  CHECK(f.scheduler->pools()[1]->counts().lanes == 0);
  CHECK(f.scheduler->stats().lanes == 1);
  CHECK(f.scheduler->stats().lane_bytes == f.program->buckets[0].lane_bytes());
  // The lane made is the one the wave ran on, and its fills landed.
  REQUIRE(readback);
  CHECK(readback.lane() == report.lane);
  const ferrum::lane_contents& lane = *readback;
  REQUIRE(lane.made());
  CHECK(std::to_integer<int>(lane.arena_of(ferrum::memory_class::upload)->bytes()[lane.slot(0).offset]) == 7);
}

TEST_CASE("lane making: concurrent waves make lanes up to the program's lanes, never more", "[scheduler]") {
  // Each submission hangs a while, so that waves pile up behind the lanes.
  fixture f(2, 3, sched_test::hanging(20ms), when_needed());
  auto encode = fill_encoder();
  std::vector<std::future<sched_test::outcome>> waves;
  for (int i = 0; i < 8; ++i) waves.push_back(sched_test::submit(*f.scheduler, encode));
  for (auto& w : waves) CHECK_FALSE(sched_test::get(w).ec);
  const ferrum::lane_counts c = f.scheduler->pools()[0]->counts();
  CHECK(c.lanes == 3);
  CHECK(c.capacity == 3);
  CHECK(c.making == 0);
  CHECK(c.free == 3);
  CHECK(f.scheduler->stats().max_in_flight == 3);
}

TEST_CASE("lane making: trim gives free lanes' memory back, and the next wave makes a lane afresh", "[scheduler]") {
  fixture f(2, 2, {}, {}, true);
  const std::uint64_t per_lane = f.program->buckets[0].lane_bytes() + f.program->buckets[1].lane_bytes();
  CHECK(f.scheduler->stats().lanes == 4);  // at_create: every lane of every bucket
  CHECK(f.scheduler->stats().lane_bytes == 2 * per_lane);
  std::atomic<std::uint64_t> previous{~std::uint64_t{0}};
  auto encode = [&](const ferrum::encode_context& c) {
    previous = c.lane_previous_wave;
    test::require(c.commands.fill(c.slot, 1u));
  };
  auto first = sched_test::submit(*f.scheduler, encode);
  CHECK_FALSE(sched_test::get(first).ec);
  CHECK(f.scheduler->trim() == 2 * per_lane);
  CHECK(f.scheduler->stats().lanes == 0);
  CHECK(f.scheduler->stats().lane_bytes == 0);
  CHECK(f.scheduler->trim() == 0);
  // Made again when needed, even at_create; its memory is fresh, so the
  // wave is told no earlier wave left anything in it.
  ferrum::wave_readback readback;
  auto second = sched_test::submit(*f.scheduler, encode, {.bucket_class = "step", .readback = &readback});
  CHECK_FALSE(sched_test::get(second).ec);
  CHECK(previous.load() == 0);
  CHECK(f.scheduler->pools()[0]->counts().lanes == 1);
  REQUIRE(readback);
  CHECK(readback->made());
  readback.reset();
}

TEST_CASE("lane making: trim leaves a lane whose fence is not reached alone", "[scheduler]") {
  // The first submission hangs until released by the device's shutdown;
  // with a fence timeout long enough, the wave holds its lane meanwhile.
  ferrum::scheduler_options o;
  o.fence_timeout = 200ms;
  fixture f(2, 2, sched_test::hanging(0ms), o);
  auto encode = fill_encoder();
  auto hung = sched_test::submit(*f.scheduler, encode);
  REQUIRE(sched_test::eventually([&] { return f.scheduler->pools()[0]->counts().in_flight == 1; }));
  CHECK(f.scheduler->trim() == f.program->buckets[0].lane_bytes());  // the free one alone
  const auto [ec, report] = sched_test::get(hung);
  CHECK(ec == errc::fence_timeout);
  // Quarantined, it keeps its memory: the GPU may still write it.
  const ferrum::lane_counts c = f.scheduler->pools()[0]->counts();
  CHECK(c.quarantined == 1);
  CHECK(c.lanes == 1);
  CHECK(f.scheduler->trim() == 0);
}

TEST_CASE("lane making: a lane the device refuses fails the wave it was made for with the device's code",
          "[scheduler]") {
  ferrum::gpu::null_device_options small;
  small.max_arena_bytes = 16;  // below any lane
  fixture f(2, 2, small, when_needed());
  auto encode = fill_encoder();
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto done = sched_test::submit(*f.scheduler, encode);
    CHECK(sched_test::get(done).ec == errc::invalid_arena_size);
    // Absent again, and tried afresh for the next wave.
    REQUIRE(sched_test::eventually([&] { return f.scheduler->pools()[0]->counts().making == 0; }));
    CHECK(f.scheduler->pools()[0]->counts().lanes == 0);
  }
  CHECK(f.scheduler->stats().failed == 2);
}

TEST_CASE("lane making: made at create, a lane the device refuses fails create", "[scheduler]") {
  ferrum::gpu::null_device_options small;
  small.max_arena_bytes = 16;
  const auto program =
      std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(sched_test::make_plan(2, 2)));
  auto device = ::test::null_device(small);
  boost::asio::io_context io;
  const auto made = ferrum::scheduler::create(program, *device, io.get_executor());
  REQUIRE(made.has_error());
  CHECK(made.error().code == errc::invalid_arena_size);
}

TEST_CASE("lane making: a wave cancelled while its lane is made completes at once, and the lane is kept free",
          "[scheduler]") {
  const auto program =
      std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(sched_test::make_plan(2, 2)));
  auto device = ::test::null_device({});
  boost::asio::io_context io;
  auto s = test::require(ferrum::scheduler::create(program, *device, io.get_executor(), when_needed()));
  auto encode = fill_encoder();
  boost::asio::cancellation_signal signal;
  std::optional<boost::system::error_code> result;
  s->async_submit({"step", {1, 1, 1}}, encode,
                  boost::asio::bind_cancellation_slot(
                      signal.slot(), [&](boost::system::error_code ec, const ferrum::wave_report&) { result = ec; }));
  // The wave starts, finds no lane and has one made (posted, not yet run).
  while (s->pools()[0]->counts().making == 0 && io.poll_one() != 0) {
  }
  REQUIRE(s->pools()[0]->counts().making == 1);
  CHECK(s->pools()[0]->counts().waiting == 1);
  // Nothing has happened yet: every type is honoured, total included.
  signal.emit(boost::asio::cancellation_type::total);
  io.run();
  REQUIRE(result.has_value());
  CHECK(*result == boost::asio::error::operation_aborted);
  const ferrum::lane_counts c = s->pools()[0]->counts();
  CHECK(c.making == 0);
  CHECK(c.lanes == 1);
  CHECK(c.free == 1);
  CHECK(c.waiting == 0);
}

TEST_CASE("lane making: with GPU timestamps on a device without them, create fails even when lanes come later",
          "[scheduler]") {
  ferrum::gpu::null_device_options no_timestamps;
  no_timestamps.timestamps = false;
  const auto program =
      std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(sched_test::make_plan(2, 2)));
  auto device = ::test::null_device(no_timestamps);
  boost::asio::io_context io;
  ferrum::scheduler_options o = when_needed();
  o.gpu_timestamps = true;
  const auto made = ferrum::scheduler::create(program, *device, io.get_executor(), o);
  REQUIRE(made.has_error());
  CHECK(made.error().code == errc::timestamps_unsupported);
}

TEST_CASE(
    "lane making: a lane pool of its own makes a lane for async_acquire, and a handle of a trimmed lane holds "
    "nothing",
    "[scheduler]") {
  const ferrum::compiled_program program = ferrum::test::compile_ok(sched_test::make_plan(2, 2));
  auto device = ::test::null_device({});
  boost::asio::io_context io;
  auto pool = test::require(ferrum::lane_pool::create(program, program.buckets[0], *device, io.get_executor(), false,
                                                      ferrum::queue_placement::plan, ferrum::lane_making::when_needed));
  CHECK(pool->counts().lanes == 0);
  std::optional<ferrum::lane_lease> lease;
  ferrum::async_acquire(*pool, [&](boost::system::error_code ec, ferrum::lane_lease l) {
    CHECK_FALSE(ec);
    lease.emplace(std::move(l));
  });
  io.run();
  REQUIRE(lease.has_value());
  REQUIRE(*lease);
  CHECK((*lease)->made());
  CHECK(pool->counts().lanes == 1);
  lease.reset();
  CHECK(pool->trim() == program.buckets[0].lane_bytes());
  CHECK(pool->counts().lanes == 0);
  // Made again for a waiter, given back, trimmed: a second handle of that
  // hand-out finds a lane without memory, and gives nothing back.
  std::vector<int> order;
  test::recording_waiter w(order, 1);
  boost::system::error_code ec;
  CHECK_FALSE(test::acquire(*pool, w, ec));  // queued: a lane is made for it
  io.restart();
  io.run();
  REQUIRE(w.handed);
  ferrum::held_lane stale = test::forge(w.handed);
  test::require(w.handed.give_back(ferrum::lane_return::fence_reached));
  CHECK(pool->trim() == program.buckets[0].lane_bytes());
  const auto refused = stale.give_back(ferrum::lane_return::fence_reached);
  REQUIRE(refused.has_error());
  CHECK(refused.error().code == errc::lane_not_held);
  CHECK(refused.error().what().find("no memory") != std::string::npos);
  CHECK(pool->counts().lanes == 0);
}
