// The checks every device shares (command lists, the queue, kernels), on the
// null device.
#include "null_device_support.hpp"
#include "test_timeline.hpp"

#include "ferrum/gpu/builtin_kernels.hpp"

#include <algorithm>
#include <span>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using ferrum::errc;
using ferrum::gpu::command_list;
namespace builtin = ferrum::gpu::builtin;

namespace {

// A queue whose device part accepts every submission and runs nothing: the
// checks of queue::submit, on a timeline the test moves.
class stub_queue final : public ferrum::gpu::queue {
 public:
  stub_queue(const ferrum::gpu::device& owner, ferrum::gpu::timeline& t) noexcept : queue(owner, t) {}

 protected:
  ferrum::result<void> do_submit(std::span<command_list* const>, std::uint64_t,
                                 std::span<const ferrum::gpu::queue_wait>, const ferrum::gpu::external_sync&) override {
    return {};
  }
};

struct fixture {
  std::unique_ptr<ferrum::gpu::null_device> device = test::null_device();
  std::unique_ptr<ferrum::gpu::arena> arena = test::require(device->create_arena(256));
  std::unique_ptr<ferrum::gpu::kernel> writer = test::require(device->create_kernel(builtin::write_pattern()));
  std::unique_ptr<command_list> list = test::require(device->create_command_list());

  fixture() { test::require(list->begin()); }
};

}  // namespace

TEST_CASE("command list: a range outside its arena is refused and nothing is recorded", "[gpu]") {
  fixture f;
  CHECK(f.list->fill(f.arena->range(252, 8), 0).error() == errc::range_out_of_bounds);
  CHECK(f.list->fill(f.arena->range(260, 0), 0).error() == errc::range_out_of_bounds);
  CHECK(f.list->fill(f.arena->range(8, SIZE_MAX - 4), 0).error() == errc::range_out_of_bounds);
  CHECK(f.list->fill({}, 0).error() == errc::range_out_of_bounds);
  CHECK(f.list->dispatch(*f.writer, ferrum::gpu::arena_range{}, {}, {}).error() == errc::range_out_of_bounds);
  CHECK(f.list->dispatch(*f.writer, f.arena->whole(), f.arena->range(256, 4), {}).error() == errc::range_out_of_bounds);
  const auto e = f.list->copy(f.arena->range(0, 8), f.arena->range(250, 8)).error();
  CHECK(e == errc::range_out_of_bounds);
  CHECK(e.detail == "copy destination range [250, +8) of an arena of 256 bytes");
  CHECK(f.list->size() == 0);
}

TEST_CASE("command list: a guarded arena is reached only through the list's granted ranges", "[gpu]") {
  fixture f;
  auto guarded = test::require(f.device->create_arena(256));
  guarded->guard();
  // No grant: nothing of it.
  CHECK(f.list->fill(guarded->range(0, 4), 0).error() == errc::range_not_granted);
  const ferrum::gpu::arena_range granted[] = {guarded->range(64, 32)};
  f.list->grant(granted);
  test::require(f.list->fill(guarded->range(64, 32), 1));                            // the whole grant
  test::require(f.list->fill(guarded->range(72, 8), 2));                             // inside it
  CHECK(f.list->fill(guarded->range(60, 8), 0).error() == errc::range_not_granted);  // straddles its start
  CHECK(f.list->fill(guarded->range(92, 8), 0).error() == errc::range_not_granted);  // straddles its end
  CHECK(f.list->copy(guarded->range(64, 8), guarded->range(0, 8)).error() == errc::range_not_granted);
  CHECK(f.list->dispatch(*f.writer, guarded->whole(), {}, {}).error() == errc::range_not_granted);
  // A copy reads anywhere in an arena the list has a grant in, not in others.
  test::require(f.list->copy(guarded->range(0, 8), guarded->range(64, 8)));
  auto other = test::require(f.device->create_arena(256));
  other->guard();
  CHECK(f.list->copy(other->range(0, 8), guarded->range(64, 8)).error() == errc::range_not_granted);
  // An unguarded arena is not restricted by grants.
  test::require(f.list->fill(f.arena->whole(), 3));
  CHECK(f.list->size() == 4);
}

TEST_CASE("command list: begin() opens with a barrier and puts one between every two commands", "[gpu]") {
  fixture f;
  CHECK(f.list->barriers() == 0);  // an empty list has none
  test::require(f.list->fill(f.arena->range(0, 64), 1));
  CHECK(f.list->barriers() == 1);  // before the first command
  test::require(f.list->fill(f.arena->range(64, 64), 2));
  test::require(f.list->fill(f.arena->range(128, 64), 3));
  CHECK(f.list->barriers() == 3);
  CHECK(f.list->size() == 3);
  test::require(f.list->end());
  CHECK(f.list->barriers() == 3);
}

TEST_CASE("command list: the null device has no native recording, and records nothing for one", "[gpu]") {
  fixture f;
  test::require(f.list->fill(f.arena->range(0, 64), 1));
  const auto native = f.list->record_native();
  REQUIRE_FALSE(native.has_value());
  CHECK(native.error() == errc::native_unavailable);
  CHECK(native.error().what().find("null device") != std::string::npos);
  CHECK(f.list->size() == 1);      // not counted as a command
  CHECK(f.list->barriers() == 1);  // and no barrier for it
  test::require(f.list->end());
  CHECK(f.list->record_native().error() == errc::command_list_state);  // outside begin() ... end()
  CHECK(f.arena->device_address() == 0);                               // nor buffer device addresses
}

TEST_CASE("command list: by_hazards on granted ranges opens without a barrier, then one between commands", "[gpu]") {
  fixture f;
  auto guarded = test::require(f.device->create_arena(256));
  guarded->guard();
  const ferrum::gpu::arena_range granted[] = {guarded->range(0, 64), guarded->range(64, 64), guarded->range(128, 64)};
  f.list->grant(granted);
  test::require(f.list->begin(ferrum::gpu::list_opening::by_hazards));
  CHECK(f.list->barriers() == 0);
  test::require(f.list->fill(granted[0], 1));
  CHECK(f.list->barriers() == 0);  // its owner orders the granted ranges
  test::require(f.list->fill(granted[1], 2));
  CHECK(f.list->barriers() == 1);
  test::require(f.list->fill(granted[2], 3));
  CHECK(f.list->barriers() == 2);
  // A copy inside the grants is ordered after the fills, as any command.
  test::require(f.list->copy(guarded->range(0, 8), guarded->range(64, 8)));
  CHECK(f.list->barriers() == 3);
  CHECK(f.list->size() == 4);
}

TEST_CASE("command list: by_hazards opens with a barrier when the first command writes an unguarded arena", "[gpu]") {
  fixture f;
  test::require(f.list->begin(ferrum::gpu::list_opening::by_hazards));
  test::require(f.list->fill(f.arena->whole(), 1));
  CHECK(f.list->barriers() == 1);
  // A dispatch on it, as a fill.
  test::require(f.list->begin(ferrum::gpu::list_opening::by_hazards));
  test::require(f.list->dispatch(*f.writer, f.arena->range(0, 64), {}, {}));
  CHECK(f.list->barriers() == 1);
}

TEST_CASE("command list: by_hazards puts a barrier before a copy that reads a guarded arena outside the grants",
          "[gpu]") {
  fixture f;
  auto guarded = test::require(f.device->create_arena(256));
  guarded->guard();
  const ferrum::gpu::arena_range granted[] = {guarded->range(64, 32)};
  f.list->grant(granted);
  // The source lies outside the granted range, in an arena the list has a
  // grant in (allowed): the owner's hazards do not cover it.
  test::require(f.list->begin(ferrum::gpu::list_opening::by_hazards));
  test::require(f.list->copy(guarded->range(0, 8), guarded->range(64, 8)));
  CHECK(f.list->barriers() == 1);
  // Inside the grant, the same copy opens without one.
  test::require(f.list->begin(ferrum::gpu::list_opening::by_hazards));
  test::require(f.list->copy(guarded->range(80, 8), guarded->range(64, 8)));
  CHECK(f.list->barriers() == 0);
  // A copy from an unguarded arena reaches outside the grants too.
  test::require(f.list->begin(ferrum::gpu::list_opening::by_hazards));
  test::require(f.list->copy(f.arena->range(0, 8), guarded->range(64, 8)));
  CHECK(f.list->barriers() == 1);
}

TEST_CASE("command list: host functions and timestamps neither record a barrier nor make one due", "[gpu]") {
  fixture f;
  auto guarded = test::require(f.device->create_arena(256));
  guarded->guard();
  const ferrum::gpu::arena_range granted[] = {guarded->whole()};
  f.list->grant(granted);
  auto stamps = test::require(f.device->create_timestamp_pool(2));
  int calls = 0;
  auto call = [&calls] { ++calls; };
  test::require(f.list->begin(ferrum::gpu::list_opening::by_hazards));
  test::require(f.list->timestamp(*stamps, 0));
  test::require(f.list->host(ferrum::gpu::host_call(call)));
  CHECK(f.list->barriers() == 0);
  test::require(f.list->fill(guarded->range(0, 64), 1));
  CHECK(f.list->barriers() == 0);  // still the list's first command
  test::require(f.list->host(ferrum::gpu::host_call(call)));
  test::require(f.list->timestamp(*stamps, 1));
  test::require(f.list->fill(guarded->range(64, 64), 2));
  CHECK(f.list->barriers() == 1);  // the one between the two fills, no more
  test::require(f.list->host(ferrum::gpu::host_call(call)));
  CHECK(f.list->barriers() == 1);

  // With begin(): the opening barrier and the one between the fills.
  test::require(f.list->begin());
  test::require(f.list->host(ferrum::gpu::host_call(call)));
  CHECK(f.list->barriers() == 0);
  test::require(f.list->fill(guarded->range(0, 64), 1));
  test::require(f.list->timestamp(*stamps, 0));
  test::require(f.list->fill(guarded->range(64, 64), 2));
  CHECK(f.list->barriers() == 2);
  CHECK(calls == 0);  // recorded, never submitted
}

TEST_CASE("command list: begin() resets the barrier count", "[gpu]") {
  fixture f;
  test::require(f.list->fill(f.arena->range(0, 64), 1));
  test::require(f.list->fill(f.arena->range(64, 64), 2));
  CHECK(f.list->barriers() == 2);
  test::require(f.list->end());
  test::require(f.list->begin());
  CHECK(f.list->barriers() == 0);
  CHECK(f.list->size() == 0);
  test::require(f.list->fill(f.arena->range(0, 64), 1));
  CHECK(f.list->barriers() == 1);
  // Submitted and reached: the next recording starts from none again.
  test::require(f.list->end());
  command_list* lists[] = {f.list.get()};
  test::require(f.device->queue().submit(lists, 1));
  test::require_reached(f.device->queue().timeline(), 1);
  test::require(f.list->begin(ferrum::gpu::list_opening::by_hazards));
  CHECK(f.list->barriers() == 0);
  test::require(f.list->end());
  CHECK(f.list->barriers() == 0);  // an empty list
}

TEST_CASE("command list: ranges must start and end on 4-byte boundaries", "[gpu]") {
  fixture f;
  CHECK(f.list->fill(f.arena->range(2, 8), 0).error() == errc::misaligned_range);
  CHECK(f.list->fill(f.arena->range(0, 6), 0).error() == errc::misaligned_range);
  CHECK(f.list->dispatch(*f.writer, f.arena->range(4, 3), {}, {}).error() == errc::misaligned_range);
  CHECK(f.list->size() == 0);
}

TEST_CASE("command list: copies need equal sizes and ranges that do not overlap", "[gpu]") {
  fixture f;
  CHECK(f.list->copy(f.arena->range(0, 8), f.arena->range(64, 16)).error() == errc::copy_size_mismatch);
  CHECK(f.list->copy(f.arena->range(0, 16), f.arena->range(12, 16)).error() == errc::overlapping_copy);
  CHECK(f.list->copy(f.arena->range(0, 16), f.arena->range(16, 16)).has_value());
  CHECK(f.list->size() == 1);
}

TEST_CASE("command list: arenas and kernels of another device are refused", "[gpu]") {
  fixture f;
  fixture other;
  CHECK(f.list->fill(other.arena->whole(), 0).error() == errc::foreign_object);
  CHECK(f.list->dispatch(*other.writer, f.arena->whole(), {}, {}).error() == errc::foreign_object);
  test::require(f.list->end());
  command_list* lists[] = {f.list.get()};
  CHECK(other.device->queue().submit(lists, 1).error() == errc::foreign_object);
}

TEST_CASE("command list: more push-constant words than the kernel takes are refused", "[gpu]") {
  fixture f;
  CHECK(f.list->dispatch(*f.writer, f.arena->whole(), {}, std::array{1u, 2u}).error() ==
        errc::push_constants_too_large);
  CHECK(f.list->dispatch(*f.writer, f.arena->whole(), {}, {}).has_value());  // missing words are zero
  auto too_many = builtin::affine();
  too_many.push_words = ferrum::gpu::max_kernel_push_words + 1;
  CHECK(f.device->create_kernel(too_many).error() == errc::push_constants_too_large);
}

TEST_CASE("command list: kernels need a form the device runs and a workgroup size in 1..1024", "[gpu]") {
  fixture f;
  auto gpu_only = builtin::write_pattern();
  gpu_only.cpu = nullptr;
  CHECK(f.device->create_kernel(gpu_only).error() == errc::invalid_kernel);
  auto no_groups = builtin::write_pattern();
  no_groups.local_size_x = 0;
  CHECK(f.device->create_kernel(no_groups).error() == errc::invalid_kernel);
  no_groups.local_size_x = 1025;
  CHECK(f.device->create_kernel(no_groups).error() == errc::invalid_kernel);
}

TEST_CASE("command list: recording outside begin/end and submitting before end are refused", "[gpu]") {
  auto device = test::null_device();
  auto arena = test::require(device->create_arena(64));
  auto list = test::require(device->create_command_list());
  CHECK(list->fill(arena->whole(), 0).error() == errc::command_list_state);
  CHECK(list->end().error() == errc::command_list_state);
  command_list* lists[] = {list.get()};
  CHECK(device->queue().submit(lists, 1).error() == errc::command_list_state);
  test::require(list->begin());
  CHECK(device->queue().submit(lists, 1).error() == errc::command_list_state);
  CHECK(list->host({}).error() == errc::unsupported_command);
  test::require(list->end());
  CHECK(list->fill(arena->whole(), 0).error() == errc::command_list_state);
  CHECK(list->executable());
  CHECK(device->queue().last_submitted() == 0);  // nothing was submitted by the refusals
}

TEST_CASE("command list: a list the GPU may still run cannot be reset or submitted again", "[gpu]") {
  ferrum::gpu::null_device_options options;
  options.faults = {.hang = 1.0, .hang_duration = 100ms};
  auto device = test::null_device(options);
  auto list = test::require(device->create_command_list());
  const std::uint64_t value = test::submit(*device, *list, [](command_list&) {});
  CHECK(list->submitted_value() == value);
  CHECK(list->begin().error() == errc::command_list_in_flight);
  command_list* lists[] = {list.get()};
  CHECK(device->queue().submit(lists, value + 1).error() == errc::command_list_in_flight);
  REQUIRE(test::wait_for(device->queue().timeline(), value) == boost::system::error_code{});
  CHECK(list->begin().has_value());
}

TEST_CASE("queue: signal values must increase and a list given twice in one submission is refused", "[gpu]") {
  auto device = test::null_device();
  auto list = test::require(device->create_command_list());
  test::require(device->queue().submit({}, 5));
  CHECK(device->queue().submit({}, 5).error() == errc::timeline_not_monotonic);
  CHECK(device->queue().submit({}, 4).error() == errc::timeline_not_monotonic);
  test::require(list->begin());
  test::require(list->end());
  command_list* twice[] = {list.get(), list.get()};
  const auto e = device->queue().submit(twice, 6).error();
  CHECK(e == errc::command_list_state);
  CHECK(e.detail == "list 1 of the submission appears twice");
  CHECK(list->executable());  // the refusal undid the first mark
  command_list* once[] = {list.get()};
  test::require(device->queue().submit(once, 6));
  CHECK(device->queue().last_submitted() == 6);
  CHECK(test::wait_for(device->queue().timeline(), 6) == boost::system::error_code{});
  // Once its value is reached, a recorded list can be submitted again as it is.
  CHECK(list->executable());
  test::require(device->queue().submit(once, 7));
  test::require_reached(device->queue().timeline(), 7);  // before the list goes
}

TEST_CASE("queue: submitting to a device that shut down its timeline fails with device_shut_down", "[gpu]") {
  // A device fails its timeline only as it goes, after which its queue is
  // gone too; so the device side is played by a test timeline under a queue
  // whose device part does nothing.
  auto device = test::null_device();
  test::test_timeline timeline;
  stub_queue queue(*device, timeline);
  timeline.fail(make_error_code(errc::device_shut_down));
  CHECK(queue.submit({}, 1).error() == errc::device_shut_down);
  CHECK(queue.last_submitted() == 0);
}

TEST_CASE("queue: submit_next gives concurrent submitters distinct, increasing values", "[gpu]") {
  auto device = test::null_device();
  constexpr int threads = 4;
  constexpr int each = 100;
  std::vector<std::vector<std::uint64_t>> values(threads);
  std::vector<std::thread> submitters;
  for (int t = 0; t < threads; ++t) {
    submitters.emplace_back([&, t] {
      for (int i = 0; i < each; ++i)
        values[static_cast<std::size_t>(t)].push_back(device->queue().submit_next({}).value());
    });
  }
  for (std::thread& s : submitters) s.join();
  std::vector<std::uint64_t> all;
  for (const auto& v : values) {
    CHECK(std::is_sorted(v.begin(), v.end()));
    all.insert(all.end(), v.begin(), v.end());
  }
  std::sort(all.begin(), all.end());
  CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
  CHECK(all.back() == threads * each);
  CHECK(device->queue().last_submitted() == threads * each);
  test::require_reached(device->queue().timeline(), threads * each);
}

TEST_CASE("device: a retired object lives until its value is reached or the device is drained", "[gpu]") {
  ferrum::gpu::null_device_options options;
  options.faults = {.hang = 1.0};  // nothing submitted completes until shutdown
  auto device = test::null_device(options);
  bool early = false;
  bool stuck = false;
  device->retire(std::make_unique<test::observed_arena>(*device, early), 0);
  const std::uint64_t value = device->queue().submit_next({}).value();
  device->retire(std::make_unique<test::observed_arena>(*device, stuck), value);
  CHECK(early);  // value 0 is reached already: freed at once
  CHECK_FALSE(stuck);
  device->retire(std::unique_ptr<ferrum::gpu::command_list>(test::require(device->create_command_list())), value);
  CHECK_FALSE(stuck);
  device.reset();
  CHECK(stuck);
}
