// async_submit and async_shutdown keep Asio's contracts: outstanding work,
// the I/O object's executor, cancellation types, arguments copied at
// initiation, every completion token style, every encoder form — on an
// io_context and on a thread_pool.
#include "contract_fixture.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_allocator.hpp>
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
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <array>
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using boost::system::error_code;
using ferrum::errc;
using sched_test::eventually;
using sched_test::hanging;

namespace {

using sched_test::contract_fixture;
using sched_test::counting_allocator;
using sched_test::on_io_context;
using sched_test::on_thread_pool;

const ferrum::wave_request step{"step", {1, 1, 1}};

void encode_nothing(const ferrum::encode_context&) {}

template <class T>
T ready(std::future<T>& f) {
  REQUIRE(f.wait_for(20s) == std::future_status::ready);
  return f.get();
}

}  // namespace

static_assert(std::is_same_v<ferrum::scheduler::executor_type, asio::any_io_executor>);

TEMPLATE_TEST_CASE("async_submit: a handler without an executor runs on the scheduler's, which get_executor returns",
                   "[scheduler]", on_io_context, on_thread_pool) {
  contract_fixture<TestType> f;
  CHECK(f.scheduler->get_executor() == f.context.executor());
  // (Catch2 assertions stay on the test's thread: handlers only report.)
  std::promise<bool> on_scheduler_executor;
  auto encode = encode_nothing;
  f.scheduler->async_submit(step, encode, [&](error_code ec, ferrum::wave_report) {
    on_scheduler_executor.set_value(!ec && f.context.running_here());
  });
  auto done = on_scheduler_executor.get_future();
  CHECK(ready(done));

  std::promise<bool> shut_on_scheduler_executor;
  f.scheduler->async_shutdown(
      [&](error_code ec) { shut_on_scheduler_executor.set_value(!ec && f.context.running_here()); });
  auto shut = shut_on_scheduler_executor.get_future();
  CHECK(ready(shut));
}

TEMPLATE_TEST_CASE("async_submit: every completion token style completes the wave", "[scheduler]", on_io_context,
                   on_thread_pool) {
  contract_fixture<TestType> f;
  ferrum::scheduler& s = *f.scheduler;
  auto encode = [](const ferrum::encode_context& c) { c.commands.fill(c.slot, 7u).value(); };

  SECTION("use_future") {
    std::future<ferrum::wave_report> report = s.async_submit(step, encode, asio::use_future);
    CHECK(ready(report).submitted_value == 1);
  }
  SECTION("use_awaitable, as_tuple and redirect_error, in a coroutine") {
    auto body = [](ferrum::scheduler* sch, decltype(encode)* e) -> asio::awaitable<std::uint64_t> {
      const ferrum::wave_report first = co_await sch->async_submit(step, *e, asio::use_awaitable);
      auto [ec, second] = co_await sch->async_submit(step, *e, asio::as_tuple(asio::use_awaitable));
      error_code redirected;
      const ferrum::wave_report third =
          co_await sch->async_submit(step, *e, asio::redirect_error(asio::use_awaitable, redirected));
      co_return ec || redirected ? 0 : first.submitted_value + second.submitted_value + third.submitted_value;
    };
    auto sum = asio::co_spawn(s.get_executor(), body(&s, &encode), asio::use_future);
    CHECK(ready(sum) == 1 + 2 + 3);
  }
  SECTION("deferred runs the wave only when launched") {
    auto op = s.async_submit(step, encode, asio::deferred);
    std::this_thread::sleep_for(20ms);
    CHECK(s.stats().started == 0);
    std::future<ferrum::wave_report> report = std::move(op)(asio::use_future);
    CHECK(ready(report).submitted_value == 1);
  }
  SECTION("parallel_group: wait_for_all") {
    std::promise<std::pair<error_code, error_code>> all;
    asio::experimental::make_parallel_group(s.async_submit(step, encode, asio::deferred),
                                            s.async_submit(step, encode, asio::deferred))
        .async_wait(asio::experimental::wait_for_all(), [&](std::array<std::size_t, 2>, error_code a,
                                                            ferrum::wave_report, error_code b, ferrum::wave_report) {
          all.set_value({a, b});
        });
    auto both = all.get_future();
    const auto [a, b] = ready(both);
    CHECK_FALSE(a);
    CHECK_FALSE(b);

    // (wait_for_one is left to the awaitable-operators test below: on a
    // multi-threaded executor it emits its cancellation from one wave's
    // completion while the other's may be delivered, which Asio does not
    // allow without a strand.)
  }
  SECTION("experimental::use_promise completes on the scheduler's executor") {
    // A promise is used on one thread at a time: its scheduler runs on a
    // strand, and the promise is made and awaited there.
    auto strand = asio::make_strand(f.context.executor());
    auto on_strand = ferrum::scheduler::create(f.program, *f.device, strand, {}).value();
    using promise_type = decltype(on_strand->async_submit(step, encode, asio::experimental::use_promise));
    std::optional<promise_type> p;
    std::promise<bool> on_executor;
    asio::post(strand, [&] {
      p.emplace(on_strand->async_submit(step, encode, asio::experimental::use_promise));
      (*p)([&](error_code ec, ferrum::wave_report) { on_executor.set_value(!ec && strand.running_in_this_thread()); });
    });
    auto done = on_executor.get_future();
    CHECK(ready(done));
    on_strand.reset();
  }
}

TEMPLATE_TEST_CASE("async_submit: awaitable operators cancel the loser, whose lane comes back after its fence",
                   "[scheduler]", on_io_context, on_thread_pool) {
  using namespace asio::experimental::awaitable_operators;
  contract_fixture<TestType> f(hanging(200ms), {}, 1);
  auto race = [](ferrum::scheduler* s) -> asio::awaitable<bool> {
    asio::steady_timer timer(s->get_executor(), 20ms);
    auto winner =
        co_await (s->async_submit(step, encode_nothing, asio::use_awaitable) || timer.async_wait(asio::use_awaitable));
    co_return winner.index() == 1;
  };
  auto timer_won = asio::co_spawn(f.scheduler->get_executor(), race(f.scheduler.get()), asio::use_future);
  CHECK(ready(timer_won));
  // Cancelled after submit: completed at once, its lane out until the fence.
  REQUIRE(eventually([&] { return f.scheduler->stats().cancelled == 1; }));
  REQUIRE(eventually([&] { return f.scheduler->pools()[0]->counts().free == 1; }));
  CHECK(f.device->queue().timeline().reached(1));
}

TEST_CASE("async_shutdown keeps outstanding work on its handler's executor: io_context::run waits for it",
          "[scheduler]") {
  // The scenario of the issue: a wave ends in fence_timeout, its lane stays
  // quarantined for 400 ms; the shutdown handler is bound to an io_context
  // that nothing else keeps busy.
  contract_fixture<on_thread_pool> f(hanging(400ms), {.fence_timeout = 50ms});
  auto failed = sched_test::submit(*f.scheduler, encode_nothing);
  CHECK(sched_test::get(failed).ec == errc::fence_timeout);
  asio::io_context ctx;
  std::optional<error_code> handled;
  f.scheduler->async_shutdown(asio::bind_executor(ctx, [&](error_code ec) { handled = ec; }));
  ctx.restart();
  ctx.run();
  REQUIRE(handled.has_value());
  CHECK_FALSE(*handled);
}

TEST_CASE("async_submit keeps outstanding work on its handler's executor until the handler ran", "[scheduler]") {
  contract_fixture<on_thread_pool> f(hanging(100ms));
  asio::io_context ctx;
  std::optional<error_code> handled;
  f.scheduler->async_submit(step, encode_nothing,
                            asio::bind_executor(ctx, [&](error_code ec, ferrum::wave_report) { handled = ec; }));
  ctx.run();  // returns only once the wave's handler ran
  REQUIRE(handled.has_value());
  CHECK_FALSE(*handled);
}

TEST_CASE("destroying a scheduler with async_shutdown pending invokes the handler with operation_aborted",
          "[scheduler]") {
  // The GPU hangs until the device shuts down: the quarantined lane's fence
  // never comes while the scheduler lives.
  contract_fixture<on_thread_pool> f(hanging(0ms), {.fence_timeout = 30ms});
  auto failed = sched_test::submit(*f.scheduler, encode_nothing);
  CHECK(sched_test::get(failed).ec == errc::fence_timeout);
  std::promise<error_code> shut;
  f.scheduler->async_shutdown([&](error_code ec) { shut.set_value(ec); });
  auto result = shut.get_future();
  CHECK(result.wait_for(50ms) == std::future_status::timeout);
  f.scheduler.reset();
  CHECK(ready(result) == asio::error::operation_aborted);
}

TEST_CASE("a completion handler that throws does not leak its wave", "[scheduler]") {
  asio::io_context ctx;
  const ferrum::plan plan = sched_test::make_plan(2, 1);
  auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(plan));
  auto device = ::test::null_device({});
  auto s = ferrum::scheduler::create(program, *device, ctx.get_executor(), {}).value();
  s->async_submit(step, encode_nothing,
                  [](error_code, ferrum::wave_report) { throw std::runtime_error("the handler's own failure"); });
  // As from any Asio handler, the exception leaves run().
  CHECK_THROWS_WITH(ctx.run(), "the handler's own failure");
  CHECK(s->stats().live == 0);
  bool shut = false;
  s->async_shutdown([&](error_code ec) { shut = !ec; });
  ctx.restart();
  ctx.run();
  CHECK(shut);
  s.reset();  // returns: no wave is left
}

TEMPLATE_TEST_CASE("async_submit: cancellation types mean what Asio says at each step", "[scheduler]", on_io_context,
                   on_thread_pool) {
  SECTION("total after submit is ignored: the wave completes with its fence") {
    contract_fixture<TestType> f(hanging(150ms));
    // The handler and the emit on one strand: an ignored cancellation orders
    // nothing by itself, and Asio requires that an emit never races the
    // delivery of the handler (which clears the slot).
    auto strand = asio::make_strand(f.context.executor());
    asio::cancellation_signal signal;
    std::promise<error_code> done;
    f.scheduler->async_submit(step, encode_nothing,
                              asio::bind_cancellation_slot(
                                  signal.slot(), asio::bind_executor(strand, [&](error_code ec, ferrum::wave_report) {
                                    done.set_value(ec);
                                  })));
    REQUIRE(eventually([&] { return f.device->queue().timeline().pending() > 0; }));  // awaiting its fence
    asio::post(strand, [&] { signal.emit(asio::cancellation_type::total); });
    auto result = done.get_future();
    CHECK_FALSE(ready(result));
    CHECK(f.scheduler->stats().completed == 1);
  }
  SECTION("total while encoding is ignored; terminal while encoding stops the wave") {
    contract_fixture<TestType> f;
    asio::cancellation_signal signal;
    asio::cancellation_type emitted = asio::cancellation_type::total;
    std::atomic<int> encoded{0};
    auto encode = [&](const ferrum::encode_context& c) {
      encoded.fetch_add(1);
      if (c.node_index == 0) signal.emit(emitted);
    };
    auto submit = [&] {
      auto done = sched_test::submit_cancellable(*f.scheduler, encode, signal);
      return sched_test::get(done).ec;
    };
    CHECK_FALSE(submit());
    CHECK(encoded.load() == 3);
    emitted = asio::cancellation_type::terminal;
    encoded.store(0);
    CHECK(submit() == asio::error::operation_aborted);
    CHECK(encoded.load() == 1);
  }
  SECTION("total while queued for a lane cancels the wave, which is never handed one") {
    contract_fixture<TestType> f(hanging(150ms), {}, 1);
    auto first = sched_test::submit(*f.scheduler, encode_nothing);
    REQUIRE(eventually([&] { return f.device->queue().last_submitted() == 1; }));
    asio::cancellation_signal signal;
    auto done = sched_test::submit_cancellable(*f.scheduler, encode_nothing, signal);
    REQUIRE(eventually([&] { return f.scheduler->pools()[0]->counts().waiting == 1; }));
    signal.emit(asio::cancellation_type::total);
    CHECK(sched_test::get(done).ec == asio::error::operation_aborted);
    CHECK_FALSE(sched_test::get(first).ec);
    CHECK(f.device->queue().last_submitted() == 1);
  }
}

TEST_CASE("async_submit: a coroutine encoder sees that its wave was cancelled", "[scheduler]") {
  contract_fixture<on_thread_pool> f;
  asio::cancellation_signal signal;
  std::promise<bool> seen;
  auto encode = [&](const ferrum::encode_context& c) -> asio::awaitable<void> {
    if (c.node_index != 0) co_return;
    const bool before = c.cancelled();
    signal.emit(asio::cancellation_type::terminal);
    asio::steady_timer pause(co_await asio::this_coro::executor, 1ms);
    co_await pause.async_wait(asio::use_awaitable);
    seen.set_value(!before && c.cancelled());
  };
  auto done = sched_test::submit_cancellable(*f.scheduler, encode, signal);
  CHECK(sched_test::get(done).ec == asio::error::operation_aborted);
  auto cancelled = seen.get_future();
  CHECK(ready(cancelled));
}

TEST_CASE("async_submit with a lazy token copies the request at initiation", "[scheduler]") {
  contract_fixture<on_thread_pool> f;
  SECTION("a request changed after async_submit returned does not change the wave") {
    ferrum::wave_request request{"step", {1, 1, 1}};
    auto op = f.scheduler->async_submit(request, encode_nothing, asio::deferred);
    request.bucket_class = "no such class";
    request.extent = {9, 9, 9};
    std::future<ferrum::wave_report> report = std::move(op)(asio::use_future);
    CHECK(ready(report).bucket->str() == "step@1x1x1");
  }
  SECTION("a request whose text is gone before the wave runs") {
    // Long enough to live on the heap: AddressSanitizer sees a later read.
    std::optional<std::string> text{"step" + std::string(60, '-')};
    auto op = f.scheduler->async_submit(ferrum::wave_request{std::string_view(*text).substr(0, 4), {1, 1, 1}},
                                        encode_nothing, asio::deferred);
    text->assign(64, 'z');  // in place: a view into it now reads "zzzz"
    text.reset();
    std::future<ferrum::wave_report> report = std::move(op)(asio::use_future);
    CHECK(ready(report).submitted_value == 1);
  }
}

namespace {

int plain_calls = 0;
void plain_encoder(const ferrum::encode_context&) { ++plain_calls; }

asio::awaitable<void> coroutine_encoder(const ferrum::encode_context&) { co_return; }

struct renderer {
  std::atomic<int> calls{0};
  std::function<void(const ferrum::encode_context&)> encode = [this](const ferrum::encode_context&) { ++calls; };
};

}  // namespace

TEST_CASE("async_submit accepts every encoder form a user would pass", "[scheduler]") {
  contract_fixture<on_thread_pool> f;
  auto run = [&](auto&& encode) {
    auto report = f.scheduler->async_submit(step, std::forward<decltype(encode)>(encode), asio::use_future);
    return ready(report).nodes;
  };
  std::atomic<int> calls{0};
  const auto const_lambda = [&calls](const ferrum::encode_context&) { calls.fetch_add(1); };
  CHECK(run(const_lambda) == 3);
  CHECK(calls.load() == 3);

  plain_calls = 0;
  CHECK(run(plain_encoder) == 3);   // a function
  CHECK(run(&plain_encoder) == 3);  // a function pointer
  CHECK(plain_calls == 6);

  const std::function<void(const ferrum::encode_context&)> function = [&calls](const ferrum::encode_context&) {
    calls.fetch_add(1);
  };
  CHECK(run(function) == 3);
  CHECK(calls.load() == 6);

  renderer r;  // a member of a longer-lived object
  CHECK(run(r.encode) == 3);
  CHECK(r.calls.load() == 3);

  CHECK(run(&coroutine_encoder) == 3);  // a coroutine, by pointer
}

TEST_CASE("async_submit refuses a request whose extent has a zero dimension with invalid_wave_request", "[scheduler]") {
  contract_fixture<on_thread_pool> f;
  auto done = sched_test::submit(*f.scheduler, encode_nothing, {"step", {1, 0, 1}});
  const auto o = sched_test::get(done);
  CHECK(o.ec == errc::invalid_wave_request);
  CHECK(f.device->queue().last_submitted() == 0);
}

TEMPLATE_TEST_CASE("async_shutdown: every completion token style completes once the waves are done", "[scheduler]",
                   on_io_context, on_thread_pool) {
  contract_fixture<TestType> f;
  ferrum::scheduler& s = *f.scheduler;
  auto wave = sched_test::submit(s, encode_nothing);
  CHECK_FALSE(sched_test::get(wave).ec);

  SECTION("use_future") {
    std::future<void> shut = s.async_shutdown(asio::use_future);
    REQUIRE(shut.wait_for(20s) == std::future_status::ready);
    CHECK_NOTHROW(shut.get());
  }
  SECTION("use_awaitable, as_tuple and redirect_error, in a coroutine") {
    auto body = [](ferrum::scheduler* sch) -> asio::awaitable<bool> {
      co_await sch->async_shutdown(asio::use_awaitable);
      auto [ec] = co_await sch->async_shutdown(asio::as_tuple(asio::use_awaitable));
      error_code redirected = asio::error::eof;
      co_await sch->async_shutdown(asio::redirect_error(asio::use_awaitable, redirected));
      co_return !ec && !redirected;
    };
    auto clean = asio::co_spawn(s.get_executor(), body(&s), asio::use_future);
    CHECK(ready(clean));
  }
  SECTION("deferred stops nothing until launched") {
    auto op = s.async_shutdown(asio::deferred);
    auto accepted = sched_test::submit(s, encode_nothing);
    CHECK_FALSE(sched_test::get(accepted).ec);  // still accepting
    std::future<void> shut = std::move(op)(asio::use_future);
    REQUIRE(shut.wait_for(20s) == std::future_status::ready);
    auto refused = sched_test::submit(s, encode_nothing);
    CHECK(sched_test::get(refused).ec == errc::scheduler_shut_down);
  }
  SECTION("experimental::use_promise, on a strand") {
    auto strand = asio::make_strand(f.context.executor());
    auto on_strand = ferrum::scheduler::create(f.program, *f.device, strand, {}).value();
    using promise_type = decltype(on_strand->async_shutdown(asio::experimental::use_promise));
    std::optional<promise_type> p;
    std::promise<bool> on_executor;
    asio::post(strand, [&] {
      p.emplace(on_strand->async_shutdown(asio::experimental::use_promise));
      (*p)([&](error_code ec) { on_executor.set_value(!ec && strand.running_in_this_thread()); });
    });
    auto done = on_executor.get_future();
    CHECK(ready(done));
    std::promise<void> released;  // the promise goes on its strand too
    asio::post(strand, [&] {
      p.reset();
      released.set_value();
    });
    released.get_future().wait();
    on_strand.reset();
  }
}

namespace {

// An executor that counts what is submitted to it before passing it on: a
// test knows when a handler has been queued, not only when its wave counted
// itself completed (which comes first).
template <class Inner>
struct counted_executor {
  Inner inner;
  std::atomic<int>* executed;

  template <class Property>
  auto query(const Property& p) const -> decltype(asio::query(inner, p)) {
    return asio::query(inner, p);
  }
  template <class Property>
  auto require(const Property& p) const -> counted_executor<std::decay_t<decltype(asio::require(inner, p))>> {
    return {asio::require(inner, p), executed};
  }
  template <class Property>
  auto prefer(const Property& p) const -> counted_executor<std::decay_t<decltype(asio::prefer(inner, p))>> {
    return {asio::prefer(inner, p), executed};
  }
  template <class Function>
  void execute(Function&& f) const {
    executed->fetch_add(1);
    inner.execute(std::forward<Function>(f));
  }
  friend bool operator==(const counted_executor& a, const counted_executor& b) noexcept {
    return a.inner == b.inner && a.executed == b.executed;
  }
};

}  // namespace

TEST_CASE("a wave whose handler's executor is destroyed before the handler runs is recycled all the same",
          "[scheduler]") {
  contract_fixture<on_thread_pool> f;
  bool handled = false;
  {
    asio::io_context never_run;
    std::atomic<int> queued{0};
    const counted_executor<asio::io_context::executor_type> on_never_run{never_run.get_executor(), &queued};
    f.scheduler->async_submit(
        step, encode_nothing,
        asio::bind_executor(on_never_run, [&](error_code, ferrum::wave_report) { handled = true; }));
    // Completed, and its handler queued on the io_context nobody runs (the
    // wave counts itself completed just before it queues the handler).
    REQUIRE(eventually([&] { return f.scheduler->stats().completed == 1 && queued.load() == 1; }));
    CHECK(f.scheduler->stats().live == 1);
  }  // the queued handler is destroyed with the io_context, never invoked
  CHECK_FALSE(handled);
  CHECK(f.scheduler->stats().live == 0);
  CHECK(f.scheduler->pools()[0]->counts().free == 2);
}

namespace {

// Waves whose first handler destroys their scheduler, as an engine tearing
// down from a completion would; the other handlers only count.
struct destroyed_from_handler {
  static constexpr int waves = 6;
  std::unique_ptr<ferrum::scheduler>* owner;
  std::atomic<int> handled{0};
  std::atomic<int> ok{0};
  std::atomic<int> shut_down{0};
  std::atomic<int> other{0};
  std::atomic<bool> destroyed{false};
  std::atomic<bool> first{true};

  void submit_all(ferrum::scheduler& s) {
    for (int i = 0; i < waves; ++i) {
      s.async_submit(step, encode_nothing, [this](error_code ec, ferrum::wave_report) {
        (!ec ? ok : ec == errc::scheduler_shut_down ? shut_down : other).fetch_add(1);
        if (first.exchange(false)) {
          owner->reset();  // returns: the waves still living finish on their own
          destroyed = true;
        }
        handled.fetch_add(1);
      });
    }
  }
  void check() const {
    CHECK(destroyed);
    CHECK(handled == waves);  // each handler once
    CHECK(ok >= 1);
    CHECK(ok + shut_down == waves);
    CHECK(other == 0);
  }
};

}  // namespace

TEST_CASE(
    "a scheduler destroyed from its wave's own handler on a one-thread io_context neither hangs nor loses a "
    "handler",
    "[scheduler]") {
  asio::io_context ctx;
  const ferrum::plan plan = sched_test::make_plan(2, 2);
  auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(plan));
  auto device = ::test::null_device(hanging(20ms));
  auto s = ferrum::scheduler::create(program, *device, ctx.get_executor(), {}).value();
  destroyed_from_handler waves{&s};
  waves.submit_all(*s);
  // The handlers queued behind the destroying one run on this one thread
  // after it: the destructor cannot wait for them.
  ctx.run();  // returns once the last wave freed the scheduler: its work is gone
  CHECK(s == nullptr);
  waves.check();
}

TEMPLATE_TEST_CASE("a scheduler destroyed from its wave's own handler neither hangs nor loses a handler", "[scheduler]",
                   on_io_context, on_thread_pool) {
  contract_fixture<TestType> f(hanging(20ms));
  destroyed_from_handler waves{&f.scheduler};
  waves.submit_all(*f.scheduler);
  REQUIRE(eventually([&] { return waves.handled == destroyed_from_handler::waves; }));
  f.context.stop();  // joins: the last wave has freed the scheduler by then
  waves.check();
}

TEMPLATE_TEST_CASE("async_submit: a handler too large for the wave gets its memory from its associated allocator",
                   "[scheduler]", on_io_context, on_thread_pool) {
  contract_fixture<TestType> f;
  std::atomic<int> allocations{0};
  std::atomic<int> deallocations{0};
  std::array<unsigned char, 1024> large{};  // beyond the wave's inline room
  large[7] = 42;
  // What the handler sees of its allocator when it runs: Asio's rule is that
  // an operation gives its memory back before the upcall, so that a handler
  // may end the allocator's state (nothing is deallocated after it ran).
  struct seen_at_upcall {
    int value = -1;
    int allocations = 0;
    int deallocations = 0;
  };
  std::promise<seen_at_upcall> seen;
  f.scheduler->async_submit(
      step, encode_nothing,
      asio::bind_allocator(counting_allocator<void>(&allocations, &deallocations),
                           [large, &seen, &allocations, &deallocations](error_code ec, ferrum::wave_report) {
                             seen.set_value({ec ? -1 : large[7], allocations.load(), deallocations.load()});
                           }));
  auto result = seen.get_future();
  const seen_at_upcall at_upcall = ready(result);
  CHECK(at_upcall.value == 42);
  CHECK(at_upcall.allocations >= 1);
  CHECK(at_upcall.deallocations == at_upcall.allocations);
  // The wave's recycling, after the handler, frees nothing more of it.
  REQUIRE(eventually([&] { return f.scheduler->stats().live == 0; }));
  CHECK(allocations == at_upcall.allocations);
  CHECK(deallocations == at_upcall.deallocations);
  // A handler that fits allocates nothing through it.
  const int before = allocations;
  std::promise<bool> small_seen;
  f.scheduler->async_submit(
      step, encode_nothing,
      asio::bind_allocator(counting_allocator<void>(&allocations, &deallocations),
                           [&small_seen](error_code ec, ferrum::wave_report) { small_seen.set_value(!ec); }));
  auto small = small_seen.get_future();
  CHECK(ready(small));
  CHECK(allocations == before);
}
