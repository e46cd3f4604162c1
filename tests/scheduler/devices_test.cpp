// Tests of a scheduler over several devices: a lane pool per (device,
// bucket), one queue of waves per bucket served by whichever device's lane
// frees first, each wave's commands on its lane's device, and a lost device
// taking only its own lanes out of service.
#include "held_lanes.hpp"
#include "scheduler_support.hpp"

#include "ferrum/scheduler/async_acquire.hpp"
#include "ferrum/scheduler/trace.hpp"

#include <nlohmann/json.hpp>

#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

using namespace ferrum;
using namespace std::chrono_literals;
using sched_test::eventually;

namespace {

// Null devices `options[i]` under one scheduler of `nodes` binding nodes
// and `lanes` lanes per bucket, waves on a pool of two threads.
struct devices_fixture {
  explicit devices_fixture(std::vector<gpu::null_device_options> options, std::uint32_t lanes = 2,
                           std::size_t nodes = 3, scheduler_options scheduler_settings = {})
      : plan(sched_test::make_plan(nodes, lanes)),
        program(std::make_shared<const compiled_program>(ferrum::test::compile_ok(plan))),
        pool(2) {
    std::vector<gpu::device*> raw;
    for (const gpu::null_device_options& o : options) {
      devices.push_back(::test::null_device(o));
      raw.push_back(devices.back().get());
    }
    auto made = scheduler::create(program, raw, pool.get_executor(), scheduler_settings);
    if (!made) FAIL(made.error().what());
    s = std::move(*made);
  }
  // Whether every device's compute queue has taken `n` submissions.
  [[nodiscard]] bool each_submitted(std::uint64_t n) const {
    return std::all_of(devices.begin(), devices.end(), [n](const auto& d) { return d->queue().last_submitted() == n; });
  }
  ~devices_fixture() {
    s.reset();
    pool.join();
  }

  ferrum::plan plan;
  std::shared_ptr<const compiled_program> program;
  std::vector<std::unique_ptr<gpu::null_device>> devices;
  boost::asio::thread_pool pool;
  std::unique_ptr<scheduler> s;
};

gpu::null_device_options with_latency(std::chrono::microseconds latency) {
  gpu::null_device_options o;
  o.latency = latency;
  return o;
}

// Records, per wave, the device each node's list belongs to, and writes the
// wave's id into each node's slot (read back on the device the wave reports).
struct device_recorder {
  mutable std::mutex mutex;
  mutable std::map<std::uint64_t, std::set<const gpu::device*>> seen;
  void operator()(const encode_context& c) const {
    {
      const std::lock_guard lock(mutex);
      seen[c.wave].insert(&c.commands.device());
    }
    c.commands.fill(c.slot, static_cast<std::uint32_t>(c.wave)).value();
  }
};

}  // namespace

TEST_CASE("devices: waves spread over every device, each running wholly on the device it reports",
          "[scheduler][devices]") {
  // Long enough that all four lanes are taken before the first comes back.
  devices_fixture f({with_latency(50ms), with_latency(50ms)});
  REQUIRE(f.s->device_count() == 2);
  REQUIRE(f.s->pools().size() == 2);  // one bucket on each device
  CHECK(&f.s->pools(1)[0]->device() == f.devices[1].get());
  device_recorder encode;
  std::vector<std::future<sched_test::outcome>> waves;
  for (int i = 0; i < 12; ++i) waves.push_back(sched_test::submit(*f.s, encode));
  std::array<int, 2> per_device{};
  // Per device and lane, the last wave that ran there: the one with the
  // highest submitted value on that device (a lane's next wave submits
  // after its previous one's fence; wave ids need not be in that order,
  // as waves start on the executor in any order).
  std::array<std::array<std::uint64_t, 2>, 2> last_wave{};
  std::array<std::array<std::uint64_t, 2>, 2> last_value{};
  for (auto& w : waves) {
    const sched_test::outcome o = sched_test::get(w);
    REQUIRE_FALSE(o.ec);
    REQUIRE(o.report.device < 2);
    REQUIRE(o.report.lane < 2);
    ++per_device[o.report.device];
    if (std::uint64_t& value = last_value[o.report.device][o.report.lane]; o.report.submitted_value > value) {
      value = o.report.submitted_value;
      last_wave[o.report.device][o.report.lane] = o.report.wave;
    }
    const std::lock_guard lock(encode.mutex);
    CHECK(encode.seen[o.report.wave] == std::set<const gpu::device*>{f.devices[o.report.device].get()});
  }
  // Two lanes on each device: four waves in flight at most, and both devices
  // took a share.
  CHECK(per_device[0] > 0);
  CHECK(per_device[1] > 0);
  CHECK(f.s->stats().max_in_flight == 4);
  CHECK(f.devices[0]->queue().last_submitted() + f.devices[1]->queue().last_submitted() == 12);
  // The slots hold what the last wave on each lane wrote, on that lane's
  // own device.
  for (std::size_t d = 0; d < 2; ++d) {
    const std::vector<ferrum::held_lane> held = ferrum::test::hold_every_lane(*f.s->pools(d)[0]);
    for (std::uint32_t index = 0; index < 2; ++index) {
      REQUIRE(held[index]);
      const ferrum::lane_contents& l = *held[index];
      std::uint32_t word = 0;
      std::memcpy(&word, l.arena_of(ferrum::memory_class::upload)->bytes().data() + l.slot(0).offset, sizeof word);
      CHECK(word == last_wave[d][index]);
    }
  }
}

TEST_CASE("devices: a queued wave goes to the device whose lane of its bucket frees first", "[scheduler][devices]") {
  // One lane per device: device 0 holds its lane for 600 ms, device 1 for 1 ms.
  devices_fixture f({with_latency(600ms), with_latency(1ms)}, 1);
  device_recorder encode;
  // The first wave takes device 0's lane (both free since creation: the
  // first device's first), the second device 1's.
  auto slow = sched_test::submit(*f.s, encode);
  REQUIRE(eventually([&] { return f.devices[0]->queue().last_submitted() == 1; }));
  auto fast = sched_test::submit(*f.s, encode);
  std::vector<std::future<sched_test::outcome>> queued;
  for (int i = 0; i < 3; ++i) queued.push_back(sched_test::submit(*f.s, encode));
  CHECK(sched_test::get(fast).report.device == 1);
  // Every queued wave got device 1's lane as it came back, long before
  // device 0's.
  for (auto& w : queued) {
    const sched_test::outcome o = sched_test::get(w);
    CHECK_FALSE(o.ec);
    CHECK(o.report.device == 1);
  }
  CHECK(slow.wait_for(0s) == std::future_status::timeout);
  CHECK(sched_test::get(slow).report.device == 0);
}

TEST_CASE("devices: a lost device fails only its own waves and lanes, and later waves run on the others",
          "[scheduler][devices]") {
  // Device 0 holds its waves for a second: they are in flight when it is
  // lost, however slow the machine. The first two waves take device 0's lanes
  // (free since creation, ties go to the first device), the next two device 1's.
  devices_fixture f({with_latency(1000ms), with_latency(30ms)});
  device_recorder encode;
  std::vector<std::future<sched_test::outcome>> in_flight;
  for (int i = 0; i < 4; ++i) in_flight.push_back(sched_test::submit(*f.s, encode));
  REQUIRE(eventually([&] { return f.each_submitted(2); }));
  f.devices[0]->lose();
  for (auto& w : in_flight) {
    const sched_test::outcome o = sched_test::get(w);
    CHECK(o.ec == (o.report.device == 0 ? make_error_code(errc::device_lost) : boost::system::error_code{}));
  }
  REQUIRE(eventually([&] { return f.s->pools(0)[0]->counts().quarantined == 2; }));
  std::vector<std::future<sched_test::outcome>> later;
  for (int i = 0; i < 6; ++i) later.push_back(sched_test::submit(*f.s, encode));
  for (auto& w : later) {
    const sched_test::outcome o = sched_test::get(w);
    CHECK_FALSE(o.ec);
    CHECK(o.report.device == 1);
  }
  CHECK(f.s->pools(1)[0]->counts().quarantined == 0);
  CHECK(f.s->pools(1)[0]->counts().free == 2);
}

TEST_CASE("devices: a device lost while idle is passed over, its free lanes never handed out again",
          "[scheduler][devices]") {
  devices_fixture f({with_latency(0us), with_latency(0us)});
  f.devices[0]->lose();
  device_recorder encode;
  for (int i = 0; i < 6; ++i) {
    auto w = sched_test::submit(*f.s, encode);
    const sched_test::outcome o = sched_test::get(w);
    CHECK_FALSE(o.ec);
    CHECK(o.report.device == 1);
  }
  // Device 0's two lanes were free since creation, so the longest free, yet
  // no wave took them: their memory is still known to be untouched, so they
  // stay free, out of the group's use.
  const lane_counts lost = f.s->pools(0)[0]->counts();
  CHECK(lost.free == 2);
  CHECK(lost.quarantined == 0);
  CHECK(f.devices[0]->queue().last_submitted() == 0);
  CHECK(f.devices[1]->queue().last_submitted() == 6);
}

TEST_CASE("devices: once every device is lost, queued and later waves fail with device_lost", "[scheduler][devices]") {
  // Lanes held for a second: two waves in flight and two queued at the loss.
  devices_fixture f({with_latency(1000ms), with_latency(1000ms)}, 1);
  device_recorder encode;
  std::vector<std::future<sched_test::outcome>> waves;
  for (int i = 0; i < 4; ++i) waves.push_back(sched_test::submit(*f.s, encode));
  REQUIRE(eventually([&] { return f.s->pools(0)[0]->counts().waiting == 2; }));
  f.devices[0]->lose();
  f.devices[1]->lose();
  for (auto& w : waves) CHECK(sched_test::get(w).ec == errc::device_lost);
  auto later = sched_test::submit(*f.s, encode);
  CHECK(sched_test::get(later).ec == errc::device_lost);
}

TEST_CASE("devices: a wave queued for any device's lane can be cancelled, and is never handed one",
          "[scheduler][devices]") {
  // Each device holds its one lane for a second: the queued wave cannot get
  // one before it is cancelled, however slow the machine.
  devices_fixture f({with_latency(1000ms), with_latency(1000ms)}, 1);
  device_recorder encode;
  auto a = sched_test::submit(*f.s, encode);
  auto b = sched_test::submit(*f.s, encode);
  REQUIRE(eventually([&] { return f.each_submitted(1); }));
  boost::asio::cancellation_signal signal;
  auto queued = sched_test::submit_cancellable(*f.s, encode, signal);
  // Each pool counts the bucket's queued waves.
  REQUIRE(
      eventually([&] { return f.s->pools(0)[0]->counts().waiting == 1 && f.s->pools(1)[0]->counts().waiting == 1; }));
  signal.emit(boost::asio::cancellation_type::total);
  CHECK(sched_test::get(queued).ec == boost::asio::error::operation_aborted);
  CHECK(f.s->pools(0)[0]->counts().waiting == 0);
  CHECK_FALSE(sched_test::get(a).ec);
  CHECK_FALSE(sched_test::get(b).ec);
  CHECK(f.s->stats().cancelled == 1);
  CHECK(f.devices[0]->queue().last_submitted() + f.devices[1]->queue().last_submitted() == 2);
}

TEST_CASE("devices: a lease awaited on one device's pool goes before the waves queued for the bucket",
          "[scheduler][devices]") {
  // Lanes held for a second: the lease is queued before either comes back.
  devices_fixture f({with_latency(1000ms), with_latency(1000ms)}, 1);
  device_recorder encode;
  auto a = sched_test::submit(*f.s, encode);
  auto b = sched_test::submit(*f.s, encode);
  REQUIRE(eventually([&] { return f.each_submitted(1); }));
  auto queued = sched_test::submit(*f.s, encode);
  REQUIRE(eventually([&] { return f.s->pools(1)[0]->counts().waiting == 1; }));
  lane_pool& pool = *f.s->pools(1)[0];
  auto lease = async_acquire(pool, boost::asio::use_future);
  REQUIRE(eventually([&] { return pool.counts().waiting == 2; }));
  // Device 0's lane frees (about) as early as device 1's: the queued wave
  // may take either, but device 1's goes to the lease first.
  lane_lease held = lease.get();
  CHECK(held.pool() == &pool);
  const sched_test::outcome o = sched_test::get(queued);
  CHECK_FALSE(o.ec);
  CHECK(o.report.device == 0);
  held.reset();
  CHECK_FALSE(sched_test::get(a).ec);
  CHECK_FALSE(sched_test::get(b).ec);
}

TEST_CASE("devices: scheduler::create refuses no device, a null one and one given twice with invalid_scheduler_option",
          "[scheduler][devices]") {
  const ferrum::plan p = sched_test::make_plan(2, 1);
  const auto program = std::make_shared<const compiled_program>(ferrum::test::compile_ok(p));
  auto device = ::test::null_device();
  boost::asio::thread_pool pool(1);
  const auto refused = [&](std::vector<gpu::device*> devices, std::string_view detail) {
    auto made = scheduler::create(program, devices, pool.get_executor());
    REQUIRE_FALSE(made.has_value());
    CHECK(made.error() == errc::invalid_scheduler_option);
    CHECK_THAT(made.error().what(), Catch::Contains(std::string(detail)));
  };
  refused({}, "no device");
  refused({device.get(), nullptr}, "device 1 is null");
  refused({device.get(), device.get()}, "device 1 is given twice");
  pool.join();
}

TEST_CASE("devices: a trace has a track per device's lane and per device's queue", "[scheduler][devices]") {
  trace_recorder recorder(1 << 12);
  devices_fixture f({with_latency(2ms), with_latency(2ms)}, 2, 3, {.gpu_timestamps = true, .trace = &recorder});
  device_recorder encode;
  std::vector<std::future<sched_test::outcome>> waves;
  for (int i = 0; i < 12; ++i) waves.push_back(sched_test::submit(*f.s, encode));
  for (auto& w : waves) REQUIRE_FALSE(sched_test::get(w).ec);
  std::ostringstream out;
  write_chrome_trace(out, recorder, f.plan);
  const auto trace = nlohmann::json::parse(out.str());
  std::set<std::string> names;
  std::set<std::pair<int, int>> tracks_with_spans;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name") names.insert(e.at("args").at("name").get<std::string>());
    if (e.at("ph") == "X") tracks_with_spans.insert({e.at("pid").get<int>(), e.at("tid").get<int>()});
  }
  // Lanes rotate, the longest free first: every lane of both devices ran.
  for (const char* lane : {"device 0 step@1x1x1 lane 0", "device 0 step@1x1x1 lane 1", "device 1 step@1x1x1 lane 0",
                           "device 1 step@1x1x1 lane 1"})
    CHECK(names.count(lane) == 1);
  CHECK(names.count("device 0 queue") == 1);
  CHECK(names.count("device 1 queue") == 1);
  // The GPU process (3): device 0's compute queue keeps thread 1, device 1's
  // is thread 4 (three kinds per device: compute, transfer, async compute).
  CHECK(tracks_with_spans.count({3, 1}) == 1);
  CHECK(tracks_with_spans.count({3, 4}) == 1);
}
