#include "scheduler_support.hpp"

#include "ferrum/gpu/builtin_kernels.hpp"

#include <atomic>
#include <mutex>
#include <set>

using namespace std::chrono_literals;
using ferrum::errc;
using sched_test::fixture;

TEST_CASE("wave: every node is encoded once, into its own slot, and the wave completes after its fence", "[scheduler]") {
  fixture f(4, 2);
  std::mutex mutex;
  std::set<std::size_t> nodes;
  std::atomic<int> wrong_slot{0};
  auto encode = [&](const ferrum::encode_context& c) {
    {
      const std::lock_guard lock(mutex);
      CHECK(nodes.insert(c.node_index).second);
    }
    REQUIRE(c.binding != nullptr);
    // The handle reaches exactly the slot the layout gives this node.
    const ferrum::binding_slot& slot = c.binding->slot();
    if (c.binding->bytes().size() != slot.capacity || c.slot.size != slot.capacity || c.slot.offset != slot.offset ||
        c.binding->bytes().data() != c.slot.arena->bytes().data() + slot.offset)
      wrong_slot.fetch_add(1);
    test::require(c.commands.fill(c.slot, static_cast<std::uint32_t>(c.node_index + 1)));
  };
  auto done = sched_test::submit(*f.scheduler, encode);
  const auto [ec, report] = sched_test::get(done);
  CHECK_FALSE(ec);
  CHECK(nodes == std::set<std::size_t>{0, 1, 2, 3});
  CHECK(wrong_slot.load() == 0);
  CHECK(report.wave == 1);
  CHECK(report.nodes == 4);
  REQUIRE(report.bucket != nullptr);
  CHECK(report.bucket->str() == "step@1x1x1");
  CHECK(report.fence_value >= 1);
  CHECK(f.device->queue().timeline().reached(report.fence_value));
  for (std::size_t p = 0; p < ferrum::wave_phase_count; ++p) CHECK(report.ended[p].has_value());
  // The fills ran on the lane's arena before the fence.
  const ferrum::lane& lane = *f.scheduler->pools()[0]->lanes()[report.lane];
  for (const ferrum::binding_slot& slot : f.program->buckets[0].binding->slots())
    CHECK(test::word_at(*lane.arena, slot.offset / 4) == slot.node_index + 1);
  const auto counts = f.scheduler->pools()[0]->counts();
  CHECK(counts.free == 2);
  CHECK(counts.in_flight == 0);
  const auto stats = f.scheduler->stats();
  CHECK(stats.completed == 1);
  CHECK(stats.in_flight == 0);
}
