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

// A waiter that records what it was granted.
struct recording_waiter : lane_pool::waiter {
  recording_waiter(std::vector<int>& order, int number)
      : lane_pool::waiter(&on_handed), order_(&order), number_(number) {}
  static void on_handed(lane_pool::waiter* w, boost::system::error_code ec, ferrum::lane* l) noexcept {
    auto* self = static_cast<recording_waiter*>(w);
    self->ec = ec;
    self->granted = l;
    self->order_->push_back(self->number_);
  }
  boost::system::error_code ec;
  ferrum::lane* granted = nullptr;

 private:
  std::vector<int>* order_;
  int number_;
};

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
  for (auto& list : lease->lists) {
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
  ferrum::lane& l = *lease;
  ferrum::gpu::arena& upload = *l.arena_of(ferrum::memory_class::upload);
  REQUIRE(upload.staged());
  REQUIRE(l.stage_in != nullptr);
  CHECK(l.stage_out == nullptr);  // no readback pool
  CHECK(l.all_lists.size() == l.lists.size() + 1);
  CHECK(l.all_lists.front() == l.stage_in.get());
  // The host writes the first slot; node 0's list copies it out where the
  // host can read it.
  const std::uint32_t word = 0x1234abcdu;
  std::memcpy(upload.bytes().data() + l.slots[0].offset, &word, 4);
  auto out = test::require(f.device->create_arena(4));
  for (std::size_t n = 0; n < l.lists.size(); ++n) {
    test::require(l.lists[n]->begin());
    if (n == 0) test::require(l.lists[n]->copy(upload.range(l.slots[0].offset, 4), out->whole()));
    test::require(l.lists[n]->end());
  }
  const std::uint64_t value = test::require(lease.submit());
  test::require_reached(f.device->queue().timeline(), value);
  CHECK(test::word_at(*out, 0) == word);
}

TEST_CASE("lane_pool: each lane has its own arena per window of the bucket, its evidence and a list per node",
          "[scheduler]") {
  pool_fixture f(3);
  REQUIRE(f.pool->lanes().size() == 3);
  const ferrum::compiled_bucket& bucket = f.program.buckets[0];
  for (const auto& l : f.pool->lanes()) {
    for (ferrum::memory_class c : ferrum::memory_classes) {
      INFO(ferrum::to_string(c));
      const ferrum::gpu::arena* arena = l->arena_of(c);
      CHECK((arena != nullptr) == (bucket.window(c).size != 0));
      if (arena != nullptr) {
        CHECK(arena->size() == bucket.window(c).size);
        CHECK(arena->cls() == c);
      }
    }
    const ferrum::gpu::arena& upload = *l->arena_of(ferrum::memory_class::upload);
    CHECK(l->binding_target.arena.size() == bucket.binding->physical_size_bytes());
    CHECK(l->binding_target.arena.data() == upload.bytes().data());
    CHECK(l->lists.size() == 3);
    CHECK(l->submit_lists.size() == 3);
    CHECK_FALSE(l->evidence.empty());
  }
  CHECK(f.pool->lanes()[0]->arena_of(ferrum::memory_class::upload)->bytes().data() !=
        f.pool->lanes()[1]->arena_of(ferrum::memory_class::upload)->bytes().data());
  const auto c = f.pool->counts();
  CHECK(c.lanes == 3);
  CHECK(c.free == 3);
}

TEST_CASE("lane_pool: a waiter queued first is served first", "[scheduler]") {
  pool_fixture f(1);
  std::vector<int> order;
  recording_waiter first(order, 1);
  boost::system::error_code ec;
  ferrum::lane* held = f.pool->acquire(first, ec);
  REQUIRE(held != nullptr);
  std::vector<std::unique_ptr<recording_waiter>> queued;
  for (int i = 2; i <= 5; ++i) {
    queued.push_back(std::make_unique<recording_waiter>(order, i));
    CHECK(f.pool->acquire(*queued.back(), ec) == nullptr);
    CHECK_FALSE(ec);
  }
  CHECK(f.pool->counts().waiting == 4);
  for (int i = 0; i < 4; ++i) {
    test::require(f.pool->release(*held, held->hold));
    held = queued[static_cast<std::size_t>(i)]->granted;
    REQUIRE(held != nullptr);
  }
  CHECK(order == std::vector<int>{2, 3, 4, 5});
  test::require(f.pool->release(*held, held->hold));
  CHECK(f.pool->counts().free == 1);
}

TEST_CASE("lane_pool: a cancelled waiter is removed and never handed a lane", "[scheduler]") {
  pool_fixture f(1);
  std::vector<int> order;
  recording_waiter first(order, 1);
  recording_waiter second(order, 2);
  recording_waiter third(order, 3);
  boost::system::error_code ec;
  ferrum::lane* held = f.pool->acquire(first, ec);
  REQUIRE(held != nullptr);
  CHECK(f.pool->acquire(second, ec) == nullptr);
  CHECK(f.pool->acquire(third, ec) == nullptr);
  CHECK(f.pool->cancel(second));
  CHECK_FALSE(f.pool->cancel(second));
  test::require(f.pool->release(*held, held->hold));
  CHECK(order == std::vector<int>{3});
  CHECK(second.granted == nullptr);
  CHECK(third.granted == held);
  test::require(f.pool->release(*held, held->hold));
}

TEST_CASE("lane_pool: a lane goes back only once the fence of its last submission is reached", "[scheduler]") {
  ferrum::gpu::null_device_options options;
  options.faults = {.hang = 1.0, .hang_duration = 100ms};
  pool_fixture f(1, options);
  std::vector<int> order;
  recording_waiter first(order, 1);
  boost::system::error_code ec;
  ferrum::lane* held = f.pool->acquire(first, ec);
  REQUIRE(held != nullptr);
  held->submitted_value = f.device->queue().submit_next({}).value();
  const auto early = f.pool->release(*held, held->hold);
  REQUIRE_FALSE(early.has_value());
  CHECK(early.error() == errc::fence_not_reached);
  CHECK(f.pool->counts().in_flight == 1);
  test::require_reached(f.device->queue().timeline(), held->submitted_value);
  test::require(f.pool->release(*held, held->hold));
  CHECK(f.pool->counts().free == 1);
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
  ferrum::lane* la = f.pool->acquire(a, ec);
  ferrum::lane* lb = f.pool->acquire(b, ec);
  REQUIRE((la != nullptr && lb != nullptr));
  la->submitted_value = f.device->queue().submit_next({}).value();
  lb->submitted_value = f.device->queue().submit_next({}).value();
  CHECK(f.pool->acquire(waiting, ec) == nullptr);
  test::require(f.pool->quarantine(*la, la->hold));
  CHECK(order.empty());
  test::require(f.pool->quarantine(*lb, lb->hold));
  CHECK(order == std::vector<int>{3});
  CHECK(waiting.ec == errc::all_lanes_quarantined);
  CHECK(f.pool->counts().quarantined == 2);
  recording_waiter later(order, 4);
  CHECK(f.pool->acquire(later, ec) == nullptr);
  CHECK(ec == errc::all_lanes_quarantined);
  // Quarantined lanes come back by themselves once their fences are reached.
  test::require_reached(f.device->queue().timeline(), lb->submitted_value);
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
  ferrum::lane* held = f.pool->acquire(a, ec);
  CHECK(f.pool->acquire(queued, ec) == nullptr);
  f.pool->close(make_error_code(errc::scheduler_shut_down));
  CHECK(queued.ec == errc::scheduler_shut_down);
  recording_waiter later(order, 3);
  CHECK(f.pool->acquire(later, ec) == nullptr);
  CHECK(ec == errc::scheduler_shut_down);
  test::require(f.pool->release(*held, held->hold));
}

TEST_CASE("lane_pool: a bucket without binding nodes has no layout to bind and is refused", "[scheduler]") {
  auto p = ferrum::test::plan_builder()
               .node("node/plain", {"resource/scratch"})
               .resource(ferrum::test::workspace_resource("resource/scratch", "pool/scratch", {64, 0, 0}))
               .bucket("step", {1, 1, 1}, {{"pool/scratch", 0, 1 << 20}})
               .build();
  auto program = ferrum::compile(p);
  REQUIRE(program.has_value());
  auto device = ::test::null_device();
  const auto pool = lane_pool::create(*program, program->buckets[0], *device);
  REQUIRE_FALSE(pool.has_value());
  CHECK(pool.error() == errc::no_binding_layout);
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
  ferrum::lane* const only = first.get();
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
  REQUIRE(later[0].get() == only);
  later[0].reset();
  run_ready(context);
  REQUIRE(later[1].get() == only);
  later[1].reset();
  CHECK(order == std::vector<int>{1, 2, 3});
  CHECK(f.pool->counts().free == 1);
}

TEST_CASE("lane_pool: a cancelled async_acquire completes with operation_aborted and is never handed a lane",
          "[scheduler]") {
  pool_fixture f(1);
  boost::asio::io_context context;
  std::vector<int> order;
  recording_waiter holder(order, 1);
  boost::system::error_code ec;
  ferrum::lane* held = f.pool->acquire(holder, ec);
  REQUIRE(held != nullptr);
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
  test::require(f.pool->release(*held, held->hold));
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
  CHECK(lease->submitted_value == value);
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

TEST_CASE("lane_pool: release and quarantine refuse a lane given back twice, one never acquired, and another pool's",
          "[scheduler]") {
  pool_fixture f(2);
  pool_fixture other(1);
  std::vector<int> order;
  recording_waiter a(order, 1);
  boost::system::error_code ec;
  ferrum::lane* held = f.pool->acquire(a, ec);
  REQUIRE(held != nullptr);
  const std::uint64_t hold = held->hold;
  test::require(f.pool->release(*held, hold));
  CHECK(f.pool->release(*held, hold).error() == errc::lane_not_held);  // twice
  CHECK(f.pool->quarantine(*held, hold).error() == errc::lane_not_held);
  const ferrum::lane& never = *f.pool->lanes()[1];
  CHECK(f.pool->release(*f.pool->lanes()[1], never.hold).error() == errc::lane_not_held);  // never acquired
  recording_waiter b(order, 2);
  ferrum::lane* foreign = other.pool->acquire(b, ec);
  REQUIRE(foreign != nullptr);
  const auto refused = f.pool->release(*foreign, foreign->hold);
  CHECK(refused.error() == errc::foreign_lane);
  CHECK_THAT(refused.error().what(), Catch::Contains("lane 0"));
  CHECK(f.pool->quarantine(*foreign, foreign->hold).error() == errc::foreign_lane);
  CHECK(f.pool->counts().free == 2);  // a 2-lane pool still has exactly two lanes
  test::require(other.pool->release(*foreign, foreign->hold));
}

TEST_CASE("lane_pool: a give-back whose hand-out is over is refused, even when the lane is held again", "[scheduler]") {
  pool_fixture f(1);
  std::vector<int> order;
  recording_waiter first(order, 1);
  recording_waiter second(order, 2);
  boost::system::error_code ec;
  ferrum::lane* held = f.pool->acquire(first, ec);
  REQUIRE(held != nullptr);
  const std::uint64_t first_hold = held->hold;
  test::require(f.pool->release(*held, first_hold));
  REQUIRE(f.pool->acquire(second, ec) == held);  // the same lane, a new holder
  const std::uint64_t second_hold = held->hold;
  CHECK(second_hold != first_hold);
  // The first holder gives it back a second time: the second holder's lane.
  const auto stale = f.pool->release(*held, first_hold);
  CHECK(stale.error() == errc::lane_not_held);
  CHECK_THAT(stale.error().what(),
             Catch::Contains("hand-out " + std::to_string(first_hold)) && Catch::Contains("that hand-out is over"));
  CHECK(f.pool->quarantine(*held, first_hold).error() == errc::lane_not_held);
  CHECK(f.pool->release_when_reached(*held, first_hold).error() == errc::lane_not_held);
  CHECK(f.pool->counts().in_flight == 1);
  test::require(f.pool->release(*held, second_hold));
  CHECK(f.pool->counts().free == 1);
}

TEST_CASE("lane_lease: a lease whose lane was given back through the pool gives back nothing of a later holder's",
          "[scheduler]") {
  // The adversarial order: a lease's lane released through the pool, both
  // lanes taken again, then the stale lease dropped. It must not free the
  // lane it once held: two holders would share one arena.
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
  ferrum::lane_lease stale;
  take(stale);
  REQUIRE(stale);
  test::require(f.pool->release(*stale, stale.hold()));
  ferrum::lane_lease a;
  ferrum::lane_lease b;
  take(a);
  take(b);
  REQUIRE((a && b));
  CHECK(((a.get() == stale.get()) || (b.get() == stale.get())));
  CHECK(stale.submit().error() == errc::lane_not_held);  // the lists are a later holder's
  stale.reset();
  CHECK_FALSE(stale);
  const auto c = f.pool->counts();
  CHECK(c.in_flight == 2);
  CHECK(c.free == 0);
  bool third_granted = false;
  ferrum::async_acquire(
      *f.pool, boost::asio::bind_executor(
                   context, [&](boost::system::error_code ec, ferrum::lane_lease l) { third_granted = !ec && l; }));
  run_ready(context);
  CHECK_FALSE(third_granted);  // both lanes are held: it waits
  CHECK(f.pool->counts().waiting == 1);
  a.reset();
  run_ready(context);
  CHECK(third_granted);
}

TEST_CASE("lane_lease: a lane its lease gave back while its fence is pending is no longer held", "[scheduler]") {
  pool_fixture f(1, sched_test::hanging(300ms));
  boost::asio::io_context context;
  ferrum::lane_lease lease = lease_of(*f.pool, context);
  const std::uint64_t value = submit_empty_lists(lease);
  ferrum::lane& l = *lease;
  const std::uint64_t hold = lease.hold();
  const std::size_t pending_before = f.device->queue().timeline().pending();
  lease.reset();  // the fence watch has the lane now
  CHECK(f.device->queue().timeline().pending() == pending_before + 1);
  CHECK(f.pool->counts().in_flight == 1);
  const auto released = f.pool->release(l, hold);
  CHECK(released.error() == errc::lane_not_held);
  CHECK_THAT(released.error().what(), Catch::Contains("its fence watch returns it"));
  // Quarantining it would link the same watch into the timeline twice.
  CHECK(f.pool->quarantine(l, hold).error() == errc::lane_not_held);
  CHECK(f.pool->release_when_reached(l, hold).error() == errc::lane_not_held);
  CHECK(f.device->queue().timeline().pending() == pending_before + 1);
  CHECK(f.pool->counts().quarantined == 0);
  test::require_reached(f.device->queue().timeline(), value);
  REQUIRE(sched_test::eventually([&] { return f.pool->counts().free == 1; }));
  CHECK(f.device->queue().timeline().pending() == pending_before);
}

TEST_CASE("lane_pool: release reads the lane's lists, so a lane whose fence was never recorded waits for its GPU work",
          "[scheduler]") {
  pool_fixture f(1, sched_test::hanging(150ms));
  std::vector<int> order;
  recording_waiter a(order, 1);
  boost::system::error_code ec;
  ferrum::lane* held = f.pool->acquire(a, ec);
  REQUIRE(held != nullptr);
  test::require(held->lists[0]->begin());
  test::require(held->lists[0]->end());
  ferrum::gpu::command_list* lists[] = {held->lists[0].get()};
  const std::uint64_t value = test::require(f.device->queue().submit_next(lists));
  CHECK(held->submitted_value == 0);  // the holder forgot it
  CHECK(f.pool->release(*held, held->hold).error() == errc::fence_not_reached);
  test::require_reached(f.device->queue().timeline(), value);
  test::require(f.pool->release(*held, held->hold));
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
