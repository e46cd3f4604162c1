// Semaphores besides the queues' timelines on the null device
// (ferrum/gpu/semaphore.hpp): a submission waiting on one holds its commands
// back until the host or another submission signals it, a binary signal is
// consumed by one wait, a submission's signals come before its queue's own
// value, and every malformed wait or signal is refused with nothing
// submitted.
#include "null_device_support.hpp"

#include "ferrum/gpu/semaphore.hpp"

#include <array>
#include <future>

using namespace std::chrono_literals;
using ferrum::errc;
using ferrum::queue_kind;
using ferrum::gpu::command_list;
using ferrum::gpu::external_sync;
using ferrum::gpu::null_device_options;
using ferrum::gpu::semaphore_kind;
using ferrum::gpu::semaphore_op;
using ferrum::gpu::sync_stage;

namespace {

// Records a fill of word `word` of `a` with `value` into `list`.
void fill_word(command_list& list, ferrum::gpu::arena& a, std::size_t word, std::uint32_t value) {
  test::require(list.begin());
  test::require(list.fill(a.range(word * 4, 4), value));
  test::require(list.end());
}

// Submits `list` to `q` with its next value and `external`; returns that value.
std::uint64_t submit_with(ferrum::gpu::queue& q, command_list& list, const external_sync& external) {
  command_list* lists[] = {&list};
  return test::require(q.submit_next(lists, {}, external));
}

// Checks that a refused submission left `q` and `list` as they were: `last`
// the queue's last value submitted, `was` the list's last value on `q` (0:
// never submitted).
void check_unsubmitted(const ferrum::gpu::queue& q, std::uint64_t last, const command_list& list,
                       std::uint64_t was = 0) {
  CHECK(q.last_submitted() == last);
  CHECK(list.executable());
  CHECK(list.submitted_queue() == (was == 0 ? nullptr : &q));
  CHECK(list.submitted_value() == was);
}

}  // namespace

TEST_CASE("semaphores: a device makes binary and timeline semaphores, unsignalled", "[gpu][semaphore]") {
  auto device = test::null_device();
  auto binary = test::require(device->create_semaphore(semaphore_kind::binary));
  auto timeline = test::require(device->create_semaphore(semaphore_kind::timeline));
  CHECK(binary->kind() == semaphore_kind::binary);
  CHECK(timeline->kind() == semaphore_kind::timeline);
  CHECK(&binary->device() == device.get());
  CHECK(&timeline->device() == device.get());
  CHECK(binary->native_handle() == 0);
  CHECK(test::require(binary->value()) == 0);
  CHECK(test::require(timeline->value()) == 0);
  CHECK_FALSE(test::require(timeline->wait_from_host(1, 1ms)));
  CHECK_FALSE(test::require(binary->wait_from_host(1, 1ms)));
  CHECK(ferrum::gpu::to_string(semaphore_kind::binary) == "binary");
  CHECK(ferrum::gpu::to_string(semaphore_kind::timeline) == "timeline");
  CHECK(ferrum::gpu::to_string(sync_stage::all) == "all");
  CHECK(ferrum::gpu::to_string(sync_stage::compute) == "compute");
  CHECK(ferrum::gpu::to_string(sync_stage::transfer) == "transfer");
}

TEST_CASE("semaphores: a submission waiting on a timeline semaphore runs only once the host signals its value",
          "[gpu][semaphore]") {
  auto device = test::null_device();
  ferrum::gpu::queue& q = device->queue();
  auto ready = test::require(device->create_semaphore(semaphore_kind::timeline));
  auto arena = test::require(device->create_arena(64));
  auto list = test::require(device->create_command_list());
  fill_word(*list, *arena, 0, 0x5e5e);
  const std::array wait{semaphore_op{ready.get(), 5, sync_stage::compute}};
  const std::uint64_t value = submit_with(q, *list, {.waits = wait});
  CHECK(q.last_submitted() == value);
  CHECK(test::wait_for(q.timeline(), value, 50ms) == std::nullopt);
  CHECK(test::word_at(*arena, 0) == 0);
  CHECK_FALSE(list->executable());  // in flight

  // A value below the wait's does not release it.
  test::require(ready->signal_from_host(4));
  CHECK(test::require(ready->value()) == 4);
  CHECK(test::wait_for(q.timeline(), value, 50ms) == std::nullopt);
  CHECK(test::word_at(*arena, 0) == 0);

  test::require(ready->signal_from_host(5));
  test::require_reached(q.timeline(), value);
  CHECK(test::word_at(*arena, 0) == 0x5e5e);
  CHECK(test::require(ready->value()) == 5);
  CHECK(list->executable());

  // A later submission waiting on a value already reached runs at once.
  fill_word(*list, *arena, 1, 0x77);
  const std::array reached{semaphore_op{ready.get(), 3, sync_stage::all}};
  test::require_reached(q.timeline(), submit_with(q, *list, {.waits = reached}));
  CHECK(test::word_at(*arena, 1) == 0x77);
}

TEST_CASE("semaphores: a binary signal is consumed by one wait, the next waiter waits for the next signal",
          "[gpu][semaphore]") {
  auto device = test::null_device();
  ferrum::gpu::queue& q = device->queue();
  auto binary = test::require(device->create_semaphore(semaphore_kind::binary));
  auto arena = test::require(device->create_arena(64));
  auto first = test::require(device->create_command_list());
  auto second = test::require(device->create_command_list());
  fill_word(*first, *arena, 0, 11);
  fill_word(*second, *arena, 1, 22);
  const std::array wait{semaphore_op{binary.get(), 0, sync_stage::all}};
  const std::uint64_t v1 = submit_with(q, *first, {.waits = wait});
  const std::uint64_t v2 = submit_with(q, *second, {.waits = wait});
  CHECK(test::wait_for(q.timeline(), v1, 50ms) == std::nullopt);
  CHECK(test::word_at(*arena, 0) == 0);

  test::require(binary->signal_from_host(0));
  test::require_reached(q.timeline(), v1);
  CHECK(test::word_at(*arena, 0) == 11);
  // The one signal went to the first waiter: the second still waits.
  CHECK(test::wait_for(q.timeline(), v2, 50ms) == std::nullopt);
  CHECK(test::word_at(*arena, 1) == 0);
  CHECK(test::require(binary->value()) == 0);  // consumed

  test::require(binary->signal_from_host(0));
  test::require_reached(q.timeline(), v2);
  CHECK(test::word_at(*arena, 1) == 22);
  CHECK(test::require(binary->value()) == 0);

  // Signalled with no waiter, the signal stays until a wait takes it.
  test::require(binary->signal_from_host(0));
  CHECK(test::require(binary->value()) == 1);
  CHECK(test::require(binary->wait_from_host(1, 1s)));
  fill_word(*first, *arena, 2, 33);
  test::require_reached(q.timeline(), submit_with(q, *first, {.waits = wait}));
  CHECK(test::word_at(*arena, 2) == 33);
  CHECK(test::require(binary->value()) == 0);
}

TEST_CASE("semaphores: a submission's signals are visible before its queue's own value is reached",
          "[gpu][semaphore]") {
  auto device = test::null_device();
  ferrum::gpu::queue& q = device->queue();
  auto timeline = test::require(device->create_semaphore(semaphore_kind::timeline));
  auto binary = test::require(device->create_semaphore(semaphore_kind::binary));
  auto list = test::require(device->create_command_list());
  test::host_gate held;
  auto hold = [&] { held.hold(); };
  test::require(list->begin());
  test::require(list->host(ferrum::gpu::host_call(hold)));
  test::require(list->end());
  const std::array signals{semaphore_op{timeline.get(), 7, sync_stage::all},
                           semaphore_op{binary.get(), 0, sync_stage::all}};
  const std::uint64_t value = submit_with(q, *list, {.signals = signals});

  // What the semaphores hold when the queue's value completes a wait.
  struct seen {
    boost::system::error_code ec;
    std::uint64_t timeline = 0;
    std::uint64_t binary = 0;
  };
  std::promise<seen> done;
  ferrum::gpu::async_wait(q.timeline(), value, [&](boost::system::error_code ec) {
    const auto t = timeline->value();
    const auto b = binary->value();
    done.set_value(seen{ec, t ? *t : ~0ull, b ? *b : ~0ull});
  });
  auto result = done.get_future();
  // Held: nothing signalled yet.
  CHECK_FALSE(test::require(timeline->wait_from_host(7, 30ms)));
  CHECK(test::require(timeline->value()) == 0);
  CHECK(test::require(binary->value()) == 0);
  CHECK(result.wait_for(0ms) == std::future_status::timeout);

  held.open();
  REQUIRE(result.wait_for(20s) == std::future_status::ready);
  const seen at_value = result.get();
  CHECK_FALSE(at_value.ec);
  CHECK(at_value.timeline == 7);
  CHECK(at_value.binary == 1);
  CHECK(test::require(timeline->wait_from_host(7, 0ms)));
  CHECK_FALSE(test::require(timeline->wait_from_host(8, 1ms)));
}

TEST_CASE("semaphores: a transfer submission waits on a timeline semaphore a compute submission signals",
          "[gpu][semaphore]") {
  auto device = test::null_device();
  REQUIRE(device->queue_count() == 2);
  ferrum::gpu::queue& compute = device->queue(queue_kind::compute);
  ferrum::gpu::queue& transfer = device->queue(queue_kind::transfer);
  auto handoff = test::require(device->create_semaphore(semaphore_kind::timeline));
  auto arena = test::require(device->create_arena(64));
  auto producer = test::require(device->create_command_list(queue_kind::compute));
  auto consumer = test::require(device->create_command_list(queue_kind::transfer));
  test::host_gate producing;
  auto hold = [&] { producing.hold(); };
  test::require(producer->begin());
  test::require(producer->host(ferrum::gpu::host_call(hold)));
  test::require(producer->fill(arena->range(0, 16), 0xabcd));
  test::require(producer->end());
  test::require(consumer->begin());
  test::require(consumer->copy(arena->range(0, 16), arena->range(16, 16)));
  test::require(consumer->end());

  // No queue wait orders the two: only the semaphore does.
  const std::array wait{semaphore_op{handoff.get(), 1, sync_stage::transfer}};
  const std::uint64_t copied = submit_with(transfer, *consumer, {.waits = wait});
  const std::array signal{semaphore_op{handoff.get(), 1, sync_stage::all}};
  const std::uint64_t produced = submit_with(compute, *producer, {.signals = signal});
  CHECK(test::wait_for(transfer.timeline(), copied, 50ms) == std::nullopt);
  CHECK(test::word_at(*arena, 4) == 0);
  producing.open();
  test::require_reached(transfer.timeline(), copied);
  // The null device signals a submission's semaphores before its queue's
  // own value is reached (the test above): the producer's value comes after.
  test::require_reached(compute.timeline(), produced);
  for (std::size_t i = 4; i < 8; ++i) CHECK(test::word_at(*arena, i) == 0xabcd);
  CHECK(test::require(handoff->value()) == 1);
}

TEST_CASE("semaphores: a binary semaphore signalled by one queue's submission releases a wait on the other",
          "[gpu][semaphore]") {
  auto device = test::null_device();
  ferrum::gpu::queue& compute = device->queue(queue_kind::compute);
  ferrum::gpu::queue& transfer = device->queue(queue_kind::transfer);
  auto binary = test::require(device->create_semaphore(semaphore_kind::binary));
  auto arena = test::require(device->create_arena(64));
  auto producer = test::require(device->create_command_list(queue_kind::compute));
  auto consumer = test::require(device->create_command_list(queue_kind::transfer));
  fill_word(*producer, *arena, 0, 0x1234);
  test::require(consumer->begin());
  test::require(consumer->copy(arena->range(0, 4), arena->range(4, 4)));
  test::require(consumer->end());
  const std::array op{semaphore_op{binary.get(), 0, sync_stage::all}};
  const std::uint64_t copied = submit_with(transfer, *consumer, {.waits = op});
  CHECK(test::wait_for(transfer.timeline(), copied, 50ms) == std::nullopt);
  const std::uint64_t produced = submit_with(compute, *producer, {.signals = op});
  test::require_reached(transfer.timeline(), copied);
  // The null device signals a submission's semaphores before its queue's
  // value is reached, so the consumer may finish first: wait for it.
  test::require_reached(compute.timeline(), produced);
  CHECK(test::word_at(*arena, 1) == 0x1234);
  CHECK(test::require(binary->value()) == 0);  // the wait consumed the signal
}

TEST_CASE("semaphores: a malformed wait or signal is refused with invalid_semaphore_op, nothing submitted",
          "[gpu][semaphore]") {
  auto device = test::null_device();
  ferrum::gpu::queue& q = device->queue();
  auto binary = test::require(device->create_semaphore(semaphore_kind::binary));
  auto timeline = test::require(device->create_semaphore(semaphore_kind::timeline));
  auto arena = test::require(device->create_arena(64));
  auto list = test::require(device->create_command_list());
  fill_word(*list, *arena, 0, 1);
  command_list* lists[] = {list.get()};
  const semaphore_op fine{timeline.get(), 1, sync_stage::all};
  struct bad_case {
    semaphore_op op;
    const char* what;
  };
  const std::array cases{bad_case{{nullptr, 0, sync_stage::all}, "names no semaphore"},
                         bad_case{{binary.get(), 3, sync_stage::all}, "value 3 on a binary semaphore"},
                         bad_case{{timeline.get(), 0, sync_stage::all}, "value 0 on a timeline semaphore"}};
  for (const bad_case& c : cases) {
    INFO(c.what);
    const std::array waits{fine, c.op};
    const auto as_wait = q.submit_next(lists, {}, {.waits = waits});
    REQUIRE_FALSE(as_wait.has_value());
    CHECK(as_wait.error() == errc::invalid_semaphore_op);
    CHECK_THAT(as_wait.error().what(), Catch::Contains("semaphore wait 1") && Catch::Contains(c.what));
    check_unsubmitted(q, 0, *list);

    const std::array signals{c.op};
    const auto as_signal = q.submit(lists, 1, {}, {.signals = signals});
    REQUIRE_FALSE(as_signal.has_value());
    CHECK(as_signal.error() == errc::invalid_semaphore_op);
    CHECK_THAT(as_signal.error().what(), Catch::Contains("semaphore signal 0") && Catch::Contains(c.what));
    check_unsubmitted(q, 0, *list);

    auto direct = ferrum::gpu::check_semaphore_op(c.op, *device, "probe", 4);
    REQUIRE_FALSE(direct.has_value());
    CHECK(direct.error() == errc::invalid_semaphore_op);
    CHECK_THAT(direct.error().what(), Catch::Contains("probe 4"));
  }
  CHECK(ferrum::gpu::check_semaphore_op(fine, *device, "probe", 0).has_value());
  // Nothing of the refused submissions ran or was signalled.
  CHECK(test::require(timeline->value()) == 0);
  CHECK(test::require(binary->value()) == 0);
  CHECK(test::word_at(*arena, 0) == 0);
  // The list goes through once the semaphores are right.
  const std::array signals{semaphore_op{binary.get(), 0, sync_stage::all}, semaphore_op{timeline.get(), 2}};
  test::require_reached(q.timeline(), test::require(q.submit_next(lists, {}, {.signals = signals})));
  CHECK(test::word_at(*arena, 0) == 1);
  CHECK(test::require(timeline->value()) == 2);
  CHECK(test::require(binary->value()) == 1);
}

TEST_CASE(
    "semaphores: a host signal not above the current value, or with a value on a binary semaphore, is "
    "refused with invalid_semaphore_op",
    "[gpu][semaphore]") {
  auto device = test::null_device();
  auto timeline = test::require(device->create_semaphore(semaphore_kind::timeline));
  auto binary = test::require(device->create_semaphore(semaphore_kind::binary));
  const auto at_zero = timeline->signal_from_host(0);
  REQUIRE_FALSE(at_zero.has_value());
  CHECK(at_zero.error() == errc::invalid_semaphore_op);
  CHECK_THAT(at_zero.error().what(), Catch::Contains("host signal"));
  test::require(timeline->signal_from_host(5));
  for (std::uint64_t value : {5, 4}) {
    const auto refused = timeline->signal_from_host(value);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error() == errc::invalid_semaphore_op);
    CHECK_THAT(refused.error().what(), Catch::Contains("not above the current 5"));
  }
  CHECK(test::require(timeline->value()) == 5);
  const auto with_value = binary->signal_from_host(1);
  REQUIRE_FALSE(with_value.has_value());
  CHECK(with_value.error() == errc::invalid_semaphore_op);
  CHECK_THAT(with_value.error().what(), Catch::Contains("binary semaphore"));
  CHECK(test::require(binary->value()) == 0);
  test::require(timeline->signal_from_host(6));
  CHECK(test::require(timeline->value()) == 6);
}

TEST_CASE("semaphores: a semaphore of another device is refused with foreign_object, nothing submitted",
          "[gpu][semaphore]") {
  auto device = test::null_device();
  auto other = test::null_device();
  ferrum::gpu::queue& q = device->queue();
  auto theirs = test::require(other->create_semaphore(semaphore_kind::timeline));
  test::require(theirs->signal_from_host(1));
  auto list = test::require(device->create_command_list());
  test::require(list->begin());
  test::require(list->end());
  command_list* lists[] = {list.get()};
  const std::array op{semaphore_op{theirs.get(), 1, sync_stage::all}};
  const auto as_wait = q.submit_next(lists, {}, {.waits = op});
  REQUIRE_FALSE(as_wait.has_value());
  CHECK(as_wait.error() == errc::foreign_object);
  CHECK_THAT(as_wait.error().what(), Catch::Contains("semaphore wait 0 is on a semaphore of another device"));
  check_unsubmitted(q, 0, *list);
  const auto as_signal = q.submit_next(lists, {}, {.signals = std::array{semaphore_op{theirs.get(), 2}}});
  REQUIRE_FALSE(as_signal.has_value());
  CHECK(as_signal.error() == errc::foreign_object);
  CHECK_THAT(as_signal.error().what(), Catch::Contains("semaphore signal 0"));
  check_unsubmitted(q, 0, *list);
  CHECK(test::require(theirs->value()) == 1);
}

TEST_CASE("semaphores: with inline_completion a wait not signalled yet is refused with wait_not_submitted",
          "[gpu][semaphore]") {
  null_device_options options;
  options.inline_completion = true;
  auto device = test::null_device(options);
  ferrum::gpu::queue& q = device->queue();
  auto timeline = test::require(device->create_semaphore(semaphore_kind::timeline));
  auto binary = test::require(device->create_semaphore(semaphore_kind::binary));
  auto arena = test::require(device->create_arena(64));
  auto list = test::require(device->create_command_list());
  fill_word(*list, *arena, 0, 9);
  command_list* lists[] = {list.get()};

  const std::array on_timeline{semaphore_op{timeline.get(), 2, sync_stage::all}};
  const auto refused = q.submit_next(lists, {}, {.waits = on_timeline});
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error() == errc::wait_not_submitted);
  CHECK_THAT(refused.error().what(), Catch::Contains("semaphore wait 0 is not signalled"));
  check_unsubmitted(q, 0, *list);
  test::require(timeline->signal_from_host(1));
  CHECK(q.submit_next(lists, {}, {.waits = on_timeline}).error() == errc::wait_not_submitted);
  check_unsubmitted(q, 0, *list);
  CHECK(test::word_at(*arena, 0) == 0);
  test::require(timeline->signal_from_host(2));
  const std::uint64_t ran = test::require(q.submit_next(lists, {}, {.waits = on_timeline}));
  CHECK(q.timeline().reached(ran));  // inside submit
  CHECK(test::word_at(*arena, 0) == 9);

  // A binary wait needs a signal not taken by an earlier wait.
  fill_word(*list, *arena, 1, 10);
  const std::array on_binary{semaphore_op{binary.get(), 0, sync_stage::all}};
  CHECK(q.submit_next(lists, {}, {.waits = on_binary}).error() == errc::wait_not_submitted);
  check_unsubmitted(q, ran, *list, ran);
  test::require(binary->signal_from_host(0));
  // Two waits on it in one submission need two signals: one is not enough.
  const std::array twice{semaphore_op{binary.get(), 0, sync_stage::all},
                         semaphore_op{binary.get(), 0, sync_stage::compute}};
  const auto short_one = q.submit_next(lists, {}, {.waits = twice});
  REQUIRE_FALSE(short_one.has_value());
  CHECK(short_one.error() == errc::wait_not_submitted);
  CHECK_THAT(short_one.error().what(), Catch::Contains("semaphore wait 1"));
  check_unsubmitted(q, ran, *list, ran);
  CHECK(test::require(binary->value()) == 1);  // the refused submission took nothing
  const std::uint64_t consumed = test::require(q.submit_next(lists, {}, {.waits = on_binary}));
  CHECK(q.timeline().reached(consumed));
  CHECK(test::word_at(*arena, 1) == 10);
  CHECK(test::require(binary->value()) == 0);
  // Consumed: the next wait is refused again.
  fill_word(*list, *arena, 2, 11);
  CHECK(q.submit_next(lists, {}, {.waits = on_binary}).error() == errc::wait_not_submitted);
  check_unsubmitted(q, consumed, *list, consumed);
  CHECK(test::word_at(*arena, 2) == 0);
  // A signal from a submission counts like a host one.
  const std::uint64_t signalled = test::require(q.submit_next({}, {}, {.signals = on_binary}));
  CHECK(q.timeline().reached(signalled));
  test::require(binary->signal_from_host(0));
  CHECK(test::require(q.submit_next(lists, {}, {.waits = twice})) == signalled + 1);
  CHECK(test::word_at(*arena, 2) == 11);
  CHECK(test::require(binary->value()) == 0);
}

TEST_CASE("semaphores: a lost device makes no semaphore (device_lost) and runs nothing a semaphore released",
          "[gpu][semaphore]") {
  auto device = test::null_device();
  ferrum::gpu::queue& q = device->queue();
  auto ready = test::require(device->create_semaphore(semaphore_kind::timeline));
  auto after = test::require(device->create_semaphore(semaphore_kind::timeline));
  auto arena = test::require(device->create_arena(64));
  auto list = test::require(device->create_command_list());
  fill_word(*list, *arena, 0, 3);
  const std::array wait{semaphore_op{ready.get(), 1, sync_stage::all}};
  const std::array signal{semaphore_op{after.get(), 1, sync_stage::all}};
  const std::uint64_t value = submit_with(q, *list, {.waits = wait, .signals = signal});
  CHECK(test::wait_for(q.timeline(), value, 30ms) == std::nullopt);
  device->lose();
  CHECK(test::wait_for(q.timeline(), value, 5s) == errc::device_lost);
  for (semaphore_kind kind : {semaphore_kind::binary, semaphore_kind::timeline}) {
    const auto refused = device->create_semaphore(kind);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error() == errc::device_lost);
  }
  CHECK(q.submit_next({}, {}, {.waits = wait}).error() == errc::device_lost);
  // Released after the loss, the submission still does not run: no fill, no
  // signal, its value not reached.
  test::require(ready->signal_from_host(1));
  CHECK_FALSE(test::require(after->wait_from_host(1, 200ms)));
  CHECK(test::word_at(*arena, 0) == 0);
  CHECK_FALSE(q.timeline().reached(value));
}

TEST_CASE(
    "semaphores: a device shut down while a submission waits on a semaphore completes its waits with "
    "device_shut_down",
    "[gpu][semaphore]") {
  auto device = test::null_device();
  auto never = test::require(device->create_semaphore(semaphore_kind::binary));
  const std::array wait{semaphore_op{never.get(), 0, sync_stage::all}};
  const std::uint64_t value = test::require(device->queue().submit_next({}, {}, {.waits = wait}));
  // The worker, blocked on the semaphore, does not hold the device up; the
  // semaphore goes after it, once nothing waits on it.
  test::require_shut_down_fails(device, value);
}
