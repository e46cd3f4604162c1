#include "held_lanes.hpp"
#include "image_copy_waves.hpp"
#include "scheduler_support.hpp"

#include "ferrum/scheduler/async_acquire.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/experimental/promise.hpp>
#include <boost/asio/experimental/use_promise.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <array>
#include <cstring>
#include <future>
#include <optional>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using ferrum::errc;
using ferrum::lane_pool;

namespace {

using ferrum::held_lane;
using ferrum::lane_return;
using test::acquire;
using test::forge;
using test::recording_waiter;

// A free lane of `pool`, taken at once through async_acquire's door.
held_lane take_free(lane_pool& pool) {
  std::vector<int> order;
  recording_waiter w(order, 0);
  boost::system::error_code ec;
  held_lane held = acquire(pool, w, ec);
  REQUIRE(held);
  return held;
}

// Records node 0's list of `held` empty and submits it to the queue itself,
// as an encoder that submits would, recording nothing through the handle;
// the submission's value.
std::uint64_t submit_unrecorded(ferrum::gpu::device& device, const held_lane& held) {
  test::require(held->list(0).begin());
  test::require(held->list(0).end());
  ferrum::gpu::command_list* lists[] = {&held->list(0)};
  return test::require(device.queue().submit_next(lists));
}

struct pool_fixture {
  explicit pool_fixture(std::uint32_t lanes, ferrum::gpu::null_device_options options = {})
      : plan(sched_test::make_plan(3, lanes)),
        program(ferrum::test::compile_ok(plan)),
        device(::test::null_device(options)),
        pool(test::require(lane_pool::create(program, program.buckets[0], *device))) {}
  ferrum::plan plan;
  ferrum::compiled_program program;
  std::unique_ptr<ferrum::gpu::null_device> device;
  std::unique_ptr<lane_pool> pool;
};

// Runs the handlers `context` has ready. restart(): a context that ran out
// of work stays stopped until restarted.
void run_ready(boost::asio::io_context& context) {
  context.restart();
  context.poll();
}

// A lease of `pool`'s free lane, granted through `context`.
ferrum::lane_lease lease_of(lane_pool& pool, boost::asio::io_context& context) {
  ferrum::lane_lease lease;
  ferrum::async_acquire(pool, boost::asio::bind_executor(context, [&](boost::system::error_code, ferrum::lane_lease l) {
                          lease = std::move(l);
                        }));
  run_ready(context);
  REQUIRE(lease);
  return lease;
}

// Records every list of the lease's lane empty and submits them; the value.
std::uint64_t submit_empty_lists(ferrum::lane_lease& lease) {
  for (ferrum::gpu::command_list* list : lease->lists()) {
    test::require(list->begin());
    test::require(list->end());
  }
  return test::require(lease.submit());
}

}  // namespace

TEST_CASE("lane_pool: a lease submits a staged lane's stage-in list before its nodes' lists", "[scheduler]") {
  // discrete_layout: the upload arena's host bytes are a buffer of their
  // own, which only the lane's stage-in list copies to the GPU's.
  ferrum::gpu::null_device_options options;
  options.discrete_layout = true;
  pool_fixture f(1, options);
  boost::asio::io_context context;
  ferrum::lane_lease lease = lease_of(*f.pool, context);
  ferrum::lane_contents& l = *lease;
  ferrum::gpu::arena& upload = *l.arena_of(ferrum::memory_class::upload);
  REQUIRE(upload.staged());
  REQUIRE(l.stage_in() != nullptr);
  CHECK(l.stage_out() == nullptr);  // no readback pool
  CHECK(l.all_lists().size() == l.lists().size() + 1);
  CHECK(l.all_lists().front() == l.stage_in());
  // The host writes the first slot; node 0's list copies it out where the
  // host can read it.
  const std::uint32_t word = 0x1234abcdu;
  std::memcpy(upload.bytes().data() + l.slot(0).offset, &word, 4);
  auto out = test::require(f.device->create_arena(4));
  for (std::size_t n = 0; n < l.lists().size(); ++n) {
    test::require(l.list(n).begin());
    if (n == 0) test::require(l.list(n).copy(upload.range(l.slot(0).offset, 4), out->whole()));
    test::require(l.list(n).end());
  }
  const std::uint64_t value = test::require(lease.submit());
  test::require_reached(f.device->queue().timeline(), value);
  CHECK(test::word_at(*out, 0) == word);
}

TEST_CASE("lane_pool: each lane has its own arena per window of the bucket, its backing slices and a list per node",
          "[scheduler]") {
  pool_fixture f(3);
  REQUIRE(f.pool->counts().capacity == 3);
  const ferrum::compiled_bucket& bucket = f.program.buckets[0];
  std::vector<ferrum::held_lane> held = ferrum::test::hold_every_lane(*f.pool);
  for (std::uint32_t index = 0; index < 3; ++index) {
    REQUIRE(held[index]);
    const ferrum::lane_contents& l = *held[index];
    for (ferrum::memory_class c : ferrum::memory_classes) {
      INFO(ferrum::to_string(c));
      const ferrum::gpu::arena* arena = l.arena_of(c);
      CHECK((arena != nullptr) == (bucket.window(c).size != 0));
      if (arena != nullptr) {
        CHECK(arena->size() == bucket.window(c).size);
        CHECK(arena->cls() == c);
      }
    }
    const ferrum::gpu::arena& upload = *l.arena_of(ferrum::memory_class::upload);
    CHECK(l.binding_target().arena.size() == bucket.binding->physical_size_bytes());
    CHECK(l.binding_target().arena.data() == upload.bytes().data());
    CHECK(l.lists().size() == 3);
    CHECK(l.all_lists().size() == 3);
    CHECK_FALSE(l.backing().empty());
  }
  CHECK(held[0]->arena_of(ferrum::memory_class::upload)->bytes().data() !=
        held[1]->arena_of(ferrum::memory_class::upload)->bytes().data());
  CHECK(f.pool->counts().free == 0);
  held.clear();
  const auto c = f.pool->counts();
  CHECK(c.lanes == 3);
  CHECK(c.free == 3);
}

TEST_CASE("lane_pool: a waiter queued first is served first", "[scheduler]") {
  pool_fixture f(1);
  held_lane held = take_free(*f.pool);
  std::vector<int> order;
  boost::system::error_code ec;
  std::vector<std::unique_ptr<recording_waiter>> queued;
  for (int i = 2; i <= 5; ++i) {
    queued.push_back(std::make_unique<recording_waiter>(order, i));
    CHECK_FALSE(acquire(*f.pool, *queued.back(), ec));
    CHECK_FALSE(ec);
  }
  CHECK(f.pool->counts().waiting == 4);
  for (int i = 0; i < 4; ++i) {
    test::require(held.give_back(lane_return::fence_reached));
    CHECK_FALSE(held);
    held = std::move(queued[static_cast<std::size_t>(i)]->handed);
    REQUIRE(held);
  }
  CHECK(order == std::vector<int>{2, 3, 4, 5});
  test::require(held.give_back(lane_return::fence_reached));
  CHECK(f.pool->counts().free == 1);
}

TEST_CASE("lane_pool: a cancelled waiter is removed and never handed a lane", "[scheduler]") {
  pool_fixture f(1);
  std::vector<int> order;
  recording_waiter first(order, 1);
  recording_waiter second(order, 2);
  recording_waiter third(order, 3);
  boost::system::error_code ec;
  held_lane held = acquire(*f.pool, first, ec);
  REQUIRE(held);
  CHECK_FALSE(acquire(*f.pool, second, ec));
  CHECK_FALSE(acquire(*f.pool, third, ec));
  CHECK(ferrum::detail::cancel_acquire(*f.pool, second));
  CHECK_FALSE(ferrum::detail::cancel_acquire(*f.pool, second));
  const std::uint32_t index = held.index();
  test::require(held.give_back(lane_return::fence_reached));
  CHECK(order == std::vector<int>{3});
  CHECK_FALSE(second.handed);
  REQUIRE(third.handed);
  CHECK(third.handed.index() == index);
  test::require(third.handed.give_back(lane_return::fence_reached));
}

TEST_CASE("lane_pool: a lane goes back only once the fence of its last submission is reached", "[scheduler]") {
  ferrum::gpu::null_device_options options;
  options.faults = {.hang = 1.0, .hang_duration = 100ms};
  pool_fixture f(1, options);
  held_lane held = take_free(*f.pool);
  const std::uint64_t value = f.device->queue().submit_next({}).value();
  test::require(held.record_submission({value}));
  const auto early = held.give_back(lane_return::fence_reached);
  REQUIRE_FALSE(early.has_value());
  CHECK(early.error() == errc::fence_not_reached);
  CHECK(held);  // still the holder's
  CHECK(f.pool->counts().in_flight == 1);
  test::require_reached(f.device->queue().timeline(), value);
  test::require(held.give_back(lane_return::fence_reached));
  CHECK(f.pool->counts().free == 1);
}

TEST_CASE("lane_pool: a lane given back unsubmitted waits in quarantine for a list its encoder submitted",
          "[scheduler]") {
  pool_fixture f(1, sched_test::hanging(150ms));
  held_lane held = take_free(*f.pool);
  const std::uint64_t value = submit_unrecorded(*f.device, held);
  CHECK(held.last_submitted() == value);  // read from the list: never recorded
  test::require(held.give_back(lane_return::unsubmitted));
  CHECK_FALSE(held);
  CHECK(f.pool->counts().quarantined == 1);
  test::require_reached(f.device->queue().timeline(), value);
  REQUIRE(sched_test::eventually([&] { return f.pool->counts().free == 1; }));
}

TEST_CASE("lane_pool: when every lane is quarantined, waiters fail with all_lanes_quarantined", "[scheduler]") {
  ferrum::gpu::null_device_options options;
  options.faults = {.hang = 1.0, .hang_duration = 100ms};
  pool_fixture f(2, options);
  std::vector<int> order;
  recording_waiter a(order, 1);
  recording_waiter b(order, 2);
  recording_waiter waiting(order, 3);
  boost::system::error_code ec;
  held_lane la = acquire(*f.pool, a, ec);
  held_lane lb = acquire(*f.pool, b, ec);
  REQUIRE((la && lb));
  test::require(la.record_submission({f.device->queue().submit_next({}).value()}));
  const std::uint64_t last = f.device->queue().submit_next({}).value();
  test::require(lb.record_submission({last}));
  CHECK_FALSE(acquire(*f.pool, waiting, ec));
  test::require(la.give_back(lane_return::quarantined));
  CHECK(order.empty());
  test::require(lb.give_back(lane_return::quarantined));
  CHECK(order == std::vector<int>{3});
  CHECK(waiting.ec == errc::all_lanes_quarantined);
  CHECK(f.pool->counts().quarantined == 2);
  recording_waiter later(order, 4);
  CHECK_FALSE(acquire(*f.pool, later, ec));
  CHECK(ec == errc::all_lanes_quarantined);
  // Quarantined lanes come back by themselves once their fences are reached.
  test::require_reached(f.device->queue().timeline(), last);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (f.pool->counts().free < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  CHECK(f.pool->counts().free == 2);
  CHECK(f.pool->counts().quarantined == 0);
}

TEST_CASE("lane_pool: closing fails queued and later waiters with the given code", "[scheduler]") {
  pool_fixture f(1);
  std::vector<int> order;
  recording_waiter a(order, 1);
  recording_waiter queued(order, 2);
  boost::system::error_code ec;
  held_lane held = acquire(*f.pool, a, ec);
  REQUIRE(held);
  CHECK_FALSE(acquire(*f.pool, queued, ec));
  f.pool->close(make_error_code(errc::scheduler_shut_down));
  CHECK(queued.ec == errc::scheduler_shut_down);
  recording_waiter later(order, 3);
  CHECK_FALSE(acquire(*f.pool, later, ec));
  CHECK(ec == errc::scheduler_shut_down);
  test::require(held.give_back(lane_return::fence_reached));
}

TEST_CASE("lane_pool: a bucket without binding nodes makes lanes whose nodes have no slot", "[scheduler]") {
  auto p = ferrum::test::plan_builder()
               .node("node/plain", {"resource/scratch"})
               .resource(ferrum::test::workspace_resource("resource/scratch", "pool/scratch", {64, 0, 0}))
               .bucket("step", {1, 1, 1}, {{"pool/scratch", 0, 1 << 20}})
               .build();
  auto program = ferrum::compile(p);
  REQUIRE(program.has_value());
  REQUIRE_FALSE(program->buckets[0].binding);
  auto device = ::test::null_device();
  const auto pool = lane_pool::create(*program, program->buckets[0], *device);
  REQUIRE(pool.has_value());
  held_lane held = take_free(**pool);
  CHECK(held->binding() == nullptr);
  CHECK_FALSE(held->node(0).has_value());
  CHECK(held->slot(0).size == 0);
  CHECK(held->resources(0).size() == 1);
  CHECK(held->resources(0)[0].range.size == program->buckets[0].lane.uses[0].size);
  CHECK(held->resources(0)[0].range.size >= 64);
  test::require(held.give_back(lane_return::fence_reached));
}

TEST_CASE("lane_pool: a lane places its images by the device's sizes, two transients sharing memory",
          "[scheduler][image]") {
  const ferrum::compiled_program program = ferrum::test::compile_ok(ferrum::test::image_copy_plan(2));
  auto device = ::test::null_device();
  const auto pool = ferrum::lane_pool::create(program, program.buckets[0], *device);
  REQUIRE(pool.has_value());
  const held_lane lease = take_free(**pool);
  const ferrum::lane_images& images = lease->images();
  REQUIRE(images.memory != nullptr);
  REQUIRE(images.memory->size() == 3);
  // The null device's 4 KiB pages: a and b share one, the history has its own.
  CHECK(images.bytes == 2 * 4096);
  CHECK(images.unaliased_bytes == 3 * 4096);
  const ferrum::lane_recipe& recipe = program.buckets[0].lane;
  for (std::size_t i = 0; i < 3; ++i) {
    const ferrum::gpu::image& img = images.memory->at(i);
    CHECK(img.spec().width == ferrum::test::image_width);
    CHECK(img.spec().height == ferrum::test::image_height);
    CHECK(img.spec().usage == (ferrum::gpu::image_usage::transfer_src | ferrum::gpu::image_usage::transfer_dst));
  }
  // Pools in id order: the history's page, then the one a and b share.
  REQUIRE(recipe.images[0].resource.view() == "image/history");
  CHECK(images.memory->at(0).offset() == 0);
  CHECK(images.memory->at(1).offset() == 4096);
  CHECK(images.memory->at(2).offset() == 4096);
  // Per node its images, in the plan's order, and its transitions.
  REQUIRE(lease->node_images(0).size() == 2);
  CHECK(lease->node_images(0)[0].id->view() == "image/a");
  CHECK(lease->node_images(0)[1].layout == ferrum::image_layout::transfer_dst);
  CHECK(lease->transitions(0).size() == 2);
  CHECK(lease->transitions(3).size() == 2);
  std::size_t transitions = 0;
  for (std::size_t n = 0; n < 4; ++n) transitions += lease->transitions(n).size();
  CHECK(transitions == recipe.transitions.size());
  // Image uses have no bytes in the lane's arenas.
  for (const ferrum::node_resource& r : lease->resources(0))
    if (r.id->view().starts_with("image/")) CHECK(r.range.empty());
}

TEST_CASE("lane_pool: a bucket whose lane recipe names no binding domain is missing_domain_layout", "[scheduler]") {
  // A program edited by hand: its binding layout covers no domain it knows.
  ferrum::compiled_program program = ferrum::test::compile_ok(ferrum::test::two_node_plan());
  program.buckets[0].lane.binding_domain = ferrum::lane_recipe::no_domain;
  auto device = ::test::null_device();
  const auto pool = lane_pool::create(program, program.buckets[0], *device);
  REQUIRE_FALSE(pool.has_value());
  CHECK(pool.error() == errc::missing_domain_layout);
  CHECK(pool.error().detail.find(program.buckets[0].id.str()) != std::string::npos);
}

TEST_CASE("lane_pool: async_acquire completes at once when a lane is free, else in FIFO order as leases end",
          "[scheduler]") {
  pool_fixture f(1);
  boost::asio::io_context context;
  std::vector<int> order;
  ferrum::lane_lease first;
  ferrum::async_acquire(*f.pool,
                        boost::asio::bind_executor(context, [&](boost::system::error_code ec, ferrum::lane_lease l) {
                          CHECK_FALSE(ec);
                          first = std::move(l);
                          order.push_back(1);
                        }));
  CHECK_FALSE(first);  // not inline
  run_ready(context);
  REQUIRE(first);
  const std::uint32_t only = first.index();
  ferrum::lane_lease later[2];
  for (int i = 0; i < 2; ++i) {
    ferrum::async_acquire(
        *f.pool, boost::asio::bind_executor(context, [&, i](boost::system::error_code ec, ferrum::lane_lease l) {
          CHECK_FALSE(ec);
          later[i] = std::move(l);
          order.push_back(i + 2);
        }));
  }
  run_ready(context);
  CHECK(f.pool->counts().waiting == 2);
  first.reset();
  run_ready(context);
  REQUIRE(later[0]);
  CHECK(later[0].index() == only);
  later[0].reset();
  run_ready(context);
  REQUIRE(later[1]);
  CHECK(later[1].index() == only);
  later[1].reset();
  CHECK(order == std::vector<int>{1, 2, 3});
  CHECK(f.pool->counts().free == 1);
}

TEST_CASE("lane_pool: a cancelled async_acquire completes with operation_aborted and is never handed a lane",
          "[scheduler]") {
  pool_fixture f(1);
  boost::asio::io_context context;
  held_lane held = take_free(*f.pool);
  boost::asio::cancellation_signal signal;
  std::optional<boost::system::error_code> result;
  bool granted = false;
  ferrum::async_acquire(
      *f.pool,
      boost::asio::bind_cancellation_slot(
          signal.slot(), boost::asio::bind_executor(context, [&](boost::system::error_code e, ferrum::lane_lease l) {
            result = e;
            granted = static_cast<bool>(l);
          })));
  CHECK(f.pool->counts().waiting == 1);
  signal.emit(boost::asio::cancellation_type::total);  // queued: no side effect, so total is honoured
  run_ready(context);
  CHECK(result == boost::asio::error::operation_aborted);
  CHECK_FALSE(granted);
  CHECK(f.pool->counts().waiting == 0);
  test::require(held.give_back(lane_return::fence_reached));
  CHECK(f.pool->counts().free == 1);
}

TEST_CASE("lane_pool: a handler without an executor completes on the pool's, which keeps outstanding work",
          "[scheduler]") {
  boost::asio::io_context context;
  const ferrum::plan plan = sched_test::make_plan(3, 1);
  const ferrum::compiled_program program = ferrum::test::compile_ok(plan);
  auto device = ::test::null_device();
  auto pool = test::require(lane_pool::create(program, program.buckets[0], *device, context.get_executor()));
  CHECK(pool->get_executor() == ferrum::lane_pool::executor_type(context.get_executor()));
  ferrum::lane_lease first;
  ferrum::async_acquire(*pool, [&](boost::system::error_code, ferrum::lane_lease l) { first = std::move(l); });
  run_ready(context);
  REQUIRE(first);
  bool on_pool_executor = false;
  std::thread releaser([&] {
    std::this_thread::sleep_for(50ms);
    first.reset();
  });
  ferrum::async_acquire(*pool, [&](boost::system::error_code ec, ferrum::lane_lease l) {
    on_pool_executor = !ec && l && context.get_executor().running_in_this_thread();
  });
  context.restart();
  context.run();  // waits for the queued acquisition: its work is counted
  releaser.join();
  CHECK(on_pool_executor);
}

TEST_CASE(
    "lane_lease: submit records the lane's fence, and a lease dropped before it is reached does not hand the lane on",
    "[scheduler]") {
  pool_fixture f(1, sched_test::hanging(150ms));
  boost::asio::io_context context;
  ferrum::lane_lease lease = lease_of(*f.pool, context);
  const std::uint64_t value = submit_empty_lists(lease);
  CHECK(lease.last_submitted() == value);
  bool next_granted = false;
  ferrum::async_acquire(*f.pool,
                        boost::asio::bind_executor(context, [&](boost::system::error_code ec, ferrum::lane_lease l) {
                          next_granted = !ec && l;
                          // The GPU is done with the lane when it is handed on.
                          CHECK(f.device->queue().timeline().reached(value));
                        }));
  run_ready(context);
  lease.reset();  // early: the GPU still runs the submission
  run_ready(context);
  CHECK_FALSE(next_granted);
  CHECK(f.pool->counts().in_flight == 1);
  test::require_reached(f.device->queue().timeline(), value);
  REQUIRE(sched_test::eventually([&] {
    run_ready(context);
    return next_granted;
  }));
}

TEST_CASE("held_lane: a handle whose hand-out is over gives back and records nothing, and empties", "[scheduler]") {
  pool_fixture f(2);
  held_lane held = take_free(*f.pool);
  held_lane twice[] = {forge(held), forge(held), forge(held)};
  test::require(held.give_back(lane_return::fence_reached));
  // Given back a second time, by any door: the lane is free, not this handle's.
  const auto again = twice[0].give_back(lane_return::fence_reached);
  CHECK(again.error() == errc::lane_not_held);
  CHECK_THAT(again.error().what(), Catch::Contains("lane 0") && Catch::Contains("it is free"));
  CHECK_FALSE(twice[0]);  // emptied: it gives back nothing when dropped
  CHECK(twice[1].give_back(lane_return::quarantined).error() == errc::lane_not_held);
  CHECK(twice[2].record_submission({1}).error() == errc::lane_not_held);
  CHECK(twice[2].give_back(lane_return::after_fence).error() == errc::lane_not_held);
  // An empty handle: nothing to give back, nothing to record into.
  held_lane empty;
  CHECK(empty.give_back(lane_return::quarantined).has_value());
  CHECK(empty.record_submission({1}).error() == errc::lane_not_held);
  CHECK(f.pool->counts().free == 2);  // a 2-lane pool still has exactly two lanes
  CHECK(f.pool->counts().quarantined == 0);
}

TEST_CASE("lane_pool: a give-back whose hand-out is over is refused, even when the lane is held again", "[scheduler]") {
  pool_fixture f(1);
  std::vector<int> order;
  recording_waiter first(order, 1);
  recording_waiter second(order, 2);
  boost::system::error_code ec;
  held_lane held = acquire(*f.pool, first, ec);
  REQUIRE(held);
  const std::uint64_t first_hold = held.hold();
  held_lane stale[] = {forge(held), forge(held), forge(held)};
  test::require(held.give_back(lane_return::fence_reached));
  held_lane again = acquire(*f.pool, second, ec);  // the same lane, a new holder
  REQUIRE(again);
  CHECK(again.index() == stale[0].index());
  CHECK(again.hold() != first_hold);
  // The first holder gives it back a second time: the second holder's lane.
  const auto late = stale[0].give_back(lane_return::fence_reached);
  CHECK(late.error() == errc::lane_not_held);
  CHECK_THAT(late.error().what(),
             Catch::Contains("hand-out " + std::to_string(first_hold)) && Catch::Contains("that hand-out is over"));
  CHECK(stale[1].give_back(lane_return::quarantined).error() == errc::lane_not_held);
  CHECK(stale[2].give_back(lane_return::after_fence).error() == errc::lane_not_held);
  CHECK(f.pool->counts().in_flight == 1);
  test::require(again.give_back(lane_return::fence_reached));
  CHECK(f.pool->counts().free == 1);
}

TEST_CASE("lane_lease: a lease whose hand-out is over gives back nothing of a later holder's", "[scheduler]") {
  // The adversarial order: a lease's lane given back by another handle,
  // both lanes taken again, then the stale lease dropped. It must not free
  // the lane it once held: two holders would share one arena.
  pool_fixture f(2);
  boost::asio::io_context context;
  const auto take = [&](ferrum::lane_lease& into) {
    ferrum::async_acquire(
        *f.pool, boost::asio::bind_executor(context, [&into](boost::system::error_code ec, ferrum::lane_lease l) {
          CHECK_FALSE(ec);
          into = std::move(l);
        }));
    run_ready(context);
  };
  held_lane held = take_free(*f.pool);
  ferrum::lane_lease stale(forge(held));
  test::require(held.give_back(lane_return::fence_reached));
  ferrum::lane_lease a;
  ferrum::lane_lease b;
  take(a);
  take(b);
  REQUIRE((a && b));
  CHECK(((a.index() == stale.index()) || (b.index() == stale.index())));
  CHECK(stale.submit().error() == errc::lane_not_held);  // the lists are a later holder's
  stale.reset();
  CHECK_FALSE(stale);
  const auto c = f.pool->counts();
  CHECK(c.in_flight == 2);
  CHECK(c.free == 0);
  bool third_granted = false;
  ferrum::async_acquire(
      *f.pool, boost::asio::bind_executor(
                   context, [&](boost::system::error_code e, ferrum::lane_lease l) { third_granted = !e && l; }));
  run_ready(context);
  CHECK_FALSE(third_granted);  // both lanes are held: it waits
  CHECK(f.pool->counts().waiting == 1);
  a.reset();
  run_ready(context);
  CHECK(third_granted);
}

TEST_CASE("lane_lease: a lane its lease gave back while its fence is pending is no longer held", "[scheduler]") {
  pool_fixture f(1, sched_test::hanging(300ms));
  held_lane held = take_free(*f.pool);
  held_lane after[] = {forge(held), forge(held), forge(held)};
  ferrum::lane_lease lease(std::move(held));
  const std::uint64_t value = submit_empty_lists(lease);
  const std::size_t pending_before = f.device->queue().timeline().pending();
  lease.reset();  // the fence watch has the lane now
  CHECK(f.device->queue().timeline().pending() == pending_before + 1);
  CHECK(f.pool->counts().in_flight == 1);
  const auto released = after[0].give_back(lane_return::fence_reached);
  CHECK(released.error() == errc::lane_not_held);
  CHECK_THAT(released.error().what(), Catch::Contains("its fence watch returns it"));
  // Quarantining it would link the same watch into the timeline twice.
  CHECK(after[1].give_back(lane_return::quarantined).error() == errc::lane_not_held);
  CHECK(after[2].give_back(lane_return::after_fence).error() == errc::lane_not_held);
  CHECK(f.device->queue().timeline().pending() == pending_before + 1);
  CHECK(f.pool->counts().quarantined == 0);
  test::require_reached(f.device->queue().timeline(), value);
  REQUIRE(sched_test::eventually([&] { return f.pool->counts().free == 1; }));
  CHECK(f.device->queue().timeline().pending() == pending_before);
}

TEST_CASE(
    "lane_pool: a give-back reads the lane's lists, so a lane whose fence was never recorded waits for its "
    "GPU work",
    "[scheduler]") {
  pool_fixture f(1, sched_test::hanging(150ms));
  held_lane held = take_free(*f.pool);
  const std::uint64_t value = submit_unrecorded(*f.device, held);
  // The holder forgot to record it.
  CHECK(held.give_back(lane_return::fence_reached).error() == errc::fence_not_reached);
  REQUIRE(held);
  test::require_reached(f.device->queue().timeline(), value);
  test::require(held.give_back(lane_return::fence_reached));
}

TEST_CASE(
    "lane_pool: async_acquire works with use_future, deferred, use_awaitable, awaitable operators and "
    "parallel_group",
    "[scheduler]") {
  boost::asio::io_context context;
  const ferrum::plan plan = sched_test::make_plan(3, 2);
  const ferrum::compiled_program program = ferrum::test::compile_ok(plan);
  auto device = ::test::null_device();
  auto pool = test::require(lane_pool::create(program, program.buckets[0], *device, context.get_executor()));

  // parallel_group: both lanes at once.
  std::optional<std::array<std::size_t, 2>> order;
  ferrum::lane_lease held[2];
  boost::asio::experimental::make_parallel_group(ferrum::async_acquire(*pool, boost::asio::deferred),
                                                 ferrum::async_acquire(*pool, boost::asio::deferred))
      .async_wait(boost::asio::experimental::wait_for_all(),
                  [&](std::array<std::size_t, 2> o, boost::system::error_code, ferrum::lane_lease a,
                      boost::system::error_code, ferrum::lane_lease b) {
                    order = o;
                    held[0] = std::move(a);
                    held[1] = std::move(b);
                  });
  context.run();
  REQUIRE(order.has_value());
  REQUIRE((held[0] && held[1]));

  // use_awaitable and ||: with every lane held, the timer wins and the
  // queued acquisition is cancelled and leaves the queue.
  auto race = [](lane_pool* p) -> boost::asio::awaitable<bool> {
    using namespace boost::asio::experimental::awaitable_operators;
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, 10ms);
    auto winner = co_await (ferrum::async_acquire(*p, boost::asio::use_awaitable) ||
                            timer.async_wait(boost::asio::use_awaitable));
    co_return winner.index() == 1;
  };
  std::future<bool> timer_won = boost::asio::co_spawn(context, race(pool.get()), boost::asio::use_future);
  context.restart();
  context.run();
  CHECK(timer_won.get());
  CHECK(pool->counts().waiting == 0);
  held[0].reset();
  held[1].reset();

  // deferred: nothing queued until launched; use_future: the lease (on
  // use_future's own executor).
  auto op = ferrum::async_acquire(*pool, boost::asio::deferred);
  CHECK(pool->counts().free == 2);
  std::future<ferrum::lane_lease> later = std::move(op)(boost::asio::use_future);
  REQUIRE(later.wait_for(10s) == std::future_status::ready);
  CHECK(later.get());  // its lease ends here
}

TEST_CASE("lane_pool: async_acquire with experimental::use_promise delivers the lease", "[scheduler]") {
  boost::asio::io_context context;
  const ferrum::plan plan = sched_test::make_plan(3, 1);
  const ferrum::compiled_program program = ferrum::test::compile_ok(plan);
  auto device = ::test::null_device();
  auto pool = test::require(lane_pool::create(program, program.buckets[0], *device, context.get_executor()));
  auto promise = ferrum::async_acquire(*pool, boost::asio::experimental::use_promise);
  // Awaited once complete: Boost 1.81's promise hands a handler attached
  // before completion the arguments it has already moved into its own
  // storage, so a move-only lease would reach that handler empty (the lane
  // then goes back when the promise is destroyed).
  context.run();
  ferrum::lane_lease got;
  promise([&](boost::system::error_code ec, ferrum::lane_lease lease) {
    if (!ec) got = std::move(lease);
  });
  context.restart();
  context.run();
  REQUIRE(got);
  CHECK(got.pool() == pool.get());
  CHECK(pool->counts().in_flight == 1);
  got.reset();
  CHECK(pool->counts().free == 1);
}

TEST_CASE("lane_pool: a granted lane whose handler's executor is destroyed first goes back to the pool",
          "[scheduler]") {
  const ferrum::plan plan = sched_test::make_plan(3, 1);
  const ferrum::compiled_program program = ferrum::test::compile_ok(plan);
  auto device = ::test::null_device();
  auto pool = test::require(lane_pool::create(program, program.buckets[0], *device));
  bool handled = false;
  {
    boost::asio::io_context never_run;
    ferrum::async_acquire(*pool, boost::asio::bind_executor(never_run, [&](boost::system::error_code,
                                                                           ferrum::lane_lease) { handled = true; }));
    CHECK(pool->counts().in_flight == 1);  // granted, its completion queued
  }
  CHECK_FALSE(handled);
  CHECK(pool->counts().free == 1);
}
