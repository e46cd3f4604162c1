// Tests of waves over several queues (ferrum.plan.v2's `queue` and `after`):
// a transfer node copies what a compute node of the same wave wrote, a
// compute node reads what a transfer node uploaded — proven by data, with
// the producer held back on the null device so that a missing wait would be
// seen — and the lane comes back only once every queue is done with it.
#include "held_lanes.hpp"
#include "sanitized.hpp"
#include "scheduler_support.hpp"
#include "two_queue_waves.hpp"

#include "ferrum/scheduler/trace.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

using namespace ferrum;
using ferrum::test::id;

namespace {

using namespace two_queue_waves;

// A chrome trace's GPU process (3): its tracks' names, and the nodes with a
// span on each, by thread id.
struct gpu_tracks {
  std::map<int, std::string> names;
  std::map<int, std::set<std::uint32_t>> nodes_on;
};

gpu_tracks gpu_tracks_of(const trace_recorder& recorder, const plan& p) {
  std::ostringstream out;
  write_chrome_trace(out, recorder, p);
  const auto trace = nlohmann::json::parse(out.str());
  gpu_tracks t;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("pid") != 3) continue;
    if (e.at("name") == "thread_name") t.names[e.at("tid")] = e.at("args").at("name");
    if (e.value("cat", "") == "gpu") t.nodes_on[e.at("tid")].insert(e.at("args").at("node").get<std::uint32_t>());
  }
  return t;
}

struct two_queue_fixture {
  explicit two_queue_fixture(scheduler_options options = {}, gpu::null_device_options device_options = {},
                             std::shared_ptr<const compiled_program> given = nullptr)
      : plan(two_queue_plan()),
        program(given ? std::move(given) : std::make_shared<const compiled_program>(ferrum::test::compile_ok(plan))),
        device(::test::null_device(device_options)),
        pool(2) {
    options.encoder_tasks = 2;
    auto made = scheduler::create(program, *device, pool.get_executor(), options);
    if (!made) FAIL(made.error().what());
    s = std::move(*made);
  }
  ~two_queue_fixture() {
    s.reset();
    pool.join();
  }

  // Runs `count` waves one after another; each handler checks that every
  // queue reached what the wave submitted to it.
  void run(two_queue_encoder& encode, int count) {
    for (int i = 0; i < count; ++i) {
      auto done = std::make_shared<std::promise<bool>>();
      auto finished = done->get_future();
      s->async_submit({"step", {1, 1, 1}}, encode, [this, done](boost::system::error_code ec, wave_report r) {
        const gpu::queue& transfer = device->queue(queue_kind::transfer);
        const bool all_done = !ec && device->queue().timeline().reached(r.submitted_value) &&
                              transfer.timeline().reached(transfer.last_submitted());
        done->set_value(all_done);
      });
      REQUIRE(finished.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
      CHECK(finished.get());
    }
  }

  ferrum::plan plan;
  std::shared_ptr<const compiled_program> program;
  std::unique_ptr<gpu::null_device> device;
  boost::asio::thread_pool pool;
  std::unique_ptr<scheduler> s;
};

}  // namespace

TEST_CASE("queues: a transfer node copies what a compute node wrote, and a compute node reads an upload",
          "[scheduler][queues]") {
  two_queue_fixture f;
  REQUIRE(f.device->queue_count() == 2);
  two_queue_encoder encode;
  f.run(encode, 12);
  CHECK(encode.checked_waves == 11);
  CHECK(encode.wrong_words == 0);
  // Per wave: the compute queue took produce, keep and consume (consume
  // waited for the last transfer segment, so no join); the transfer queue
  // took copy and upload.
  CHECK(f.device->queue(queue_kind::compute).last_submitted() == 3 * 12);
  CHECK(f.device->queue(queue_kind::transfer).last_submitted() == 2 * 12);
}

TEST_CASE("queues: a wave ending on the transfer queue joins it on the compute queue before its lane comes back",
          "[scheduler][queues]") {
  // Only produce and copy: the last node is a transfer one.
  plan p = two_queue_plan();
  p.nodes.resize(2);
  p.nodes[0].resources.resize(2);  // produce.args, produced
  p.resources.erase(std::remove_if(p.resources.begin(), p.resources.end(),
                                   [](const resource_descriptor& r) {
                                     const std::string id = r.id.str();
                                     return id != "resource/produce.args" && id != "resource/copy.args" &&
                                            id != "resource/produced" && id != "resource/copied";
                                   }),
                    p.resources.end());
  auto program = std::make_shared<const compiled_program>(ferrum::test::compile_ok(p));
  auto device = ::test::null_device({});
  boost::asio::thread_pool pool(2);
  auto s = scheduler::create(program, *device, pool.get_executor(), {}).value();
  struct hold_copy {
    void operator()(const encode_context& c) const {
      if (c.node_index != 1) return;
      gpu::host_function held{[](void*) noexcept { std::this_thread::sleep_for(std::chrono::milliseconds(20)); },
                              nullptr};
      if (!c.commands.host(held)) throw std::runtime_error("host refused");
    }
  } encoder;
  for (int i = 0; i < 3; ++i) {
    auto done = sched_test::submit(*s, encoder);
    const sched_test::outcome o = sched_test::get(done);
    REQUIRE_FALSE(o.ec);
    // The wave's value is the join's: the transfer queue is done with it.
    CHECK(device->queue(queue_kind::transfer).timeline().reached(device->queue(queue_kind::transfer).last_submitted()));
  }
  // Per wave: produce and the join on compute, copy on transfer.
  CHECK(device->queue().last_submitted() == 6);
  CHECK(device->queue(queue_kind::transfer).last_submitted() == 3);
  s.reset();
  pool.join();
}

TEST_CASE("queues: compute_only placement runs a v2 plan's nodes on the compute queue alone", "[scheduler][queues]") {
  two_queue_fixture f({.queues = queue_placement::compute_only});
  two_queue_encoder encode;
  f.run(encode, 6);
  CHECK(encode.wrong_words == 0);
  CHECK(encode.checked_waves == 5);
  CHECK(f.device->queue().last_submitted() == 6);
  CHECK(f.device->queue(queue_kind::transfer).last_submitted() == 0);
}

TEST_CASE("queues: on a device with one queue both kinds share it and a wave is one submission",
          "[scheduler][queues]") {
  gpu::null_device_options one;
  one.queues = 1;
  two_queue_fixture f({}, one);
  two_queue_encoder encode;
  f.run(encode, 6);
  CHECK(encode.wrong_words == 0);
  CHECK(f.device->queue().last_submitted() == 6);
  CHECK(&f.device->queue(queue_kind::transfer) == &f.device->queue());
}

TEST_CASE("queues: once the device is lost, the next wave over both queues fails with device_lost",
          "[scheduler][queues]") {
  two_queue_fixture f({.fence_timeout = std::chrono::seconds(5)});
  two_queue_encoder encode;
  f.run(encode, 2);
  f.device->lose();
  auto done = sched_test::submit(*f.s, encode);
  const sched_test::outcome o = sched_test::get(done);
  CHECK(o.ec == errc::device_lost);
}

TEST_CASE("queues: a traced wave shows each node's GPU span on its own queue's track", "[scheduler][queues]") {
  trace_recorder recorder(1 << 12);
  {
    two_queue_fixture f({.gpu_timestamps = true, .trace = &recorder});
    two_queue_encoder encode;
    f.run(encode, 3);
    std::ostringstream svg;
    write_timeline_svg(svg, recorder, f.plan);
    CHECK(svg.str().find(">gpu queue</text>") != std::string::npos);
    CHECK(svg.str().find(">gpu transfer queue</text>") != std::string::npos);

    gpu_tracks tracks = gpu_tracks_of(recorder, f.plan);
    CHECK(tracks.names == std::map<int, std::string>{{1, "queue"}, {2, "transfer queue"}});
    // produce, keep, consume on compute; copy and upload on transfer.
    CHECK(tracks.nodes_on[1] == std::set<std::uint32_t>{0, 2, 4});
    CHECK(tracks.nodes_on[2] == std::set<std::uint32_t>{1, 3});
  }
}

TEST_CASE(
    "queues: a wave on one queue opens the lists its one-queue barriers mark, on two queues the every-device ones",
    "[scheduler][queues][barriers]") {
  // Per lane and node: the barriers its list recorded in the last wave on
  // the lane (-1: no command). Host functions record none, so the sets
  // are compared by differences: the opening barrier is all that differs.
  const auto barriers = [](const two_queue_fixture& f) {
    std::map<std::pair<std::size_t, std::size_t>, long> out;
    const std::vector<ferrum::held_lane> held = ferrum::test::hold_every_lane(*f.s->pools()[0]);
    for (std::uint32_t index = 0; index < held.size(); ++index)
      for (std::size_t n = 0; n < held[index]->lists().size(); ++n) {
        const gpu::command_list& list = held[index]->list(n);
        out[{index, n}] = list.size() == 0 ? -1 : static_cast<long>(list.barriers());
      }
    return out;
  };
  const auto check_difference = [](const auto& more, const auto& fewer, const std::vector<bool>& more_opens,
                                   const std::vector<bool>& fewer_opens) {
    std::size_t compared = 0;
    for (const auto& [at, count] : more) {
      if (count < 0 || fewer.at(at) < 0) continue;
      ++compared;
      INFO("lane " << at.first << ", node " << at.second);
      CHECK(count - fewer.at(at) == long{more_opens[at.second]} - long{fewer_opens[at.second]});
    }
    CHECK(compared > 0);
  };
  gpu::null_device_options one;
  one.queues = 1;
  const auto derived = std::make_shared<const compiled_program>(ferrum::test::compile_ok(two_queue_plan()));
  // A one-queue set that differs: every node's list opening with a barrier.
  auto changed = std::make_shared<compiled_program>(*derived);
  changed->buckets[0].lane.one_queue_barrier_before.assign(derived->buckets[0].lane.barrier_before.size(), true);
  changed->buckets[0].lane.one_queue_barrier_scopes.assign(derived->buckets[0].lane.barrier_before.size(),
                                                           barrier_scope::full());
  const lane_recipe& ours = derived->buckets[0].lane;
  const lane_recipe& all = changed->buckets[0].lane;
  std::map<std::pair<std::size_t, std::size_t>, long> one_queue_derived;
  {
    // One queue, running what no barrier orders last to first: the data
    // holds with the derived one-queue set.
    one.reorder_unordered = true;
    two_queue_fixture f({}, one, derived);
    two_queue_encoder encode;
    f.run(encode, 6);
    CHECK(encode.wrong_words == 0);
    CHECK(encode.checked_waves > 0);
    one_queue_derived = barriers(f);
    one.reorder_unordered = false;
  }
  {
    // One queue takes the one-queue set...
    two_queue_fixture f({}, one, changed);
    two_queue_encoder encode;
    f.run(encode, 6);
    check_difference(barriers(f), one_queue_derived, all.one_queue_barrier_before, ours.one_queue_barrier_before);
  }
  // ... two queues the every-device one.
  two_queue_fixture f({}, {}, changed);
  two_queue_encoder encode;
  f.run(encode, 6);
  CHECK(encode.wrong_words == 0);
  check_difference(barriers(f), one_queue_derived, all.barrier_before, ours.one_queue_barrier_before);
}

namespace {

// main (compute) beside a chain on async compute, async_produce ->
// async_copy, which combine (compute) runs after: main waits on the device
// until async_produce has started (so the two overlap only on a device
// that runs async compute on a queue of its own), and async_produce holds
// its queue before it writes, so that a combine not waiting for the chain
// copies what the lane held before.
plan async_compute_plan() {
  ferrum::test::plan_builder b;
  for (const char* n : {"main", "async_produce", "async_copy", "combine"})
    b.binding_node(std::string("node/") + n, std::string("resource/") + n + ".args", 64);
  for (const char* r : {"main_out", "async_a", "async_b", "kept_main", "kept_async"}) {
    resource_descriptor d =
        ferrum::test::workspace_resource(std::string("resource/") + r, "pool/data", resource_demand::fixed(words * 4));
    if (std::string_view(r).starts_with("kept")) d.lifetime = allocation_lifetime::persistent;
    b.resource(d);
  }
  b.use(0, "resource/main_out").use(0, "resource/kept_main").use(0, "resource/kept_async");
  b.use(1, "resource/async_a").use(2, "resource/async_a").use(2, "resource/async_b");
  b.use(3, "resource/main_out").use(3, "resource/async_b").use(3, "resource/kept_main").use(3, "resource/kept_async");
  b.bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 1 << 20}, {"pool/data", 0, 1 << 20}});
  plan p = b.lanes(1).budget(std::uint64_t{1} << 30).build();
  p.format = plan_format::v2;
  p.pools.push_back({id<pool_id>("pool/data"), liveness_mode::conservative, memory_class::readback});
  p.nodes[1].queue = queue_kind::async_compute;
  p.nodes[2].queue = queue_kind::async_compute;
  p.nodes[2].after = {id<node_id>("node/async_produce")};
  p.nodes[3].after = {id<node_id>("node/main"), id<node_id>("node/async_copy")};
  return p;
}

std::uint32_t main_value(std::uint64_t wave) { return static_cast<std::uint32_t>(7000 + wave); }
std::uint32_t async_value(std::uint64_t wave) { return static_cast<std::uint32_t>(9000000 + wave); }

struct async_compute_encoder {
  // Whether main waits (at most a second) for async_produce to start.
  bool wait_for_async = false;
  std::atomic<std::size_t> wrong_words{0};
  std::atomic<std::size_t> checked_waves{0};
  std::atomic<std::size_t> overlapped{0};
  std::atomic<std::size_t> async_started{0};
  std::size_t main_runs = 0;  // the compute queue's worker alone

  void operator()(const encode_context& c) {
    auto range = [&](const char* r) { return c.resource(std::string("resource/") + r)->range; };
    auto ok = [](result<void> r) {
      if (!r) throw std::runtime_error(r.error().what());
    };
    switch (c.node_index) {
      case 0:
        if (c.lane_previous_wave != 0) {
          wrong_words += words_not(c.resource("resource/kept_main")->bytes().value(), main_value(c.lane_previous_wave));
          wrong_words +=
              words_not(c.resource("resource/kept_async")->bytes().value(), async_value(c.lane_previous_wave));
          ++checked_waves;
        }
        if (wait_for_async) ok(c.commands.host(gpu::host_call(main_wait_)));
        ok(c.commands.fill(range("main_out"), main_value(c.wave)));
        break;
      case 1:
        ok(c.commands.host(gpu::host_call(async_hold_)));
        ok(c.commands.fill(range("async_a"), async_value(c.wave)));
        break;
      case 2:
        ok(c.commands.copy(range("async_a"), range("async_b")));
        break;
      case 3:
        ok(c.commands.copy(range("main_out"), range("kept_main")));
        ok(c.commands.copy(range("async_b"), range("kept_async")));
        break;
      default:
        break;
    }
  }

  struct main_wait {
    async_compute_encoder* e;
    void operator()() const noexcept {
      const std::size_t wave = ++e->main_runs;
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      while (e->async_started.load() < wave && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      if (e->async_started.load() >= wave) ++e->overlapped;
    }
  };
  struct async_hold {
    async_compute_encoder* e;
    void operator()() const noexcept {
      ++e->async_started;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  };
  main_wait main_wait_{this};
  async_hold async_hold_{this};
};

void run_async_waves(scheduler& s, async_compute_encoder& encode, int count) {
  for (int i = 0; i < count; ++i) {
    auto done = sched_test::submit(s, encode);
    const sched_test::outcome o = sched_test::get(done);
    REQUIRE_FALSE(o.ec);
  }
}

}  // namespace

TEST_CASE("queues: an async compute chain overlaps main-queue work, its data right, on a queue of its own",
          "[scheduler][queues][async]") {
  const auto program = std::make_shared<const compiled_program>(ferrum::test::compile_ok(async_compute_plan()));
  gpu::null_device_options three;
  three.queues = 3;
  auto device = ::test::null_device(three);
  boost::asio::thread_pool pool(2);
  trace_recorder recorder(1 << 12);
  auto s = scheduler::create(program, *device, pool.get_executor(),
                             {.encoder_tasks = 2, .gpu_timestamps = true, .trace = &recorder})
               .value();
  async_compute_encoder encode;
  encode.wait_for_async = true;
  run_async_waves(*s, encode, 6);
  // The trace's GPU process has a track per queue, the chain on the third.
  gpu_tracks tracks = gpu_tracks_of(recorder, async_compute_plan());
  CHECK(tracks.names == std::map<int, std::string>{{1, "queue"}, {3, "async-compute queue"}});
  CHECK(tracks.nodes_on[1] == std::set<std::uint32_t>{0, 3});
  CHECK(tracks.nodes_on[3] == std::set<std::uint32_t>{1, 2});
  CHECK(encode.wrong_words == 0);
  CHECK(encode.checked_waves == 5);
  // main ran while async_produce held the async queue, in every wave.
  CHECK(encode.overlapped == 6);
  // Per wave: main, combine on compute (combine waits for the chain: no
  // join); async_produce and async_copy one segment on async compute.
  CHECK(device->queue().last_submitted() == 2 * 6);
  CHECK(device->queue(queue_kind::async_compute).last_submitted() == 6);
  CHECK(device->queue(queue_kind::transfer).last_submitted() == 0);
  s.reset();
  pool.join();
}

#if !FERRUM_TEST_TSAN  // two queues race on purpose (sanitized.hpp)
TEST_CASE("queues: without combine's wait for the async chain, it copies what the lane held before",
          "[scheduler][queues][async]") {
  const plan p = async_compute_plan();
  const auto derived = std::make_shared<const compiled_program>(ferrum::test::compile_ok(p));
  // The same program with combine no longer after async_copy: its segment
  // then waits for nothing on the async queue.
  plan unordered = p;
  unordered.nodes[3].after = {id<node_id>("node/main")};
  auto dropped = std::make_shared<compiled_program>(*derived);
  dropped->dependencies = compile_dependency_graph(unordered).value();
  gpu::null_device_options three;
  three.queues = 3;
  auto device = ::test::null_device(three);
  boost::asio::thread_pool pool(2);
  auto s = scheduler::create(dropped, *device, pool.get_executor(), {.encoder_tasks = 2}).value();
  async_compute_encoder encode;
  run_async_waves(*s, encode, 4);
  CHECK(encode.checked_waves == 3);
  CHECK(encode.wrong_words > 0);
  s.reset();
  pool.join();
}
#endif

TEST_CASE("queues: where async compute shares the compute queue, or one queue runs every kind, data stays right",
          "[scheduler][queues][async]") {
  const auto program = std::make_shared<const compiled_program>(ferrum::test::compile_ok(async_compute_plan()));
  for (const std::size_t queues : {std::size_t{1}, std::size_t{2}}) {
    INFO(queues << " queues");
    gpu::null_device_options options;
    options.queues = queues;
    options.reorder_unordered = true;  // what no barrier orders runs last to first
    auto device = ::test::null_device(options);
    boost::asio::thread_pool pool(2);
    auto s = scheduler::create(program, *device, pool.get_executor(), {.encoder_tasks = 2}).value();
    async_compute_encoder encode;
    run_async_waves(*s, encode, 4);
    CHECK(encode.wrong_words == 0);
    CHECK(encode.checked_waves == 3);
    // One segment a wave, on the compute queue.
    CHECK(device->queue().last_submitted() == 4);
    s.reset();
    pool.join();
  }
}
