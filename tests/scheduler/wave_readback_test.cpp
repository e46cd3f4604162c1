// Reading a wave's output held: wave_request::readback keeps the wave's lane
// in a wave_readback (read-only) until it goes; nothing reaches a lane
// unheld (ferrum/scheduler/wave_readback.hpp).
#include "scheduler_support.hpp"

#include "ferrum/scheduler/wave_readback.hpp"

#include <boost/asio/cancellation_signal.hpp>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <utility>

using namespace std::chrono_literals;
using ferrum::errc;
using sched_test::fixture;

namespace {

// What holds a lane hands it out writable; a const lane (a readback's, an
// encoder's view of its wave's lane) read-only; a lane pool none.
template <class Pool>
concept hands_out_contents = requires(const Pool& p) {
  p.contents(0u);
};
static_assert(!hands_out_contents<ferrum::lane_pool>);
static_assert(std::is_same_v<decltype(*std::declval<const ferrum::wave_readback&>()), const ferrum::lane_contents&>);
static_assert(
    std::is_same_v<decltype(std::declval<const ferrum::lane_contents&>().arena_of(ferrum::memory_class::upload)),
                   const ferrum::gpu::arena*>);
static_assert(
    std::is_same_v<decltype(std::declval<const ferrum::lane_contents&>().list(0)), const ferrum::gpu::command_list&>);
static_assert(std::is_same_v<decltype(std::declval<const ferrum::lane_contents&>().lists()),
                             std::span<const ferrum::gpu::command_list* const>>);
static_assert(std::is_same_v<decltype(std::declval<ferrum::lane_contents&>().arena_of(ferrum::memory_class::upload)),
                             ferrum::gpu::arena*>);
static_assert(std::is_same_v<decltype(std::declval<const ferrum::wave_readback&>().bytes("")),
                             ferrum::result<std::span<const std::byte>>>);

// Each node fills its slot with its number + 1 and notes the lane's previous wave.
struct fill_encoder {
  std::atomic<std::uint64_t> previous{~std::uint64_t{0}};
  void operator()(const ferrum::encode_context& c) {
    previous = c.lane_previous_wave;
    test::require(c.commands.fill(c.slot, static_cast<std::uint32_t>(c.node_index + 1)));
  }
};

std::uint32_t first_word(std::span<const std::byte> bytes) {
  std::uint32_t word = 0;
  std::memcpy(&word, bytes.data(), sizeof word);
  return word;
}

ferrum::wave_request kept_in(ferrum::wave_readback& readback) {
  return {.bucket_class = "step", .readback = &readback};
}

// One wave asked to keep its lane in `readback`, run to its end.
template <class Encoder>
sched_test::outcome run_kept(ferrum::scheduler& s, Encoder& encode, ferrum::wave_readback& readback) {
  auto done = sched_test::submit(s, encode, kept_in(readback));
  return sched_test::get(done);
}

}  // namespace

TEST_CASE("wave readback: a wave keeps its lane for reading until the readback goes, the next wave waiting for it",
          "[scheduler][readback]") {
  fixture f(2, 1);
  fill_encoder encode;
  ferrum::wave_readback readback;
  CHECK_FALSE(readback);
  CHECK(readback.wave() == 0);
  auto first = sched_test::submit(*f.scheduler, encode, kept_in(readback));
  const auto [ec, report] = sched_test::get(first);
  REQUIRE_FALSE(ec);
  REQUIRE(readback);
  CHECK(readback.wave() == report.wave);
  CHECK(readback.lane() == report.lane);
  CHECK(readback.pool() == f.scheduler->pools()[0].get());
  // What the wave wrote, read-only, on the lane it ran on.
  CHECK(first_word(readback.bytes("resource/r0").value()) == 1);
  CHECK(first_word(readback.bytes("resource/r1").value()) == 2);
  CHECK(readback->made());
  // Held: no longer in flight, not free either.
  CHECK(f.scheduler->pools()[0]->counts().free == 0);
  CHECK(f.scheduler->stats().in_flight == 0);

  // The one lane is the readback's: the next wave waits for it.
  auto second = sched_test::submit(*f.scheduler, encode);
  CHECK(second.wait_for(100ms) == std::future_status::timeout);
  CHECK(first_word(readback.bytes("resource/r0").value()) == 1);
  readback.reset();
  CHECK_FALSE(readback);
  CHECK(readback.wave() == 0);
  CHECK_FALSE(sched_test::get(second).ec);
  // The lane kept its record: the next wave sees the kept one as the lane's last.
  CHECK(encode.previous.load() == report.wave);
  CHECK(f.scheduler->pools()[0]->counts().free == 1);
}

TEST_CASE("wave readback: one assigned over or moved gives the lane it held back", "[scheduler][readback]") {
  fixture f(1, 2);
  fill_encoder encode;
  ferrum::wave_readback readback;
  CHECK_FALSE(run_kept(*f.scheduler, encode, readback).ec);
  REQUIRE(readback.wave() == 1);
  CHECK(f.scheduler->pools()[0]->counts().free == 1);
  // The second wave runs on the other lane; its readback replaces the first.
  CHECK_FALSE(run_kept(*f.scheduler, encode, readback).ec);
  CHECK(readback.wave() == 2);
  CHECK(f.scheduler->pools()[0]->counts().free == 1);
  ferrum::wave_readback moved = std::move(readback);
  CHECK_FALSE(readback);  // NOLINT(bugprone-use-after-move): a moved-from readback is empty
  CHECK(moved.wave() == 2);
  moved = ferrum::wave_readback();
  CHECK(f.scheduler->pools()[0]->counts().free == 2);
}

TEST_CASE("wave readback: reading an empty one, an id no node lists or device memory is refused",
          "[scheduler][readback]") {
  const ferrum::wave_readback empty;
  CHECK(ferrum::test::code_of(empty.bytes("resource/r0")) == errc::lane_not_held);

  const ferrum::plan p =
      ferrum::test::plan_builder()
          .binding_node("node/a", "resource/a.args", 16)
          .resource(ferrum::test::workspace_resource("resource/scratch", "pool/w", ferrum::resource_demand::fixed(64)))
          .use(0, "resource/scratch")
          .bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 1024}, {"pool/w", 0, 1024}})
          .build();
  const auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(p));
  const auto device = ::test::null_device();
  boost::asio::thread_pool threads(2);
  auto s = test::require(ferrum::scheduler::create(program, *device, threads.get_executor()));
  auto encode = [](const ferrum::encode_context&) {};
  ferrum::wave_readback readback;
  CHECK_FALSE(run_kept(*s, encode, readback).ec);
  REQUIRE(readback);
  CHECK(readback.bytes("resource/a.args").has_value());
  CHECK(ferrum::test::code_of(readback.bytes("resource/none")) == errc::unknown_resource);
  CHECK(ferrum::test::code_of(readback.bytes("resource/scratch")) == errc::no_host_bytes);
  readback.reset();
  s.reset();
  threads.join();
}

TEST_CASE("wave readback: a wave that fails leaves the readback empty and its lane goes back",
          "[scheduler][readback]") {
  fixture f(2, 1);
  auto encode = [](const ferrum::encode_context& c) {
    if (c.node_index == 1) throw std::runtime_error("no");
  };
  ferrum::wave_readback readback;
  CHECK(run_kept(*f.scheduler, encode, readback).ec == errc::encoder_failed);
  CHECK_FALSE(readback);
  CHECK(f.scheduler->pools()[0]->counts().free == 1);
}

TEST_CASE("wave readback: a wave cancelled after its submission leaves it empty, its lane back after the fence",
          "[scheduler][readback]") {
  fixture f(2, 1, sched_test::hanging(100ms));
  fill_encoder encode;
  ferrum::wave_readback readback;
  boost::asio::cancellation_signal signal;
  auto done = sched_test::submit_cancellable(*f.scheduler, encode, signal, kept_in(readback));
  REQUIRE(sched_test::eventually([&] { return f.device->queue().last_submitted() >= 1; }));
  signal.emit(boost::asio::cancellation_type::terminal);
  CHECK(sched_test::get(done).ec == boost::asio::error::operation_aborted);
  REQUIRE(sched_test::eventually([&] { return f.scheduler->pools()[0]->counts().free == 1; }));
  CHECK_FALSE(readback);
}

TEST_CASE("wave readback: an encoder sees its wave's lane read-only, as the wave holds it", "[scheduler][readback]") {
  fixture f(3, 1);
  std::atomic<int> wrong{0};
  auto encode = [&](const ferrum::encode_context& c) {
    const ferrum::lane_contents* lane = c.contents;
    if (lane == nullptr || &lane->list(c.node_index) != &c.commands ||
        lane->slot(c.node_index).offset != c.slot.offset ||
        lane->resources(c.node_index).data() != c.resources.data() || lane->state() != c.state)
      ++wrong;
  };
  ferrum::wave_readback readback;
  CHECK_FALSE(run_kept(*f.scheduler, encode, readback).ec);
  CHECK(wrong.load() == 0);
  REQUIRE(readback);
  CHECK(readback->lists().size() == 3);
}
