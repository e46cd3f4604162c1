// Replay (scheduler_options::replay): a lane's lists are recorded once and
// submitted again by its later waves, which only write binding bytes.
#include "scheduler_support.hpp"

#include "ferrum/scheduler/async_acquire.hpp"

#include <boost/asio/use_future.hpp>

#include <array>
#include <cstring>
#include <map>
#include <stdexcept>
#include <vector>

using ferrum::errc;
using sched_test::fixture;

namespace {

constexpr std::size_t nodes = 4;
constexpr std::uint32_t lanes = 2;
constexpr std::size_t slot_words = 16;  // the fixture's 64-byte slots

ferrum::scheduler_options replaying() {
  ferrum::scheduler_options o;
  o.replay = true;
  return o;
}

// Each node copies its slot into its own region of `out` (per lane and
// node) — recorded only when not replaying — and writes the wave's id into
// every word of its slot, every wave.
struct copying_encoder {
  const ferrum::gpu::arena* out;
  // Which wave misbehaves: records while replaying (0: none).
  std::uint64_t records_while_replaying = 0;
  // Which wave's encoder throws at node 2 (0: none).
  std::uint64_t throws = 0;
  std::atomic<int> recordings{0};

  void operator()(const ferrum::encode_context& c) {
    const auto word = static_cast<std::uint32_t>(c.wave);
    for (std::size_t i = 0; i < slot_words; ++i) std::memcpy(c.binding->bytes().data() + i * 4, &word, 4);
    if (c.wave == throws && c.node_index == 2) throw std::runtime_error("refused");
    if (!c.replay || c.wave == records_while_replaying) {
      // On a list that was not begun this fails, and value() throws.
      c.commands.copy(c.slot, region(c.lane, c.node_index)).value();
      recordings.fetch_add(1);
    }
  }

  [[nodiscard]] ferrum::gpu::arena_range region(std::uint32_t lane, std::size_t node) const {
    return out->range((lane * nodes + node) * slot_words * 4, slot_words * 4);
  }
};

struct replay_run {
  replay_run() : f(nodes, lanes, {}, replaying()), out(f.device->create_arena(lanes * nodes * slot_words * 4).value()) {
    encode.out = out.get();
  }

  // Runs one wave to its end; checks, when it succeeded, that every node's
  // region of its lane holds this wave's id: the (replayed) copy ran with
  // the bytes the encoder wrote this time.
  sched_test::outcome wave() {
    auto done = sched_test::submit(*f.scheduler, encode);
    sched_test::outcome o = sched_test::get(done);
    if (!o.ec) {
      for (std::size_t node = 0; node < nodes; ++node) {
        const ferrum::gpu::arena_range r = encode.region(o.report.lane, node);
        for (std::size_t i = 0; i < slot_words; ++i)
          CHECK(test::word_at(*out, r.offset / 4 + i) == static_cast<std::uint32_t>(o.report.wave));
      }
    }
    return o;
  }

  fixture f;
  std::unique_ptr<ferrum::gpu::arena> out;
  copying_encoder encode;
};

}  // namespace

TEST_CASE("replay: each lane records once, and its later waves resubmit the lists with fresh binding bytes",
          "[scheduler]") {
  replay_run run;
  std::map<std::uint32_t, int> waves_per_lane;
  for (int i = 0; i < 10; ++i) {
    const auto o = run.wave();
    REQUIRE_FALSE(o.ec);
    ++waves_per_lane[o.report.lane];
  }
  CHECK(waves_per_lane.size() == lanes);
  CHECK(run.encode.recordings.load() == static_cast<int>(lanes * nodes));
}

TEST_CASE(
    "replay: recording while replaying fails the wave with the list's command_list_state, and the lane still replays",
    "[scheduler]") {
  replay_run run;
  for (int i = 0; i < 4; ++i) REQUIRE_FALSE(run.wave().ec);
  run.encode.records_while_replaying = 5;
  const auto bad = run.wave();
  CHECK(bad.ec == errc::encoder_failed);
  CHECK(bad.report.message.find(ferrum::error_code_name(make_error_code(errc::command_list_state))) !=
        std::string::npos);
  CHECK(bad.report.submitted_value == 0);
  const int recorded = run.encode.recordings.load();
  for (int i = 0; i < 4; ++i) REQUIRE_FALSE(run.wave().ec);
  CHECK(run.encode.recordings.load() == recorded);
}

TEST_CASE("replay: after a wave fails while recording, its lane's next wave records afresh", "[scheduler]") {
  replay_run run;
  run.encode.throws = 1;
  const auto failed = run.wave();
  REQUIRE(failed.ec == errc::encoder_failed);
  std::map<std::uint32_t, int> recorded_waves;
  for (int i = 0; i < 6; ++i) {
    const int before = run.encode.recordings.load();
    const auto o = run.wave();
    REQUIRE_FALSE(o.ec);
    if (run.encode.recordings.load() != before) ++recorded_waves[o.report.lane];
  }
  // Both lanes recorded exactly once after the failure: the failed wave's
  // lane too, though its lists had been begun.
  CHECK(recorded_waves == std::map<std::uint32_t, int>{{0, 1}, {1, 1}});
  CHECK(run.encode.recordings.load() == static_cast<int>(2 + lanes * nodes));
}

TEST_CASE("replay: a lane recorded by hand through a lease records afresh for its next wave", "[scheduler]") {
  replay_run run;
  for (int i = 0; i < 4; ++i) REQUIRE_FALSE(run.wave().ec);  // both lanes recorded
  const int recorded = run.encode.recordings.load();
  // Both lanes by hand: each node's list fills the node's slot with a word of
  // the holder's own, which the waves' copies would never produce.
  ferrum::lane_pool& pool = *run.f.scheduler->pools()[0];
  for (std::uint32_t l = 0; l < lanes; ++l) {
    ferrum::lane_lease lease = ferrum::async_acquire(pool, boost::asio::use_future).get();
    for (std::size_t node = 0; node < nodes; ++node) {
      ferrum::gpu::command_list& list = lease->list(node);
      test::require(list.begin());
      test::require(list.fill(lease->slot(node), 0xdeadbeefu));
      test::require(list.end());
    }
    const std::uint64_t value = test::require(lease.submit());
    test::require_reached(run.f.device->queue().timeline(), value);
  }
  // The waves' checks (every node's region holds the wave's id) pass only
  // when their own copies ran, not the holder's fills.
  for (int i = 0; i < 4; ++i) REQUIRE_FALSE(run.wave().ec);
  CHECK(run.encode.recordings.load() == recorded + static_cast<int>(lanes * nodes));
}
