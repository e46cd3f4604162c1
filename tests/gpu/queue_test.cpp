// A device's queues on the null device: compute and transfer each with a
// queue of their own (or one for both), submissions ordered across queues by
// their waits, and every error a wait can give.
#include "null_device_support.hpp"

#include "ferrum/gpu/builtin_kernels.hpp"

#include <array>
#include <atomic>
#include <thread>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using ferrum::errc;
using ferrum::queue_kind;
using ferrum::gpu::command_list;
using ferrum::gpu::fault_kind;
using ferrum::gpu::null_device_options;
using ferrum::gpu::queue_wait;
namespace builtin = ferrum::gpu::builtin;

namespace {

bool all_words(const ferrum::gpu::arena& a, std::size_t first, std::size_t count, std::uint32_t seed) {
  for (std::size_t i = 0; i < count; ++i)
    if (test::word_at(a, first + i) != builtin::pattern_word(seed, static_cast<std::uint32_t>(i))) return false;
  return true;
}

bool all_zero(const ferrum::gpu::arena& a, std::size_t first, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i)
    if (test::word_at(a, first + i) != 0) return false;
  return true;
}

}  // namespace

TEST_CASE("queues: the null device gives compute and transfer a queue each by default", "[gpu]") {
  auto device = test::null_device();
  ferrum::gpu::queue& compute = device->queue(queue_kind::compute);
  ferrum::gpu::queue& transfer = device->queue(queue_kind::transfer);
  CHECK(device->queue_count() == 2);
  CHECK(&device->queue() == &compute);
  CHECK(&device->queue_at(0) == &compute);
  CHECK(&device->queue_at(1) == &transfer);
  CHECK(&compute != &transfer);
  CHECK(&compute.timeline() != &transfer.timeline());
  CHECK(compute.kind() == queue_kind::compute);
  CHECK(compute.index() == 0);
  CHECK(transfer.kind() == queue_kind::transfer);
  CHECK(transfer.index() == 1);
  CHECK(&transfer.device() == device.get());
  auto list = test::require(device->create_command_list(queue_kind::transfer));
  CHECK(list->kind() == queue_kind::transfer);
  CHECK(test::require(device->create_command_list())->kind() == queue_kind::compute);
}

TEST_CASE("queues: async compute runs on the compute queue by default, on its own with queues = 3", "[gpu]") {
  auto shared = test::null_device();
  CHECK(&shared->queue(queue_kind::async_compute) == &shared->queue());
  null_device_options options;
  options.queues = 3;
  auto device = test::null_device(options);
  REQUIRE(device->queue_count() == 3);
  ferrum::gpu::queue& async = device->queue(queue_kind::async_compute);
  CHECK(&async == &device->queue_at(2));
  CHECK(async.index() == 2);
  CHECK(async.kind() == queue_kind::async_compute);
  CHECK(&async != &device->queue());
  CHECK(&async != &device->queue(queue_kind::transfer));
  // A list made for async compute dispatches and runs on its queue only.
  auto arena = test::require(device->create_arena(64));
  auto writer = test::require(device->create_kernel(builtin::write_pattern()));
  auto list = test::require(device->create_command_list(queue_kind::async_compute));
  CHECK(list->kind() == queue_kind::async_compute);
  test::require(list->begin());
  test::require(list->dispatch(*writer, arena->range(0, 64), {}, std::array{7u}));
  test::require(list->end());
  command_list* lists[] = {list.get()};
  auto refused = device->queue().submit_next(lists);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error() == errc::queue_mismatch);
  CHECK_THAT(refused.error().what(), Catch::Contains("was made for the async-compute queue"));
  const std::uint64_t value = test::require(async.submit_next(lists));
  test::require_reached(async.timeline(), value);
  CHECK(test::word_at(*arena, 3) == builtin::pattern_word(7, 3));
}

TEST_CASE("queues: with queues = 1 both kinds run on one queue in submission order", "[gpu]") {
  null_device_options options;
  options.queues = 1;
  auto device = test::null_device(options);
  CHECK(device->queue_count() == 1);
  CHECK(&device->queue(queue_kind::transfer) == &device->queue(queue_kind::compute));
  CHECK(device->queue().kind() == queue_kind::compute);
  CHECK(device->queue().index() == 0);
  auto arena = test::require(device->create_arena(64));
  auto compute_list = test::require(device->create_command_list(queue_kind::compute));
  auto transfer_list = test::require(device->create_command_list(queue_kind::transfer));
  ferrum::gpu::queue& q = device->queue(queue_kind::transfer);
  test::submit_on(q, *compute_list, [&](command_list& l) { test::require(l.fill(arena->range(0, 32), 5)); });
  const std::uint64_t last = test::submit_on(
      q, *transfer_list, [&](command_list& l) { test::require(l.copy(arena->range(0, 32), arena->range(32, 32))); });
  test::require_reached(q.timeline(), last);
  CHECK(test::word_at(*arena, 15) == 5);
}

TEST_CASE("queues: a queue count other than 1, 2 or 3 is rejected with invalid_device_option", "[gpu]") {
  for (std::size_t queues : {0, 4}) {
    null_device_options options;
    options.queues = queues;
    auto device = ferrum::gpu::null_device::create(options);
    REQUIRE_FALSE(device.has_value());
    CHECK(device.error() == errc::invalid_device_option);
    CHECK_THAT(device.error().what(), Catch::Contains("queues must be 1, 2 or 3"));
  }
}

TEST_CASE("queues: a transfer that waits on a compute submission copies what the compute wrote", "[gpu]") {
  auto device = test::null_device();
  ferrum::gpu::queue& compute = device->queue(queue_kind::compute);
  ferrum::gpu::queue& transfer = device->queue(queue_kind::transfer);
  auto arena = test::require(device->create_arena(4 * 1024));
  auto writer = test::require(device->create_kernel(builtin::write_pattern()));
  auto producer = test::require(device->create_command_list(queue_kind::compute));
  auto unordered = test::require(device->create_command_list(queue_kind::transfer));
  auto ordered = test::require(device->create_command_list(queue_kind::transfer));
  constexpr std::uint32_t seed = 0xc0de;
  test::host_gate producing;
  auto hold = [&] { producing.hold(); };
  // Words [0, 256) are the producer's; [256, 512) and [512, 768) the copies.
  const std::uint64_t produced = test::submit_on(compute, *producer, [&](command_list& l) {
    test::require(l.host(ferrum::gpu::host_call(hold)));
    test::require(l.dispatch(*writer, arena->range(0, 1024), {}, std::array{seed}));
  });
  // Without the wait the copy runs at once, while the producer is held: it
  // copies nothing yet. This is what the wait below prevents.
  const std::uint64_t early = test::submit_on(transfer, *unordered, [&](command_list& l) {
    test::require(l.copy(arena->range(0, 1024), arena->range(1024, 1024)));
  });
  test::require_reached(transfer.timeline(), early);
  CHECK(all_zero(*arena, 256, 256));

  const std::array after{queue_wait{&compute, produced}};
  const std::uint64_t copied = test::submit_on(
      transfer, *ordered,
      [&](command_list& l) { test::require(l.copy(arena->range(0, 1024), arena->range(2048, 1024))); }, after);
  CHECK(test::wait_for(transfer.timeline(), copied, 50ms) == std::nullopt);
  CHECK_FALSE(compute.timeline().reached(produced));
  producing.open();
  test::require_reached(transfer.timeline(), copied);
  CHECK(compute.timeline().reached(produced));
  CHECK(all_words(*arena, 512, 256, seed));
}

TEST_CASE("queues: a compute kernel that waits on a transfer reads what the transfer uploaded", "[gpu]") {
  auto device = test::null_device();
  ferrum::gpu::queue& compute = device->queue(queue_kind::compute);
  ferrum::gpu::queue& transfer = device->queue(queue_kind::transfer);
  auto staging = test::require(device->create_arena(1024));
  auto data = test::require(device->create_arena(1024));
  auto counters = test::require(device->create_arena(8));
  auto checker = test::require(device->create_kernel(builtin::check_pattern()));
  auto upload = test::require(device->create_command_list(queue_kind::transfer));
  auto unordered = test::require(device->create_command_list(queue_kind::compute));
  auto ordered = test::require(device->create_command_list(queue_kind::compute));
  constexpr std::uint32_t seed = 0xfeed;
  for (std::uint32_t i = 0; i < 256; ++i) test::set_word(*staging, i, builtin::pattern_word(seed, i));
  test::host_gate uploading;
  auto hold = [&] { uploading.hold(); };
  const std::uint64_t uploaded = test::submit_on(transfer, *upload, [&](command_list& l) {
    test::require(l.host(ferrum::gpu::host_call(hold)));
    test::require(l.copy(staging->whole(), data->whole()));
  });
  // Unordered, the check runs before the upload: every word differs.
  const std::uint64_t early = test::submit_on(compute, *unordered, [&](command_list& l) {
    test::require(l.dispatch(*checker, data->whole(), counters->range(0, 4), std::array{seed}));
  });
  test::require_reached(compute.timeline(), early);
  CHECK(test::word_at(*counters, 0) == 256);

  const std::array after{queue_wait{&transfer, uploaded}};
  const std::uint64_t checked = test::submit_on(
      compute, *ordered,
      [&](command_list& l) {
        test::require(l.dispatch(*checker, data->whole(), counters->range(4, 4), std::array{seed}));
      },
      after);
  CHECK(test::wait_for(compute.timeline(), checked, 50ms) == std::nullopt);
  uploading.open();
  test::require_reached(compute.timeline(), checked);
  CHECK(test::word_at(*counters, 1) == 0);  // no word differs
  CHECK(all_words(*data, 0, 256, seed));
}

TEST_CASE("queues: a wait on a value its queue has not submitted is refused with wait_not_submitted", "[gpu]") {
  auto device = test::null_device();
  ferrum::gpu::queue& compute = device->queue(queue_kind::compute);
  ferrum::gpu::queue& transfer = device->queue(queue_kind::transfer);
  auto list = test::require(device->create_command_list(queue_kind::transfer));
  test::require(list->begin());
  test::require(list->end());
  command_list* lists[] = {list.get()};
  const std::uint64_t produced = test::require(compute.submit_next({}));

  const std::array beyond{queue_wait{&compute, produced + 1}};
  const auto refused = transfer.submit_next(lists, beyond);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error() == errc::wait_not_submitted);
  CHECK_THAT(refused.error().what(), Catch::Contains("value 2 of the compute queue"));
  // Nothing was submitted: the list is still unsubmitted and executable.
  CHECK(transfer.last_submitted() == 0);
  CHECK(list->submitted_value() == 0);
  CHECK(list->submitted_queue() == nullptr);
  CHECK(list->executable());

  // Its own timeline's next value (what it would signal) is not submitted either.
  const std::array own{queue_wait{&transfer, 1}};
  CHECK(transfer.submit(lists, 1, own).error() == errc::wait_not_submitted);
  // One bad wait among good ones refuses the whole submission.
  const std::array mixed{queue_wait{&compute, produced}, queue_wait{&compute, 9}};
  CHECK(transfer.submit({}, 1, mixed).error() == errc::wait_not_submitted);
  CHECK(transfer.last_submitted() == 0);

  // A submitted value, and value 0, are accepted.
  const std::array fine{queue_wait{&compute, produced}, queue_wait{&transfer, 0}};
  const std::uint64_t value = test::require(transfer.submit_next(lists, fine));
  test::require_reached(transfer.timeline(), value);
}

TEST_CASE("queues: a wait on the queue's own submitted value is allowed", "[gpu]") {
  auto device = test::null_device();
  ferrum::gpu::queue& compute = device->queue();
  auto arena = test::require(device->create_arena(64));
  auto first = test::require(device->create_command_list());
  auto second = test::require(device->create_command_list());
  const std::uint64_t filled =
      test::submit_on(compute, *first, [&](command_list& l) { test::require(l.fill(arena->range(0, 32), 9)); });
  const std::array own{queue_wait{&compute, filled}};
  const std::uint64_t copied = test::submit_on(
      compute, *second, [&](command_list& l) { test::require(l.copy(arena->range(0, 32), arena->range(32, 32))); },
      own);
  test::require_reached(compute.timeline(), copied);
  CHECK(test::word_at(*arena, 15) == 9);
}

TEST_CASE("queues: a wait on a queue of another device or on no queue is refused with foreign_object", "[gpu]") {
  auto device = test::null_device();
  auto other = test::null_device();
  const std::uint64_t theirs = test::require(other->queue().submit_next({}));
  const std::array foreign{queue_wait{&other->queue(), theirs}};
  const auto refused = device->queue().submit_next({}, foreign);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error() == errc::foreign_object);
  CHECK_THAT(refused.error().what(), Catch::Contains("a queue of another device"));
  const std::array nowhere{queue_wait{nullptr, 0}};
  CHECK(device->queue(queue_kind::transfer).submit({}, 1, nowhere).error() == errc::foreign_object);
  CHECK(device->queue().last_submitted() == 0);
  CHECK(device->queue(queue_kind::transfer).last_submitted() == 0);
}

TEST_CASE("queues: a list submitted to the queue of another kind is refused with queue_mismatch", "[gpu]") {
  auto device = test::null_device();
  auto compute_list = test::require(device->create_command_list(queue_kind::compute));
  auto transfer_list = test::require(device->create_command_list(queue_kind::transfer));
  for (command_list* l : {compute_list.get(), transfer_list.get()}) {
    test::require(l->begin());
    test::require(l->end());
  }
  command_list* compute_lists[] = {compute_list.get()};
  command_list* transfer_lists[] = {transfer_list.get()};
  const auto refused = device->queue(queue_kind::transfer).submit_next(compute_lists);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error() == errc::queue_mismatch);
  CHECK_THAT(refused.error().what(), Catch::Contains("made for the compute queue"));
  CHECK(device->queue(queue_kind::compute).submit(transfer_lists, 1).error() == errc::queue_mismatch);
  CHECK(compute_list->executable());
  CHECK(transfer_list->executable());
  CHECK(device->queue(queue_kind::transfer).last_submitted() == 0);

  // With one queue for both kinds, either list goes to it.
  null_device_options one;
  one.queues = 1;
  auto shared = test::null_device(one);
  auto copy = test::require(shared->create_command_list(queue_kind::transfer));
  test::require(copy->begin());
  test::require(copy->end());
  command_list* copies[] = {copy.get()};
  test::require_reached(shared->queue().timeline(), test::require(shared->queue().submit_next(copies)));
}

TEST_CASE("queues: a list for the transfer queue records no dispatch (unsupported_command)", "[gpu]") {
  auto device = test::null_device();
  auto arena = test::require(device->create_arena(64));
  auto writer = test::require(device->create_kernel(builtin::write_pattern()));
  auto list = test::require(device->create_command_list(queue_kind::transfer));
  test::require(list->begin());
  const auto refused = list->dispatch(*writer, arena->whole(), {}, std::array{1u});
  CHECK(refused.error() == errc::unsupported_command);
  CHECK_THAT(refused.error().what(), Catch::Contains("transfer queue"));
  CHECK(list->size() == 0);
  test::require(list->fill(arena->whole(), 1));
  test::require(list->copy(arena->range(0, 32), arena->range(32, 32)));
  CHECK(list->size() == 2);
}

TEST_CASE("queues: a list is in flight until its own queue's timeline reaches its value", "[gpu]") {
  auto device = test::null_device();
  ferrum::gpu::queue& transfer = device->queue(queue_kind::transfer);
  auto arena = test::require(device->create_arena(64));
  auto list = test::require(device->create_command_list(queue_kind::transfer));
  test::host_gate held;
  auto hold = [&] { held.hold(); };
  const std::uint64_t value = test::submit_on(transfer, *list, [&](command_list& l) {
    test::require(l.host(ferrum::gpu::host_call(hold)));
    test::require(l.fill(arena->whole(), 3));
  });
  CHECK(list->submitted_queue() == &transfer);
  // The compute timeline passing the list's value says nothing about it.
  std::uint64_t beyond = 0;
  for (std::uint64_t i = 0; i <= value; ++i) beyond = test::require(device->queue().submit_next({}));
  test::require_reached(device->queue().timeline(), beyond);
  CHECK_FALSE(list->executable());
  CHECK(list->begin().error() == errc::command_list_in_flight);
  command_list* lists[] = {list.get()};
  CHECK(transfer.submit_next(lists).error() == errc::command_list_in_flight);
  held.open();
  test::require_reached(transfer.timeline(), value);
  CHECK(list->executable());
  test::require(list->begin());
}

TEST_CASE("queues: a device lost while a queue waits on another fails that wait with device_lost", "[gpu]") {
  null_device_options options;
  options.faults = {.seed = 2, .hang = 1.0};  // nothing completes until the device goes
  auto device = test::null_device(options);
  ferrum::gpu::queue& compute = device->queue(queue_kind::compute);
  ferrum::gpu::queue& transfer = device->queue(queue_kind::transfer);
  const std::uint64_t produced = test::require(compute.submit_next({}));
  const std::array after{queue_wait{&compute, produced}};
  const std::uint64_t waiting = test::require(transfer.submit_next({}, after));
  CHECK(test::wait_for(transfer.timeline(), waiting, 30ms) == std::nullopt);
  device->lose();
  CHECK(test::wait_for(transfer.timeline(), waiting, 5s) == errc::device_lost);
  CHECK(test::wait_for(compute.timeline(), produced, 5s) == errc::device_lost);
  CHECK(device->lost());
  CHECK(transfer.submit_next({}).error() == errc::device_lost);
  device.reset();  // the transfer worker, blocked on the compute queue, does not hold it up
}

TEST_CASE("queues: shutting down while a queue waits on a hung one completes its waits with device_shut_down",
          "[gpu]") {
  null_device_options options;
  options.faults = {.seed = 4, .hang = 1.0};
  auto device = test::null_device(options);
  ferrum::gpu::queue& compute = device->queue(queue_kind::compute);
  ferrum::gpu::queue& transfer = device->queue(queue_kind::transfer);
  const std::uint64_t produced = test::require(compute.submit_next({}));
  const std::array after{queue_wait{&compute, produced}};
  const std::uint64_t waiting = test::require(transfer.submit_next({}, after));
  std::promise<boost::system::error_code> done;
  ferrum::gpu::async_wait(transfer.timeline(), waiting, [&](boost::system::error_code ec) { done.set_value(ec); });
  auto result = done.get_future();
  CHECK(result.wait_for(30ms) == std::future_status::timeout);
  device.reset();
  REQUIRE(result.wait_for(5s) == std::future_status::ready);
  CHECK(result.get() == errc::device_shut_down);
}

TEST_CASE("queues: faults on queue 0 are the one-queue decisions and other queues get their own", "[gpu]") {
  const ferrum::gpu::null_fault_options options{.seed = 42, .lost = 0.01, .hang = 0.02, .delay = 0.2};
  int differing = 0;
  for (std::uint64_t s = 1; s <= 2000; ++s) {
    const auto single = ferrum::gpu::decide_fault(options, s);
    const auto first = ferrum::gpu::decide_fault(options, 0, s);
    REQUIRE(single.has_value() == first.has_value());
    if (single) {
      CHECK(single->kind == first->kind);
      CHECK(single->delay == first->delay);
    }
    const auto second = ferrum::gpu::decide_fault(options, 1, s);
    const auto again = ferrum::gpu::decide_fault(options, 1, s);
    REQUIRE(second.has_value() == again.has_value());
    differing += second.has_value() != first.has_value();
  }
  CHECK(differing > 100);
  // Pinned: the faults of queue 0 are those a one-queue device always had
  // (the first 20 submissions of seed 42; delay 0, hang 1, lost 2 as
  // fault_kind orders them).
  std::vector<std::pair<std::uint64_t, fault_kind>> pinned;
  for (std::uint64_t s = 1; s <= 20; ++s)
    if (const auto f = ferrum::gpu::decide_fault(options, 0, s)) pinned.emplace_back(s, f->kind);
  const std::vector<std::pair<std::uint64_t, fault_kind>> always{
      {2, fault_kind::delay},  {6, fault_kind::delay},  {9, fault_kind::hang},   {10, fault_kind::delay},
      {11, fault_kind::delay}, {12, fault_kind::delay}, {14, fault_kind::delay}, {18, fault_kind::hang}};
  CHECK(pinned == always);
}

TEST_CASE("queues: a lost fault on the transfer queue loses every queue", "[gpu]") {
  null_device_options options;
  options.faults = {.seed = 11, .lost = 0.2};
  std::uint64_t lost_at = 1;
  while (!ferrum::gpu::decide_fault(options.faults, 1, lost_at) ||
         ferrum::gpu::decide_fault(options.faults, 1, lost_at)->kind != fault_kind::lost)
    ++lost_at;
  auto device = test::null_device(options);
  ferrum::gpu::queue& transfer = device->queue(queue_kind::transfer);
  for (std::uint64_t i = 1; i <= lost_at; ++i) {
    if (!transfer.submit_next({})) break;  // the worker may have reached the loss already
  }
  CHECK(test::wait_for(transfer.timeline(), lost_at, 5s) == errc::device_lost);
  CHECK(test::wait_for(device->queue().timeline(), 1, 5s) == errc::device_lost);
  CHECK(device->lost());
  CHECK(device->injected_faults().lost == 1);
  CHECK(device->queue().submit_next({}).error() == errc::device_lost);
}

TEST_CASE("queues: with inline_completion a cross-queue wait is reached inside submit", "[gpu]") {
  null_device_options options;
  options.inline_completion = true;
  auto device = test::null_device(options);
  ferrum::gpu::queue& compute = device->queue(queue_kind::compute);
  ferrum::gpu::queue& transfer = device->queue(queue_kind::transfer);
  REQUIRE(device->queue_count() == 2);
  auto arena = test::require(device->create_arena(2048));
  auto writer = test::require(device->create_kernel(builtin::write_pattern()));
  auto producer = test::require(device->create_command_list(queue_kind::compute));
  auto consumer = test::require(device->create_command_list(queue_kind::transfer));
  const std::uint64_t produced = test::submit_on(compute, *producer, [&](command_list& l) {
    test::require(l.dispatch(*writer, arena->range(0, 1024), {}, std::array{7u}));
  });
  CHECK(compute.timeline().reached(produced));
  const std::array after{queue_wait{&compute, produced}};
  const std::uint64_t copied = test::submit_on(
      transfer, *consumer,
      [&](command_list& l) { test::require(l.copy(arena->range(0, 1024), arena->range(1024, 1024))); }, after);
  CHECK(transfer.timeline().reached(copied));
  CHECK(all_words(*arena, 256, 256, 7));
}

TEST_CASE("queues: a retired object lives until every queue it waits for reaches its value", "[gpu]") {
  auto device = test::null_device();
  ferrum::gpu::queue& compute = device->queue(queue_kind::compute);
  ferrum::gpu::queue& transfer = device->queue(queue_kind::transfer);
  auto first = test::require(device->create_command_list(queue_kind::transfer));
  auto second = test::require(device->create_command_list(queue_kind::transfer));
  test::host_gate held_first;
  test::host_gate held_second;
  auto hold_first = [&] { held_first.hold(); };
  auto hold_second = [&] { held_second.hold(); };
  const std::uint64_t value = test::submit_on(
      transfer, *first, [&](command_list& l) { test::require(l.host(ferrum::gpu::host_call(hold_first))); });
  std::uint64_t beyond = 0;
  for (std::uint64_t i = 0; i <= value + 1; ++i) beyond = test::require(compute.submit_next({}));
  test::require_reached(compute.timeline(), beyond);

  // Retired on the transfer queue: the compute timeline being past the value
  // does not free it.
  bool on_transfer = false;
  device->retire(std::make_unique<test::observed_arena>(*device, on_transfer), transfer, value);
  bool old_form = false;  // retire(object, value) waits for the compute queue
  device->retire(std::make_unique<test::observed_arena>(*device, old_form), beyond);
  CHECK(old_form);
  CHECK_FALSE(on_transfer);

  const std::uint64_t later = test::submit_on(
      transfer, *second, [&](command_list& l) { test::require(l.host(ferrum::gpu::host_call(hold_second))); });
  bool on_both = false;
  const std::array both{queue_wait{&compute, beyond}, queue_wait{&transfer, later}};
  device->retire(std::make_unique<test::observed_arena>(*device, on_both), both);

  held_first.open();
  test::require_reached(transfer.timeline(), value);
  bool trigger = false;  // each retirement frees what has become safe
  device->retire(std::make_unique<test::observed_arena>(*device, trigger), 0);
  CHECK(trigger);
  CHECK(on_transfer);
  CHECK_FALSE(on_both);

  held_second.open();
  test::require_reached(transfer.timeline(), later);
  device->retire(std::make_unique<test::observed_arena>(*device, trigger), 0);
  CHECK(on_both);
}

TEST_CASE("queues: two threads submitting to two queues that wait on each other never deadlock", "[gpu]") {
  auto device = test::null_device();
  ferrum::gpu::queue& compute = device->queue(queue_kind::compute);
  ferrum::gpu::queue& transfer = device->queue(queue_kind::transfer);
  constexpr int rounds = 2000;
  const auto submitter = [&](ferrum::gpu::queue& mine, ferrum::gpu::queue& theirs) {
    for (int i = 0; i < rounds; ++i) {
      const std::array after{queue_wait{&theirs, theirs.last_submitted()}};
      (void)mine.submit_next({}, after).value();
    }
  };
  std::thread a(submitter, std::ref(compute), std::ref(transfer));
  std::thread b(submitter, std::ref(transfer), std::ref(compute));
  a.join();
  b.join();
  test::require_reached(compute.timeline(), rounds);
  test::require_reached(transfer.timeline(), rounds);
}

TEST_CASE("errc: the queue codes follow the plan dependency codes, and the timeline's code comes after them",
          "[gpu][errc]") {
  CHECK(ferrum::errc_name(errc::wait_not_submitted) == "wait_not_submitted");
  CHECK(ferrum::errc_name(errc::queue_mismatch) == "queue_mismatch");
  CHECK(static_cast<int>(errc::wait_not_submitted) == static_cast<int>(errc::dependency_not_earlier) + 1);
  CHECK(static_cast<int>(errc::queue_mismatch) == static_cast<int>(errc::wait_not_submitted) + 1);
  CHECK(static_cast<int>(errc::wait_already_pending) == static_cast<int>(errc::queue_mismatch) + 1);
  CHECK(ferrum::errc_name(errc::wait_already_pending) == "wait_already_pending");
  CHECK(static_cast<int>(errc::invalid_access) == static_cast<int>(errc::presentation_unsupported) + 1);
  CHECK(static_cast<int>(errc::invalid_memory_class) == static_cast<int>(errc::invalid_access) + 1);
  CHECK(static_cast<int>(errc::not_staged) == static_cast<int>(errc::no_host_bytes) + 1);
  CHECK(static_cast<int>(errc::lane_state_failed) == static_cast<int>(errc::not_staged) + 1);
  CHECK(static_cast<int>(errc::import_missing) == static_cast<int>(errc::lane_state_failed) + 1);
  CHECK(static_cast<int>(errc::import_too_small) == static_cast<int>(errc::import_missing) + 1);
  CHECK(static_cast<int>(errc::invalid_image) == static_cast<int>(errc::import_too_small) + 1);
  CHECK(static_cast<int>(errc::image_read_before_write) == static_cast<int>(errc::invalid_image) + 2);
  CHECK(static_cast<int>(errc::kernel_operand_mismatch) == static_cast<int>(errc::image_read_before_write) + 1);
  CHECK(static_cast<int>(errc::raster_unsupported) == static_cast<int>(errc::kernel_operand_mismatch) + 1);
  CHECK(static_cast<int>(errc::unordered_hazard) == static_cast<int>(errc::raster_unsupported) + 1);
  CHECK(static_cast<int>(errc::unknown_resource) == static_cast<int>(errc::unordered_hazard) + 1);
  CHECK(static_cast<int>(errc::format_unsupported) == static_cast<int>(errc::unknown_resource) + 1);
  CHECK(static_cast<int>(errc::buffer_usage_missing) == static_cast<int>(errc::format_unsupported) + 1);
  CHECK(static_cast<int>(errc::invalid_history) == static_cast<int>(errc::buffer_usage_missing) + 1);
  CHECK(static_cast<int>(errc::import_not_shared) == static_cast<int>(errc::invalid_history) + 1);
  CHECK(ferrum::errc_name(static_cast<errc>(static_cast<int>(errc::import_not_shared) + 1)) == "unknown");
}

TEST_CASE("queues: lock() holds back every submission to the queue until released", "[gpu]") {
  auto device = ::test::null_device();
  ferrum::gpu::queue& q = device->queue();
  std::atomic<bool> submitted{false};
  std::uint64_t value = 0;
  std::thread submitter;
  {
    const std::unique_lock<std::mutex> held = q.lock();
    // No Catch2 assertion on this thread (they are not thread-safe).
    submitter = std::thread([&] {
      const auto next = q.submit_next({});
      value = next ? *next : 0;
      submitted.store(true);
    });
    // The engine's own use of the native queue happens here; ferrum's
    // submission waits for it, however long it takes.
    std::this_thread::sleep_for(50ms);
    CHECK_FALSE(submitted.load());
    CHECK(q.last_submitted() == 0);
  }
  submitter.join();
  CHECK(submitted.load());
  CHECK(value == 1);
  test::require_reached(q.timeline(), value);
}
