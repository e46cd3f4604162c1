// Encoders write only what is theirs: a node's commands reach only its own
// slot of its own lane (the lane's arena is guarded, each node's list granted
// its slot), and its host writes go through its binding's bytes (ranges give
// read access only).
#include "held_lanes.hpp"
#include "scheduler_support.hpp"

#include <atomic>
#include <mutex>
#include <vector>

using ferrum::errc;
using sched_test::fixture;

static_assert(std::is_same_v<decltype(std::declval<const ferrum::encode_context&>().slot.arena->bytes()),
                             std::span<const std::byte>>,
              "an encoder's slot range gives read access to the lane's bytes, never write access");

namespace {

// Runs one wave whose encoder tries `attempt` at `node` (and records what the
// other nodes would) and returns the attempt's outcome.
template <class Attempt>
boost::system::error_code attempt_in_wave(fixture& f, std::size_t node, Attempt attempt) {
  std::mutex mutex;
  boost::system::error_code seen;
  std::size_t recorded_after = 0;
  auto encode = [&](const ferrum::encode_context& c) {
    if (c.node_index != node) return;
    const auto r = attempt(c);
    const std::lock_guard lock(mutex);
    seen = r ? boost::system::error_code{} : r.error().code;
    recorded_after = c.commands.size();
  };
  auto done = sched_test::submit(*f.scheduler, encode);
  REQUIRE_FALSE(sched_test::get(done).ec);  // the encoder took the refusal: the wave goes on
  CHECK(recorded_after == 0);               // and nothing was recorded
  return seen;
}

}  // namespace

TEST_CASE("encoder scope: a fill over the whole lane arena is refused with range_not_granted", "[scheduler]") {
  fixture f(4, 2);
  CHECK(attempt_in_wave(f, 0, [](const ferrum::encode_context& c) {
          return c.commands.fill(c.slot.arena->whole(), 7u);
        }) == errc::range_not_granted);
}

TEST_CASE("encoder scope: a copy into another node's slot is refused with range_not_granted", "[scheduler]") {
  fixture f(4, 2);
  std::optional<ferrum::gpu::arena_range> node0;
  auto remember = [&](const ferrum::encode_context& c) {
    if (c.node_index == 0) node0 = c.slot;
  };
  auto first = sched_test::submit(*f.scheduler, remember);
  REQUIRE_FALSE(sched_test::get(first).ec);
  REQUIRE(node0.has_value());
  // Node 1 of a later wave (on either lane) copies its slot over node 0's.
  const auto outcome = attempt_in_wave(f, 1, [&](const ferrum::encode_context& c) {
    const ferrum::gpu::arena_range target{c.slot.arena, node0->offset, c.slot.size};
    return c.commands.copy(c.slot, target);
  });
  CHECK(outcome == errc::range_not_granted);
}

TEST_CASE("encoder scope: a command into another lane's arena is refused, while that lane is in flight or not",
          "[scheduler]") {
  fixture f(2, 2);
  const ferrum::gpu::arena* lane_arenas[2] = {};
  {
    const std::vector<ferrum::held_lane> held = ferrum::test::hold_every_lane(*f.scheduler->pools()[0]);
    for (std::uint32_t index = 0; index < 2; ++index) {
      REQUIRE(held[index]);
      lane_arenas[index] = held[index]->arena_of(ferrum::memory_class::upload);
    }
  }
  const auto outcome = attempt_in_wave(f, 0, [&](const ferrum::encode_context& c) {
    const ferrum::gpu::arena* other = c.slot.arena == lane_arenas[0] ? lane_arenas[1] : lane_arenas[0];
    return c.commands.fill(other->range(c.slot.offset, c.slot.size), 1u);
  });
  CHECK(outcome == errc::range_not_granted);
}

TEST_CASE("encoder scope: a node's own slot and an application's own arenas stay reachable", "[scheduler]") {
  fixture f(2, 1);
  auto own = f.device->create_arena(256).value();
  auto encode = [&](const ferrum::encode_context& c) {
    c.commands.fill(c.slot, 3u).value();
    if (c.node_index == 0) c.commands.copy(c.slot, own->range(0, c.slot.size)).value();
  };
  auto done = sched_test::submit(*f.scheduler, encode);
  REQUIRE_FALSE(sched_test::get(done).ec);
  CHECK(test::word_at(*own, 0) == 3u);
}

TEST_CASE("encoder scope: a native scope on the null device is native_unavailable, and the wave goes on",
          "[scheduler][native]") {
  fixture f(3, 1);
  const auto outcome = attempt_in_wave(f, 1, [](const ferrum::encode_context& c) -> ferrum::result<void> {
    auto native = c.native();
    if (!native) return native.error();
    return {};
  });
  CHECK(outcome == errc::native_unavailable);
}
