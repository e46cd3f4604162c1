// Waves that wait on and signal the engine's semaphores (wave_request::wait,
// ::signal) on the null device: the wave's GPU work holds back until its
// waits are signalled, its signals come after it; a wave that fails or is
// cancelled passes them on in an empty submission; refused requests name
// what is wrong; the semaphores are copied when async_submit is called.
#include "contract_fixture.hpp"
#include "scheduler_support.hpp"
#include "two_queue_waves.hpp"

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/deferred.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>
#include <thread>

using namespace std::chrono_literals;
using ferrum::errc;
using ferrum::gpu::semaphore_kind;
using ferrum::gpu::semaphore_op;
using ferrum::gpu::sync_stage;
using sched_test::eventually;
using sched_test::fixture;

namespace {

// Counts, from the device's queue, that a node's GPU work ran.
struct gpu_runs {
  std::atomic<int> count{0};
  void operator()() noexcept { count.fetch_add(1); }
};

// An encoder that puts a host function into every node's list: it runs when
// the device runs the node's work.
struct counting_encoder {
  gpu_runs* runs;
  void operator()(const ferrum::encode_context& c) const {
    if (auto r = c.commands.host(ferrum::gpu::host_call(*runs)); !r) throw std::runtime_error(r.error().what());
  }
};

std::unique_ptr<ferrum::gpu::semaphore> make_semaphore(ferrum::gpu::device& d, semaphore_kind kind) {
  auto made = d.create_semaphore(kind);
  REQUIRE(made.has_value());
  return std::move(*made);
}

std::uint64_t value_of(const ferrum::gpu::semaphore& s) {
  auto v = s.value();
  REQUIRE(v.has_value());
  return *v;
}

// Waits for `s` to reach `value` (a binary semaphore: that many signals).
bool reaches(const ferrum::gpu::semaphore& s, std::uint64_t value) {
  auto r = s.wait_from_host(value, 10s);
  REQUIRE(r.has_value());
  return *r;
}

// A wave's engine sync: it waits on `wait` and signals `signal`, both binary.
struct binary_pair {
  std::unique_ptr<ferrum::gpu::semaphore> wait;
  std::unique_ptr<ferrum::gpu::semaphore> signal;
  std::array<semaphore_op, 1> waits;
  std::array<semaphore_op, 1> signals;

  explicit binary_pair(ferrum::gpu::device& d)
      : wait(make_semaphore(d, semaphore_kind::binary)), signal(make_semaphore(d, semaphore_kind::binary)) {
    waits = {{{wait.get(), 0, sync_stage::transfer}}};
    signals = {{{signal.get(), 0, sync_stage::all}}};
  }
  [[nodiscard]] ferrum::wave_request request(std::string_view cls = "step") const {
    return {cls, {1, 1, 1}, waits, signals};
  }
};

// An encoder that records nothing.
struct empty_encoder {
  void operator()(const ferrum::encode_context&) const {}
};

// A wave with binary_pair semaphores (its wait signalled) queued for the one
// lane behind a first wave whose submission hangs for `hang`; the queued
// wave's handler is bound to `cancel`.
struct queued_behind_hanging_wave {
  fixture f;
  empty_encoder encode;
  std::future<sched_test::outcome> first;
  binary_pair sync;
  boost::asio::cancellation_signal cancel;
  std::future<sched_test::outcome> queued;

  explicit queued_behind_hanging_wave(std::chrono::milliseconds hang)
      : f(2, 1, sched_test::hanging(hang)),
        first([this] {
          auto wave = sched_test::submit(*f.scheduler, encode);
          REQUIRE(eventually([&] { return f.device->queue().last_submitted() == 1; }));
          return wave;
        }()),
        sync(*f.device) {
    REQUIRE(sync.wait->signal_from_host(0).has_value());
    queued = sched_test::submit_cancellable(*f.scheduler, encode, cancel, sync.request());
    REQUIRE(eventually([&] { return f.scheduler->pools()[0]->counts().waiting == 1; }));
  }
};

}  // namespace

TEST_CASE("wave sync: a wave's GPU work waits for the engine's timeline value, then it signals the engine's",
          "[scheduler]") {
  fixture f(3, 1);
  auto engine = make_semaphore(*f.device, semaphore_kind::timeline);
  auto done_by_wave = make_semaphore(*f.device, semaphore_kind::timeline);
  const semaphore_op waits[] = {{engine.get(), 3, sync_stage::compute}};
  const semaphore_op signals[] = {{done_by_wave.get(), 7, sync_stage::all}};
  gpu_runs runs;
  counting_encoder encode{&runs};
  auto wave = sched_test::submit(*f.scheduler, encode, {"step", {1, 1, 1}, waits, signals});
  // Submitted, held back by the wait: nothing of it runs, nothing is signalled.
  REQUIRE(eventually([&] { return f.device->queue().last_submitted() == 1; }));
  REQUIRE(engine->signal_from_host(2).has_value());  // not yet the value waited for
  CHECK(wave.wait_for(50ms) == std::future_status::timeout);
  CHECK(runs.count.load() == 0);
  CHECK(value_of(*done_by_wave) == 0);
  REQUIRE(engine->signal_from_host(3).has_value());
  const auto o = sched_test::get(wave);
  CHECK_FALSE(o.ec);
  CHECK(runs.count.load() == 3);
  // Signalled before the wave's own value was reached, so seen at once.
  CHECK(value_of(*done_by_wave) == 7);
  CHECK(f.device->queue().last_submitted() == 1);  // one submission: nothing more than the wave
}

TEST_CASE("wave sync: binary semaphores: the wave consumes its wait's signal and signals its own", "[scheduler]") {
  fixture f(2, 2);
  binary_pair sync(*f.device);
  gpu_runs runs;
  counting_encoder encode{&runs};
  REQUIRE(sync.wait->signal_from_host(0).has_value());
  CHECK(value_of(*sync.wait) == 1);
  auto first = sched_test::submit(*f.scheduler, encode, sync.request());
  CHECK_FALSE(sched_test::get(first).ec);
  CHECK(value_of(*sync.wait) == 0);  // consumed
  CHECK(value_of(*sync.signal) == 1);
  // A second wave waits for a second signal.
  auto second = sched_test::submit(*f.scheduler, encode, sync.request());
  REQUIRE(eventually([&] { return f.device->queue().last_submitted() == 2; }));
  CHECK(second.wait_for(50ms) == std::future_status::timeout);
  CHECK(runs.count.load() == 2);
  REQUIRE(sync.wait->signal_from_host(0).has_value());
  CHECK_FALSE(sched_test::get(second).ec);
  CHECK(runs.count.load() == 4);
  CHECK(value_of(*sync.signal) == 2);
}

TEST_CASE("wave sync: over two queues, every queue's work waits for the engine and the join signals", "[scheduler]") {
  const ferrum::plan plan = two_queue_waves::two_queue_plan();
  const auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(plan));
  auto device = ::test::null_device({});
  REQUIRE(device->queue_count() == 2);
  boost::asio::thread_pool pool(2);
  auto s = ferrum::scheduler::create(program, *device, pool.get_executor(), {});
  REQUIRE(s.has_value());
  auto engine = make_semaphore(*device, semaphore_kind::timeline);
  auto done_by_wave = make_semaphore(*device, semaphore_kind::timeline);
  const semaphore_op waits[] = {{engine.get(), 1, sync_stage::all}};
  const semaphore_op signals[] = {{done_by_wave.get(), 1, sync_stage::all}};
  gpu_runs runs;
  counting_encoder encode{&runs};
  auto wave = sched_test::submit(**s, encode, {"step", {1, 1, 1}, waits, signals});
  ferrum::gpu::queue& transfer = device->queue(ferrum::queue_kind::transfer);
  // The first transfer segment (upload, copy's queue) was submitted: it
  // waits for the gate, as the compute segments do.
  REQUIRE(eventually([&] { return transfer.last_submitted() >= 1; }));
  CHECK(wave.wait_for(50ms) == std::future_status::timeout);
  CHECK(runs.count.load() == 0);
  CHECK(value_of(*done_by_wave) == 0);
  REQUIRE(engine->signal_from_host(1).has_value());
  const auto o = sched_test::get(wave);
  CHECK_FALSE(o.ec);
  CHECK(runs.count.load() == 5);
  CHECK(value_of(*done_by_wave) == 1);
  s->reset();
  pool.join();
}

TEST_CASE("wave sync: a wave that fails or is cancelled still waits on and signals the engine's semaphores",
          "[scheduler]") {
  SECTION("no bucket fits: the pass-on still waits for the engine's wait before it signals") {
    fixture f(2, 1);
    auto engine = make_semaphore(*f.device, semaphore_kind::timeline);
    auto done_by_wave = make_semaphore(*f.device, semaphore_kind::timeline);
    const semaphore_op waits[] = {{engine.get(), 1, sync_stage::all}};
    const semaphore_op signals[] = {{done_by_wave.get(), 4, sync_stage::all}};
    auto encode = [](const ferrum::encode_context&) { FAIL("a wave without a bucket encoded"); };
    auto wave = sched_test::submit(*f.scheduler, encode, {"no-such-class", {1, 1, 1}, waits, signals});
    CHECK(sched_test::get(wave).ec == errc::no_bucket_fits);
    CHECK(f.device->queue().last_submitted() == 1);  // the empty submission
    auto early = done_by_wave->wait_from_host(4, 50ms);
    REQUIRE(early.has_value());
    CHECK_FALSE(*early);
    REQUIRE(engine->signal_from_host(1).has_value());
    CHECK(reaches(*done_by_wave, 4));
  }
  SECTION("an encoder throws") {
    fixture f(3, 1);
    binary_pair sync(*f.device);
    REQUIRE(sync.wait->signal_from_host(0).has_value());
    auto encode = [](const ferrum::encode_context& c) {
      if (c.node_index == 1) throw std::runtime_error("engine state went away");
    };
    auto wave = sched_test::submit(*f.scheduler, encode, sync.request());
    const auto o = sched_test::get(wave);
    CHECK(o.ec == errc::encoder_failed);
    CHECK(reaches(*sync.signal, 1));
    CHECK(value_of(*sync.wait) == 0);
    CHECK(f.scheduler->pools()[0]->counts().free == 1);
  }
  SECTION("cancelled (terminal) while queued for a lane") {
    queued_behind_hanging_wave w(300ms);
    w.cancel.emit(boost::asio::cancellation_type::terminal);
    CHECK(sched_test::get(w.queued).ec == boost::asio::error::operation_aborted);
    // Passed on behind the hanging wave, on the same queue.
    CHECK(reaches(*w.sync.signal, 1));
    CHECK(value_of(*w.sync.wait) == 0);
    CHECK_FALSE(sched_test::get(w.first).ec);
  }
  SECTION("after async_shutdown") {
    fixture f(2, 1);
    binary_pair sync(*f.device);
    REQUIRE(sync.wait->signal_from_host(0).has_value());
    std::promise<boost::system::error_code> shut;
    f.scheduler->async_shutdown([&](boost::system::error_code ec) { shut.set_value(ec); });
    auto encode = [](const ferrum::encode_context&) {};
    auto wave = sched_test::submit(*f.scheduler, encode, sync.request());
    CHECK(sched_test::get(wave).ec == errc::scheduler_shut_down);
    CHECK(reaches(*sync.signal, 1));
    CHECK(value_of(*sync.wait) == 0);
    CHECK_FALSE(shut.get_future().get());
  }
  SECTION("on a lost device nothing can pass them on: the report says so") {
    fixture f(2, 1);
    binary_pair sync(*f.device);
    f.device->lose();
    auto encode = [](const ferrum::encode_context&) {};
    auto wave = sched_test::submit(*f.scheduler, encode, sync.request());
    const auto o = sched_test::get(wave);
    CHECK(o.ec == errc::device_lost);
    CHECK_THAT(o.report.message, Catch::Contains("the wave's semaphores could not be passed on: device_lost"));
    CHECK(value_of(*sync.signal) == 0);
  }
}

TEST_CASE("wave sync: total cancellation is ignored by a wave with semaphores, which cannot stop without effects",
          "[scheduler]") {
  queued_behind_hanging_wave w(200ms);
  w.cancel.emit(boost::asio::cancellation_type::total);
  // Still queued: the request was ignored. (Read under the dispatcher's
  // lock, which the lane's hand-over takes later: the emit happens before
  // the wave's completion clears the slot, as Asio requires.)
  CHECK(w.f.scheduler->pools()[0]->counts().waiting == 1);
  const auto o = sched_test::get(w.queued);
  CHECK_FALSE(o.ec);  // it ran: the lane came when the first wave's fence did
  CHECK(o.report.submitted_value == 2);
  CHECK(value_of(*w.sync.signal) == 1);
  CHECK_FALSE(sched_test::get(w.first).ec);
}

TEST_CASE(
    "wave sync: a wave whose fence never comes because its wait is never signalled times out, quarantined "
    "until the engine signals",
    "[scheduler]") {
  ferrum::scheduler_options options;
  options.fence_timeout = 100ms;
  fixture f(2, 1, {}, options);
  auto engine = make_semaphore(*f.device, semaphore_kind::timeline);
  auto done_by_wave = make_semaphore(*f.device, semaphore_kind::timeline);
  const semaphore_op waits[] = {{engine.get(), 1, sync_stage::all}};
  const semaphore_op signals[] = {{done_by_wave.get(), 1, sync_stage::all}};
  auto encode = [](const ferrum::encode_context&) {};
  auto wave = sched_test::submit(*f.scheduler, encode, {"step", {1, 1, 1}, waits, signals});
  CHECK(sched_test::get(wave).ec == errc::fence_timeout);
  CHECK(f.scheduler->pools()[0]->counts().quarantined == 1);
  CHECK(value_of(*done_by_wave) == 0);
  // Signalled once the engine's value comes, by the wave's own submission;
  // its lane then comes back.
  REQUIRE(engine->signal_from_host(1).has_value());
  CHECK(reaches(*done_by_wave, 1));
  CHECK(eventually([&] { return f.scheduler->pools()[0]->counts().free == 1; }));
  CHECK(f.device->queue().last_submitted() == 1);  // nothing passed on: the wave's submission had them
}

TEST_CASE("wave sync: refused semaphores name what is wrong, and nothing is submitted", "[scheduler]") {
  fixture f(2, 1);
  auto encode = [](const ferrum::encode_context&) { FAIL("a refused wave encoded"); };
  auto binary = make_semaphore(*f.device, semaphore_kind::binary);
  auto timeline = make_semaphore(*f.device, semaphore_kind::timeline);
  auto other_device = ::test::null_device({});
  auto foreign = make_semaphore(*other_device, semaphore_kind::binary);
  const auto refused = [&](ferrum::wave_request request, errc code, std::string_view says) {
    auto wave = sched_test::submit(*f.scheduler, encode, request);
    const auto o = sched_test::get(wave);
    CHECK(o.ec == code);
    CHECK_THAT(o.report.message, Catch::Contains(std::string(says)));
  };
  const std::array<semaphore_op, ferrum::max_wave_semaphores + 1> five{
      {{timeline.get(), 1}, {timeline.get(), 2}, {timeline.get(), 3}, {timeline.get(), 4}, {timeline.get(), 5}}};
  refused({"step", {1, 1, 1}, five, {}}, errc::too_many_semaphores, "wave_request::wait has 5 semaphores");
  refused({"step", {1, 1, 1}, {}, five}, errc::too_many_semaphores, "wave_request::signal has 5 semaphores");
  const semaphore_op none[] = {{nullptr, 0}};
  refused({"step", {1, 1, 1}, none, {}}, errc::invalid_semaphore_op, "wave_request::wait 0 names no semaphore");
  const semaphore_op valued_binary[] = {{timeline.get(), 1}, {binary.get(), 2}};
  refused({"step", {1, 1, 1}, {}, valued_binary}, errc::invalid_semaphore_op,
          "wave_request::signal 1: value 2 on a binary semaphore");
  const semaphore_op timeline_zero[] = {{timeline.get(), 0}};
  refused({"step", {1, 1, 1}, timeline_zero, {}}, errc::invalid_semaphore_op,
          "wave_request::wait 0: value 0 on a timeline semaphore");
  const semaphore_op of_other_device[] = {{foreign.get(), 0}};
  refused({"step", {1, 1, 1}, of_other_device, {}}, errc::foreign_object, "semaphore of another device");
  CHECK(f.device->queue().last_submitted() == 0);
  CHECK(f.scheduler->stats().failed == 6);
}

TEST_CASE("wave sync: a scheduler over two devices refuses semaphores on a wave", "[scheduler]") {
  auto first = ::test::null_device({});
  auto second = ::test::null_device({});
  ferrum::gpu::device* const devices[] = {first.get(), second.get()};
  const auto program =
      std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(sched_test::make_plan(2, 1)));
  boost::asio::thread_pool pool(2);
  auto s = ferrum::scheduler::create(program, devices, pool.get_executor(), {});
  REQUIRE(s.has_value());
  auto sem = make_semaphore(*first, semaphore_kind::binary);
  const semaphore_op signals[] = {{sem.get(), 0}};
  auto encode = [](const ferrum::encode_context&) {};
  auto wave = sched_test::submit(**s, encode, {"step", {1, 1, 1}, {}, signals});
  const auto o = sched_test::get(wave);
  CHECK(o.ec == errc::invalid_wave_request);
  CHECK_THAT(o.report.message, Catch::Contains("semaphores on a scheduler over 2 devices"));
  CHECK(first->queue().last_submitted() == 0);
  s->reset();
  pool.join();
}

TEMPLATE_TEST_CASE(
    "wave sync: the semaphores are copied when async_submit is called, so a deferred wave waits on "
    "them after the caller's array is gone",
    "[scheduler]", sched_test::on_io_context, sched_test::on_thread_pool) {
  sched_test::contract_fixture<TestType> f;
  binary_pair sync(*f.device);
  auto encode = [](const ferrum::encode_context&) {};
  auto op = [&] {
    std::array<semaphore_op, 1> waits = sync.waits;
    std::array<semaphore_op, 1> signals = sync.signals;
    auto deferred = f.scheduler->async_submit({"step", {1, 1, 1}, waits, signals}, encode, boost::asio::deferred);
    waits.fill({});  // what the request pointed at, overwritten before the wave starts
    signals.fill({});
    return deferred;
  }();
  REQUIRE(sync.wait->signal_from_host(0).has_value());
  std::promise<boost::system::error_code> done;
  std::move(op)([&](boost::system::error_code ec, const ferrum::wave_report&) { done.set_value(ec); });
  auto finished = done.get_future();
  REQUIRE(finished.wait_for(20s) == std::future_status::ready);
  CHECK_FALSE(finished.get());
  CHECK(value_of(*sync.wait) == 0);
  CHECK(value_of(*sync.signal) == 1);
}
