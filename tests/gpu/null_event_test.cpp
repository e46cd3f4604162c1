// Events (split barriers, ferrum/gpu/event.hpp) on the null device with
// null_device_options::reorder_unordered: a wait orders the consumer after
// the commands before the event's set, and only those — the lists between
// the set and the wait stay unordered; a wait dropped, or a set whose
// `before` misses the producer's stage, shows as wrong data; a wait without
// the producer's writes or the consumer's accesses, a set of a signaled
// event and a wait for one nothing set are counted (barrier_access_errors).
// And the list checks: events of another device, lists outside a
// recording, the transfer queue; a lost device's create_event.
#include "null_device_support.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <span>

namespace {

using ferrum::barrier_scope;
using ferrum::gpu::command_list;
using ferrum::gpu::list_opening;
namespace stages = ferrum::stages;
namespace accesses = ferrum::accesses;

// A fill's writes before a copy's reads.
constexpr barrier_scope fill_to_copy{{stages::transfer, accesses::transfer_write},
                                     {stages::transfer, accesses::transfer_read | accesses::transfer_write}};

struct event_fixture {
  std::unique_ptr<ferrum::gpu::null_device> device;
  // produced (A), between (B), consumed (T: A's copy), witness (U: B's copy).
  std::unique_ptr<ferrum::gpu::arena> arena;
  std::unique_ptr<ferrum::gpu::event> event;
  std::array<ferrum::gpu::arena_range, 1> granted;

  event_fixture() {
    ferrum::gpu::null_device_options options;
    options.reorder_unordered = true;
    options.queues = 1;
    device = test::null_device(options);
    arena = test::require(device->create_arena(4 * 64));
    arena->guard();
    granted = {arena->whole()};
    event = test::require(device->create_event());
  }
  [[nodiscard]] ferrum::gpu::arena_range part(std::size_t i) const { return arena->range(i * 64, 64); }
  std::unique_ptr<command_list> list() {
    auto l = test::require(device->create_command_list());
    l->grant(granted);
    test::require(l->begin(list_opening::by_hazards));
    return l;
  }
  void submit(std::span<command_list* const> lists) {
    test::require_reached(device->queue().timeline(), test::require(device->queue().submit_next(lists)));
  }
  void zero() {
    auto clear = list();
    test::require(clear->fill(arena->whole(), 0u));
    test::require(clear->barrier());
    test::require(clear->reset_event(*event));
    test::require(clear->end());
    command_list* lists[] = {clear.get()};
    submit(lists);
  }

  struct outcome {
    std::uint32_t consumed;  // 1: the copy of A came after A's fill
    std::uint64_t errors;
  };
  // producer {fill A = 1; set}, between {fill B = 2}, idle {}, consumer
  // {wait; copy A -> T}: the consumer three lists after its producer, one
  // submission.
  outcome run(bool set, bool wait, const barrier_scope& set_scope, const barrier_scope& wait_scope) {
    const std::uint64_t errors_before = device->barrier_access_errors().count;
    auto producer = list();
    test::require(producer->fill(part(0), 1u));
    if (set) test::require(producer->set_event(*event, set_scope));
    test::require(producer->end());
    auto between = list();
    test::require(between->fill(part(1), 2u));
    test::require(between->end());
    auto idle = list();
    test::require(idle->end());
    auto consumer = list();
    if (wait) test::require(consumer->wait_event(*event, wait_scope));
    test::require(consumer->copy(part(0), part(2)));
    test::require(consumer->end());
    command_list* lists[] = {producer.get(), between.get(), idle.get(), consumer.get()};
    submit(lists);
    const outcome out{test::word_at(*arena, 2 * 16), device->barrier_access_errors().count - errors_before};
    zero();
    return out;
  }
};

}  // namespace

TEST_CASE("null device: an event orders its waiter after the commands before its set, and only those", "[gpu][event]") {
  event_fixture f;
  const auto right = f.run(true, true, fill_to_copy, fill_to_copy);
  CHECK(right.consumed == 1u);
  CHECK(right.errors == 0);
  // The wait dropped: the copy runs before the fill.
  const auto dropped = f.run(true, false, fill_to_copy, fill_to_copy);
  CHECK(dropped.consumed == 0u);
  // The set without the fill's stage: it waits for nothing.
  const barrier_scope wrong_stage{{stages::compute_shader, accesses::transfer_write}, fill_to_copy.after};
  CHECK(f.run(true, true, wrong_stage, wrong_stage).consumed == 0u);
  // The wait without the copy's stage: nothing held.
  const barrier_scope wrong_after{fill_to_copy.before, {stages::compute_shader, accesses::transfer_read}};
  CHECK(f.run(true, true, wrong_after, wrong_after).consumed == 0u);
  // Stages right, accesses too narrow: ordered, but counted.
  const barrier_scope no_writes{{stages::transfer, 0}, fill_to_copy.after};
  const auto narrow = f.run(true, true, no_writes, no_writes);
  CHECK(narrow.consumed == 1u);
  CHECK(narrow.errors == 1);
  const barrier_scope no_reads{fill_to_copy.before, {stages::transfer, 0}};
  CHECK(f.run(true, true, no_reads, no_reads).errors == 1);
  // A wait for an event nothing set.
  CHECK(f.run(false, true, fill_to_copy, fill_to_copy).errors == 1);
}

TEST_CASE("null device: a wait does not order the lists between the set and itself", "[gpu][event]") {
  event_fixture f;
  auto other = test::require(f.device->create_event());
  // early {fill C; set E2}, producer {fill A; set E}, between {wait E2;
  // fill B = 2}: B's fill comes at the level of E's set; witness {wait E;
  // copy B -> U}, at that level too, runs before it (last to first). A
  // wait that ordered everything before it would copy B's 2.
  const auto run = [&](bool split) {
    auto early = f.list();
    test::require(early->fill(f.part(2), 7u));
    test::require(early->set_event(*other, fill_to_copy));
    test::require(early->end());
    auto producer = f.list();
    test::require(producer->fill(f.part(0), 1u));
    test::require(producer->set_event(*f.event, fill_to_copy));
    test::require(producer->end());
    auto between = f.list();
    test::require(between->wait_event(*other, fill_to_copy));
    test::require(between->fill(f.part(1), 2u));
    test::require(between->end());
    auto witness = split ? f.list() : test::require(f.device->create_command_list());
    if (split) {
      test::require(witness->wait_event(*f.event, fill_to_copy));
    } else {
      witness->grant(f.granted);
      test::require(witness->begin(fill_to_copy));
    }
    test::require(witness->copy(f.part(1), f.part(3)));
    test::require(witness->end());
    command_list* lists[] = {early.get(), producer.get(), between.get(), witness.get()};
    f.submit(lists);
    const std::uint32_t copied = test::word_at(*f.arena, 3 * 16);
    auto reset = f.list();
    test::require(reset->reset_event(*other));
    test::require(reset->end());
    command_list* resets[] = {reset.get()};
    f.submit(resets);
    f.zero();
    return copied;
  };
  CHECK(run(true) == 0u);
  // The same scope as a barrier in the witness's place: B's fill first.
  CHECK(run(false) == 2u);
  CHECK(f.device->barrier_access_errors().count == 0);
}

TEST_CASE("null device: an event set again before its reset is counted, and a reset makes it settable",
          "[gpu][event]") {
  event_fixture f;
  const auto set_once = [&] {
    auto l = f.list();
    test::require(l->fill(f.part(0), 1u));
    test::require(l->set_event(*f.event, fill_to_copy));
    test::require(l->end());
    command_list* lists[] = {l.get()};
    f.submit(lists);
  };
  set_once();
  CHECK(f.device->barrier_access_errors().count == 0);
  // Still signaled from the last submission.
  set_once();
  CHECK(f.device->barrier_access_errors().count == 1);
  f.zero();  // resets it
  set_once();
  CHECK(f.device->barrier_access_errors().count == 1);
  // A wait in a later submission finds it signaled.
  auto waiter = f.list();
  test::require(waiter->wait_event(*f.event, fill_to_copy));
  test::require(waiter->copy(f.part(0), f.part(2)));
  test::require(waiter->end());
  command_list* lists[] = {waiter.get()};
  f.submit(lists);
  CHECK(f.device->barrier_access_errors().count == 1);
  CHECK(test::word_at(*f.arena, 2 * 16) == 1u);
  CHECK(waiter->events() == 1);
  CHECK(waiter->size() == 1);
}

TEST_CASE("command list: event commands check the recording, the device and the queue", "[gpu][event]") {
  event_fixture f;
  auto other = test::null_device();
  auto foreign = test::require(other->create_event());
  auto l = test::require(f.device->create_command_list());
  CHECK(l->set_event(*f.event, fill_to_copy).error() == ferrum::errc::command_list_state);
  test::require(l->begin());
  CHECK(l->wait_event(*foreign, fill_to_copy).error() == ferrum::errc::foreign_object);
  CHECK(l->reset_event(*foreign).error() == ferrum::errc::foreign_object);
  CHECK(l->events() == 0);
  test::require(l->reset_event(*f.event));
  CHECK(l->events() == 1);
  ferrum::gpu::null_device_options two;
  two.queues = 2;
  auto with_transfer = test::null_device(two);
  auto event = test::require(with_transfer->create_event());
  auto copies = test::require(with_transfer->create_command_list(ferrum::queue_kind::transfer));
  test::require(copies->begin());
  CHECK(copies->set_event(*event, fill_to_copy).error() == ferrum::errc::unsupported_command);
  // A lost device makes none.
  f.device->lose();
  CHECK(f.device->create_event().error() == ferrum::errc::device_lost);
}
