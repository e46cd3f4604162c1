// The engine's per-lane state (ferrum/scheduler/lane_state.hpp): made with a
// lane's memory — at create, when needed, after a trim, for a replacement
// program — seen by every node of the lane's waves and leases, destroyed
// before that memory is freed and never while the GPU may still use it;
// a factory's failure fails what the lane was made for.
#include "scheduler_support.hpp"

#include "ferrum/scheduler/async_acquire.hpp"
#include "ferrum/scheduler/lane_state.hpp"

#include <boost/asio/use_future.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

using namespace std::chrono_literals;
using ferrum::errc;
using sched_test::fixture;

namespace {

// What the factory made and what went, shared by every state.
struct state_log {
  std::mutex mutex;
  std::map<std::pair<std::string, std::uint32_t>, int> made;  // (bucket, lane) -> times made
  std::atomic<int> alive{0};
  std::atomic<int> destroyed{0};
  // Set by a test: a lane whose state checks, when it goes, that a timeline
  // value (the last submitted into it) is reached.
  std::atomic<std::uint32_t> watched_lane{0};
  std::atomic<std::uint64_t> must_be_reached{0};
  std::atomic<int> destroyed_early{0};

  int made_count() {
    const std::lock_guard lock(mutex);
    int n = 0;
    for (const auto& [lane, times] : made) n += times;
    return n;
  }
};

// One lane's state: which lane it was made for, and that lane's bytes of
// resource r0 as the factory's context gave them.
struct probe_state final : ferrum::lane_state {
  probe_state(state_log& l, const ferrum::lane_state_context& c)
      : log(&l),
        lane(c.lane),
        bucket(c.bucket.id.str()),
        r0(c.resource("resource/r0")),
        upload(c.contents.arena_of(ferrum::memory_class::upload)),
        timeline(&c.device.queue().timeline()) {
    const std::lock_guard lock(log->mutex);
    ++log->made[{bucket, lane}];
    ++log->alive;
  }
  ~probe_state() override {
    // The lane's memory is still there (ASan reports a read of a freed
    // arena), and the GPU is done with it.
    touched = std::to_integer<int>(upload->bytes()[0]);
    if (const std::uint64_t v = log->must_be_reached.load();
        v != 0 && lane == log->watched_lane && !timeline->reached(v))
      ++log->destroyed_early;
    --log->alive;
    ++log->destroyed;
  }

  state_log* log;
  std::uint32_t lane;
  std::string bucket;
  ferrum::native_buffer r0;
  const ferrum::gpu::arena* upload;
  const ferrum::gpu::timeline* timeline;
  int touched = 0;
};

ferrum::lane_state_factory probe_factory(state_log& log) {
  return [&log](const ferrum::lane_state_context& c) -> ferrum::lane_state_result {
    return std::make_unique<probe_state>(log, c);
  };
}

ferrum::scheduler_options with_state(state_log& log, ferrum::lane_making making = ferrum::lane_making::at_create) {
  ferrum::scheduler_options o;
  o.make_lanes = making;
  o.make_lane_state = probe_factory(log);
  return o;
}

// Checks in every node that the wave's state is its own lane's; counts mismatches.
struct state_checking_encoder {
  std::atomic<int>* wrong;
  void operator()(const ferrum::encode_context& c) const {
    const probe_state* s = c.state_as<probe_state>();
    const ferrum::node_resource* r0 = c.resource("resource/r0");
    // Node 0 lists r0 (its binding): the state names the same bytes.
    const bool same_bytes = r0 == nullptr || (s != nullptr && s->r0.buffer == r0->range.arena->native_handle() &&
                                              s->r0.offset == r0->range.offset && s->r0.size == r0->range.size);
    if (s == nullptr || s->lane != c.lane || s->bucket != c.bucket.str() || !same_bytes) ++*wrong;
    test::require(c.commands.fill(c.slot, 5u));
  }
};

}  // namespace

TEST_CASE("lane state: one per lane made at create, each wave's nodes see their lane's, gone with the scheduler",
          "[scheduler][lane_state]") {
  state_log log;
  {
    fixture f(3, 2, {}, with_state(log), true);
    CHECK(log.made_count() == 4);  // 2 lanes x 2 buckets, once each
    CHECK(log.made.size() == 4);
    std::atomic<int> wrong{0};
    const state_checking_encoder encode{&wrong};
    std::vector<std::future<sched_test::outcome>> waves;
    for (int i = 0; i < 12; ++i)
      waves.push_back(sched_test::submit(*f.scheduler, encode, {"step", {1, i % 2 == 0 ? 1u : 4u, 1}}));
    for (auto& w : waves) CHECK_FALSE(sched_test::get(w).ec);
    CHECK(wrong == 0);
    CHECK(log.made_count() == 4);  // waves make none
    CHECK(log.destroyed == 0);
  }
  CHECK(log.destroyed == 4);
  CHECK(log.alive == 0);
}

TEST_CASE("lane state: a lane without a factory, or whose factory made none, has no state", "[scheduler][lane_state]") {
  ferrum::scheduler_options none_made;
  none_made.make_lane_state = [](const ferrum::lane_state_context&) -> ferrum::lane_state_result { return nullptr; };
  for (const ferrum::scheduler_options& o : {ferrum::scheduler_options{}, none_made}) {
    fixture f(2, 1, {}, o);
    std::atomic<int> with_state{0};
    auto encode = [&](const ferrum::encode_context& c) {
      if (c.state != nullptr || c.state_as<probe_state>() != nullptr) ++with_state;
    };
    ferrum::wave_readback readback;
    auto done = sched_test::submit(*f.scheduler, encode, {.bucket_class = "step", .readback = &readback});
    CHECK_FALSE(sched_test::get(done).ec);
    CHECK(with_state == 0);
    REQUIRE(readback);
    CHECK(readback->state() == nullptr);
  }
}

TEST_CASE("lane state: made when needed, again after a trim, which destroys it first", "[scheduler][lane_state]") {
  state_log log;
  fixture f(2, 2, {}, with_state(log, ferrum::lane_making::when_needed));
  CHECK(log.made_count() == 0);
  std::atomic<int> wrong{0};
  const state_checking_encoder encode{&wrong};
  auto first = sched_test::submit(*f.scheduler, encode);
  const auto [ec, report] = sched_test::get(first);
  CHECK_FALSE(ec);
  CHECK(log.made_count() == 1);
  CHECK(f.scheduler->trim() > 0);
  CHECK(log.destroyed == 1);
  CHECK(log.alive == 0);
  auto second = sched_test::submit(*f.scheduler, encode);
  CHECK_FALSE(sched_test::get(second).ec);
  CHECK(log.made_count() == 2);
  CHECK(wrong == 0);
}

TEST_CASE("lane state: a replaced program's lanes go with their state, the new program's lanes have their own",
          "[scheduler][lane_state]") {
  state_log log;
  fixture f(2, 2, {}, with_state(log));
  std::atomic<int> wrong{0};
  const state_checking_encoder encode{&wrong};
  auto before = sched_test::submit(*f.scheduler, encode);
  CHECK_FALSE(sched_test::get(before).ec);
  CHECK(log.made_count() == 2);
  auto next = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(sched_test::make_plan(3, 2)));
  auto replaced = f.scheduler->async_replace(next, boost::asio::use_future);
  REQUIRE(replaced.wait_for(20s) == std::future_status::ready);
  replaced.get();
  CHECK(log.made_count() == 4);
  REQUIRE(sched_test::eventually([&] { return log.destroyed == 2; }));
  auto after = sched_test::submit(*f.scheduler, encode);
  CHECK_FALSE(sched_test::get(after).ec);
  CHECK(wrong == 0);
  CHECK(log.alive == 2);
}

TEST_CASE("lane state: a lane the GPU may still write when its scheduler goes keeps its state until its fence",
          "[scheduler][lane_state]") {
  state_log log;
  ferrum::scheduler_options o = with_state(log);
  o.fence_timeout = 50ms;
  auto device = ::test::null_device(sched_test::hanging(500ms));
  const auto program =
      std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(sched_test::make_plan(2, 2)));
  {
    boost::asio::thread_pool pool(2);
    auto s = test::require(ferrum::scheduler::create(program, *device, pool.get_executor(), o));
    auto encode = [](const ferrum::encode_context&) {};
    auto hung = sched_test::submit(*s, encode);
    const auto [ec, report] = sched_test::get(hung);
    REQUIRE(ec == errc::fence_timeout);
    log.watched_lane = report.lane;
    log.must_be_reached = report.submitted_value;
    REQUIRE_FALSE(device->queue().timeline().reached(report.submitted_value));
    s.reset();  // the free lane's state goes now; the quarantined one's is retired to the device
    CHECK(log.destroyed == 1);
    pool.join();
  }
  REQUIRE(sched_test::eventually([&] { return device->queue().timeline().reached(log.must_be_reached.load()); }));
  // The device frees what it retired at its next retirement once reached.
  device->retire(test::require(device->create_arena(64)), 0);
  CHECK(log.destroyed == 2);
  CHECK(log.destroyed_early == 0);
  CHECK(log.alive == 0);
}

TEST_CASE("lane state: at create, a factory's error fails create with its code, a throw with lane_state_failed",
          "[scheduler][lane_state]") {
  const auto program =
      std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(sched_test::make_plan(2, 2)));
  auto device = ::test::null_device({});
  boost::asio::thread_pool pool(1);
  state_log log;
  ferrum::scheduler_options refusing;
  // The second lane's state fails: the first lane's goes again.
  refusing.make_lane_state = [&log](const ferrum::lane_state_context& c) -> ferrum::lane_state_result {
    if (c.lane == 1) return ferrum::make_error(errc::out_of_device_memory, "the engine's descriptor pool");
    return std::make_unique<probe_state>(log, c);
  };
  auto refused = ferrum::scheduler::create(program, *device, pool.get_executor(), refusing);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error() == errc::out_of_device_memory);
  CHECK(refused.error().detail == "the engine's descriptor pool");
  CHECK(log.made_count() == 1);
  CHECK(log.alive == 0);

  ferrum::scheduler_options throwing;
  throwing.make_lane_state = [](const ferrum::lane_state_context&) -> ferrum::lane_state_result {
    throw std::runtime_error("VkFFT: initialization failed");
  };
  auto threw = ferrum::scheduler::create(program, *device, pool.get_executor(), throwing);
  REQUIRE_FALSE(threw.has_value());
  CHECK(threw.error() == errc::lane_state_failed);
  CHECK(threw.error().detail == "bucket 'step@1x1x1', lane 0: VkFFT: initialization failed");
  pool.join();
}

TEST_CASE("lane state: made when needed, a factory's failure fails the wave, and the next wave makes the lane afresh",
          "[scheduler][lane_state]") {
  state_log log;
  std::atomic<bool> fail_next{true};
  ferrum::scheduler_options o;
  o.make_lanes = ferrum::lane_making::when_needed;
  o.make_lane_state = [&](const ferrum::lane_state_context& c) -> ferrum::lane_state_result {
    if (fail_next.exchange(false)) throw 42;  // not even an exception
    return std::make_unique<probe_state>(log, c);
  };
  fixture f(2, 1, {}, o);
  std::atomic<int> wrong{0};
  const state_checking_encoder encode{&wrong};
  auto failed = sched_test::submit(*f.scheduler, encode);
  const auto [ec, report] = sched_test::get(failed);
  CHECK(ec == errc::lane_state_failed);
  REQUIRE(sched_test::eventually([&] { return f.scheduler->pools()[0]->counts().making == 0; }));
  CHECK(f.scheduler->pools()[0]->counts().lanes == 0);  // what was made of it was freed
  auto next = sched_test::submit(*f.scheduler, encode);
  CHECK_FALSE(sched_test::get(next).ec);
  CHECK(log.made_count() == 1);
  CHECK(wrong == 0);
}

TEST_CASE("lane state: a lane pool made directly gives its leases the lane's state", "[scheduler][lane_state]") {
  state_log log;
  const ferrum::compiled_program program = ferrum::test::compile_ok(sched_test::make_plan(2, 2));
  auto device = ::test::null_device({});
  {
    auto pool = test::require(ferrum::lane_pool::create(
        program, program.buckets[0], *device, ferrum::lane_pool::executor_type(boost::asio::system_executor()), false,
        ferrum::queue_placement::plan, ferrum::lane_making::when_needed, probe_factory(log)));
    CHECK(log.made_count() == 0);
    auto lease = ferrum::async_acquire(*pool, boost::asio::use_future).get();
    REQUIRE(lease);
    const auto* s = dynamic_cast<const probe_state*>(lease->state());
    REQUIRE(s != nullptr);
    CHECK(s->lane == lease.index());
    CHECK(log.made_count() == 1);
    lease.reset();
  }
  CHECK(log.destroyed == 1);
}
