// History resources in waves (docs/design.md, "History"): each wave reads
// what the wave before it wrote, whatever lane either ran on, with waves in
// flight at once; the previous copies are zeros at a bucket's first wave
// and after a wave of another bucket, reported; a wave that fails or is
// cancelled before it submits leaves the history as it was. On the null
// device that runs what no barrier orders last to first.
#include "scheduler_support.hpp"

#include "ferrum/binding/plan_json.hpp"
#include "ferrum/gpu/builtin_kernels.hpp"

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <bit>
#include <cstring>
#include <future>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using ferrum::errc;

namespace {

// node/step: acc = acc.previous + 1 (a copy, then affine), taa =
// taa.previous + 1 in every channel (image_affine); node/read copies both
// into resource/out. So a wave's counter is one more than the wave before
// it left, and 1 after a reset.
constexpr const char* history_plan = R"({
  "format": "ferrum.plan.v2",
  "nodes": [
    { "id": "node/step", "binding": "resource/args",
      "resources": ["resource/args", "resource/acc.previous", "resource/acc", "image/taa.previous", "image/taa"],
      "access": {"resource/args": "read", "resource/acc.previous": "read", "resource/acc": "write",
                 "image/taa.previous": "sampled", "image/taa": "storage-write"} },
    { "id": "node/read", "resources": ["resource/acc", "image/taa", "resource/out"], "after": ["node/step"],
      "access": {"resource/acc": "read", "image/taa": "transfer-src", "resource/out": "write"} }
  ],
  "resources": [
    { "id": "resource/args", "pool": "pool/bindings", "kind": "binding", "node": "node/step",
      "demand": {"fixed": 16}, "alignment": 16, "lifetime": "invocation", "usage": "binding", "element": "u8",
      "storage": {"allocator": "linear-arena", "view": "contiguous", "contract": "5e1d9a3c7b2f0e8d4a6c1b9f3e7d2a5c8b0f4e6d1a3c9b7f2e5d8a0c4b6f1e3d"} },
    { "id": "resource/acc", "pool": "pool/history", "kind": "workspace", "lifetime": "history",
      "demand": {"fixed": 16}, "alignment": 16, "usage": "storage", "element": "u32",
      "storage": {"allocator": "linear-arena", "view": "contiguous", "contract": "c2a8e4f06b1d9c3a7e5f2b8d0c6a4e1f9b3d7c5a2e8f0b6d4c1a9e3f7b5d2c8a"} },
    { "id": "resource/acc.previous", "pool": "pool/history", "kind": "workspace", "lifetime": "history",
      "history_of": "resource/acc",
      "demand": {"fixed": 16}, "alignment": 16, "usage": "storage", "element": "u32",
      "storage": {"allocator": "linear-arena", "view": "contiguous", "contract": "c2a8e4f06b1d9c3a7e5f2b8d0c6a4e1f9b3d7c5a2e8f0b6d4c1a9e3f7b5d2c8a"} },
    { "id": "image/taa", "pool": "pool/history_images", "kind": "workspace", "lifetime": "history",
      "image": {"format": "rgba32-float", "extent": "bucket"} },
    { "id": "image/taa.previous", "pool": "pool/history_images", "kind": "workspace", "lifetime": "history",
      "history_of": "image/taa", "image": {"format": "rgba32-float", "extent": "bucket"} },
    { "id": "resource/out", "pool": "pool/output", "kind": "workspace", "lifetime": "invocation",
      "demand": {"fixed": 528}, "alignment": 16, "usage": "storage", "element": "u32",
      "storage": {"allocator": "linear-arena", "view": "contiguous", "contract": "c2a8e4f06b1d9c3a7e5f2b8d0c6a4e1f9b3d7c5a2e8f0b6d4c1a9e3f7b5d2c8a"} }
  ],
  "buckets": [
    { "class": "frame", "capacity": [4, 4, 1],
      "budgets": [ {"pool": "pool/bindings", "min": 0, "max": 4096}, {"pool": "pool/history", "min": 0, "max": 4096},
                   {"pool": "pool/history_images", "min": 0, "max": 1048576},
                   {"pool": "pool/output", "min": 0, "max": 4096} ] },
    { "class": "frame", "capacity": [8, 4, 1],
      "budgets": [ {"pool": "pool/bindings", "min": 0, "max": 4096}, {"pool": "pool/history", "min": 0, "max": 4096},
                   {"pool": "pool/history_images", "min": 0, "max": 1048576},
                   {"pool": "pool/output", "min": 0, "max": 4096} ] }
  ],
  "pools": {"pool/output": {"memory": "readback"}},
  "lanes": 3,
  "budget_bytes": 16777216
})";

constexpr ferrum::bucket_capacity small{4, 4, 1};
constexpr ferrum::bucket_capacity wide{8, 4, 1};

// Where node/read copies to: the readback bytes of the last wave's lane,
// read once that wave is done (the tests run nothing after it meanwhile).
struct readout {
  std::span<const std::byte> bytes;
  std::size_t texels = 0;  // bytes of the image's copy, after the counter's 16
};

struct history_encoder {
  const ferrum::gpu::kernel* affine;
  const ferrum::gpu::kernel* image_affine;
  std::atomic<int>* wrong;
  std::atomic<int>* throw_at;  // a wave id whose encoder throws (0: none)
  std::atomic<bool>* dawdle;   // node/step's encoder takes a millisecond, so that waves overlap
  std::mutex* mutex;
  readout* last;  // what the last wave read out, once it is done

  void operator()(const ferrum::encode_context& c) const {
    if (throw_at->load() == static_cast<int>(c.wave)) throw std::runtime_error("this wave fails");
    const ferrum::node_image* taa = c.image("image/taa");
    if (c.node_index == 0) {
      if (dawdle->load()) std::this_thread::sleep_for(1ms);
      const ferrum::node_resource* previous = c.resource("resource/acc.previous");
      const ferrum::node_resource* acc = c.resource("resource/acc");
      const ferrum::node_image* taa_previous = c.image("image/taa.previous");
      if (previous == nullptr || acc == nullptr || taa == nullptr || taa_previous == nullptr ||
          taa->image == taa_previous->image || previous->range.arena == nullptr) {
        ++*wrong;
        return;
      }
      test::require(c.commands.copy(previous->range, acc->range));
      const std::array<std::uint32_t, 2> plus_one{1, 1};
      test::require(c.commands.dispatch(*affine, acc->range, {}, plus_one));
      const std::array<std::uint32_t, 2> plus_one_f{std::bit_cast<std::uint32_t>(1.0f),
                                                    std::bit_cast<std::uint32_t>(1.0f)};
      test::require(c.commands.dispatch(*image_affine, taa->operand(), taa_previous->operand(), plus_one_f));
      return;
    }
    const ferrum::node_resource* acc = c.resource("resource/acc");
    const ferrum::node_resource* out = c.resource("resource/out");
    const std::size_t texels = copy_bytes(taa->image->spec());
    test::require(c.commands.copy(acc->range, {out->range.arena, out->range.offset, 16}));
    test::require(c.commands.copy(*taa->image, taa->layout, {out->range.arena, out->range.offset + 16, texels}));
    std::lock_guard lock(*mutex);
    last->bytes = out->bytes().value();
    last->texels = texels;
  }
};

ferrum::gpu::null_device_options reordering() {
  ferrum::gpu::null_device_options o;
  o.reorder_unordered = true;
  return o;
}

struct history_run {
  explicit history_run(std::uint32_t threads = 2)
      : program(std::make_shared<const ferrum::compiled_program>(
            test::compile_ok(test::require(ferrum::parse_plan(history_plan))))),
        device(::test::null_device(reordering())),
        affine(test::require(device->create_kernel(ferrum::gpu::builtin::affine()))),
        image_affine(test::require(device->create_kernel(ferrum::gpu::builtin::image_affine()))),
        pool(threads),
        encode{affine.get(), image_affine.get(), &wrong, &throw_at, &dawdle, &mutex, &last} {
    scheduler = test::require(ferrum::scheduler::create(program, *device, pool.get_executor(), {}));
  }
  ~history_run() {
    scheduler.reset();
    pool.join();
  }

  sched_test::outcome run(ferrum::bucket_capacity at) {
    auto done = sched_test::submit(*scheduler, encode, {"frame", at});
    return sched_test::get(done, 20s);
  }
  // The counter the last wave read out: its four words, then each channel
  // of each texel of the image, as the counter it holds (a float).
  std::vector<std::uint32_t> counters() {
    std::lock_guard lock(mutex);
    std::vector<std::uint32_t> out;
    for (std::size_t w = 0; w < 4 + last.texels / 4; ++w) {
      std::uint32_t v = 0;
      std::memcpy(&v, last.bytes.data() + 4 * w, 4);
      out.push_back(w < 4 ? v : static_cast<std::uint32_t>(std::bit_cast<float>(v)));
    }
    return out;
  }

  std::shared_ptr<const ferrum::compiled_program> program;
  std::unique_ptr<ferrum::gpu::null_device> device;
  std::unique_ptr<ferrum::gpu::kernel> affine;
  std::unique_ptr<ferrum::gpu::kernel> image_affine;
  boost::asio::thread_pool pool;
  std::atomic<int> wrong{0};
  std::atomic<int> throw_at{0};
  std::atomic<bool> dawdle{false};
  std::mutex mutex;
  readout last;
  history_encoder encode;
  std::unique_ptr<ferrum::scheduler> scheduler;
};

// Every word of the counter and of the image of a `at` bucket: `v`.
std::vector<std::uint32_t> all(std::uint32_t v, ferrum::bucket_capacity at) {
  return std::vector<std::uint32_t>(4 + at[0] * at[1] * 4, v);
}

}  // namespace

TEST_CASE("history: each wave reads what the wave before it wrote, whatever its lane, with waves in flight at once",
          "[scheduler][history]") {
  history_run r(3);
  r.dawdle = true;
  constexpr std::size_t waves = 24;
  std::vector<std::future<sched_test::outcome>> done;
  for (std::size_t w = 0; w < waves; ++w) done.push_back(sched_test::submit(*r.scheduler, r.encode, {"frame", small}));
  // The waves' reports chain them: each names the wave before it (the
  // first none: its previous copies were reset).
  std::map<std::uint64_t, std::uint64_t> previous_of;
  std::set<std::uint32_t> lanes;
  for (auto& f : done) {
    const sched_test::outcome o = sched_test::get(f, 20s);
    REQUIRE_FALSE(o.ec);
    previous_of[o.report.wave] = o.report.history_wave;
    lanes.insert(o.report.lane);
  }
  CHECK(lanes.size() > 1);
  std::uint64_t at = 0;
  std::size_t chained = 0;
  for (const auto& [wave, previous] : previous_of) {
    CHECK(previous == at);
    at = wave;
    ++chained;
  }
  CHECK(chained == waves);
  // One more wave reads out the counter all of them added to.
  const sched_test::outcome last = r.run(small);
  REQUIRE_FALSE(last.ec);
  CHECK(last.report.history_wave == at);
  CHECK(r.counters() == all(waves + 1, small));
  CHECK(r.wrong == 0);
  CHECK(r.device->image_layout_errors().count == 0);
}

TEST_CASE("history: the first wave of a bucket and the first after a wave of another bucket read zeros, reported",
          "[scheduler][history]") {
  history_run r;
  // small, small, wide, small, small: counters 1 2 1 1 2.
  const std::array<std::pair<ferrum::bucket_capacity, std::uint32_t>, 5> steps{
      {{small, 1}, {small, 2}, {wide, 1}, {small, 1}, {small, 2}}};
  std::uint64_t before = 0;
  for (const auto& [at, counter] : steps) {
    const sched_test::outcome o = r.run(at);
    REQUIRE_FALSE(o.ec);
    CHECK(o.report.history_wave == (counter == 1 ? 0 : before));
    CHECK(r.counters() == all(counter, at));
    before = o.report.wave;
  }
  CHECK(r.wrong == 0);
  CHECK(r.device->image_layout_errors().count == 0);
}

TEST_CASE("history: a wave that fails or is cancelled before it submits leaves the history as the wave before left it",
          "[scheduler][history]") {
  history_run r;
  REQUIRE_FALSE(r.run(small).ec);
  const sched_test::outcome second = r.run(small);
  REQUIRE_FALSE(second.ec);
  // The third wave's encoder throws: nothing of it is submitted.
  r.throw_at = 3;
  const sched_test::outcome failed = r.run(small);
  CHECK(failed.ec == errc::encoder_failed);
  CHECK(failed.report.history_wave == second.report.wave);
  r.throw_at = 0;
  const sched_test::outcome fourth = r.run(small);
  REQUIRE_FALSE(fourth.ec);
  CHECK(fourth.report.history_wave == second.report.wave);
  CHECK(r.counters() == all(3, small));

  // A wave cancelled while it waits for the turn (a wave before it holds
  // it, stalled in its encoder) leaves the queue at once; the history is
  // the holder's.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> holding{false};
  auto stall = [&](const ferrum::encode_context& c) {
    holding = true;
    released.wait();
    r.encode(c);
  };
  auto holder = sched_test::submit(*r.scheduler, stall, {"frame", small});
  REQUIRE(sched_test::eventually([&] { return holding.load(); }));
  boost::asio::cancellation_signal signal;
  auto strand = boost::asio::make_strand(r.pool);
  auto queued = sched_test::submit_cancellable_on(strand, *r.scheduler, r.encode, signal, {"frame", small});
  // Completed while the holder still stalls (emitted until it is queued, on
  // the handler's strand: never beside the completion that clears the slot).
  REQUIRE(sched_test::eventually([&] {
    boost::asio::post(strand, [&signal] { signal.emit(boost::asio::cancellation_type::total); });
    return queued.wait_for(1ms) == std::future_status::ready;
  }));
  std::promise<void> emitted;  // the strand runs in order: every emit is done
  boost::asio::post(strand, [&emitted] { emitted.set_value(); });
  emitted.get_future().wait();
  const sched_test::outcome cancelled = sched_test::get(queued, 20s);
  CHECK(cancelled.ec == boost::asio::error::operation_aborted);
  CHECK(cancelled.report.history_wave == 0);
  release.set_value();
  const sched_test::outcome held = sched_test::get(holder, 20s);
  REQUIRE_FALSE(held.ec);
  CHECK(held.report.history_wave == fourth.report.wave);
  const sched_test::outcome after = r.run(small);
  REQUIRE_FALSE(after.ec);
  CHECK(after.report.history_wave == held.report.wave);
  CHECK(r.counters() == all(5, small));
  CHECK(r.wrong == 0);
}

TEST_CASE("history: a scheduler over several devices refuses a wave of a plan with history", "[scheduler][history]") {
  history_run r;
  auto other = ::test::null_device();
  std::array<ferrum::gpu::device*, 2> devices{r.device.get(), other.get()};
  boost::asio::thread_pool pool(1);
  auto two = test::require(ferrum::scheduler::create(r.program, devices, pool.get_executor(), {}));
  auto done = sched_test::submit(*two, r.encode, {"frame", small});
  const sched_test::outcome o = sched_test::get(done, 20s);
  CHECK(o.ec == errc::invalid_wave_request);
  CHECK(o.report.message.find("several devices") != std::string::npos);
  two.reset();
  pool.join();
}

namespace {

// A plan of `pairs` history pairs of images (or buffers) that one node
// reads and writes.
std::string many_pairs(std::size_t pairs, bool images) {
  std::string resources;
  std::string ids = R"("resource/args")";
  std::string access = R"("resource/args": "read")";
  const std::string buffer =
      R"("demand": {"fixed": 16}, "alignment": 16, "usage": "storage", "element": "u32", "storage": {"allocator": "linear-arena", "view": "contiguous", "contract": "c2a8e4f06b1d9c3a7e5f2b8d0c6a4e1f9b3d7c5a2e8f0b6d4c1a9e3f7b5d2c8a"})";
  const std::string desc = images ? R"("image": {"format": "rgba32-float", "extent": [4, 4]})" : buffer;
  for (std::size_t k = 0; k < pairs; ++k) {
    const std::string id = "resource/h" + std::to_string(k);
    resources += R"(, { "id": ")" + id + R"(", "pool": "pool/history", "kind": "workspace", "lifetime": "history", )" +
                 desc + " }";
    resources += R"(, { "id": ")" + id + R"(.previous", "pool": "pool/history", "kind": "workspace", )" +
                 R"("lifetime": "history", "history_of": ")" + id + R"(", )" + desc + " }";
    ids += R"(, ")" + id + R"(", ")" + id + R"(.previous")";
    access += R"(, ")" + id + R"(": ")" + (images ? "storage-write" : "write") + R"(", ")" + id + R"(.previous": ")" +
              (images ? "sampled" : "read") + R"(")";
  }
  return R"({ "format": "ferrum.plan.v2",
    "nodes": [ { "id": "node/step", "binding": "resource/args", "resources": [)" +
         ids + R"(], "access": {)" + access + R"(} } ],
    "resources": [ { "id": "resource/args", "pool": "pool/bindings", "kind": "binding", "node": "node/step",
      "demand": {"fixed": 16}, "alignment": 16, "lifetime": "invocation", "usage": "binding", "element": "u8",
      "storage": {"allocator": "linear-arena", "view": "contiguous", "contract": "5e1d9a3c7b2f0e8d4a6c1b9f3e7d2a5c8b0f4e6d1a3c9b7f2e5d8a0c4b6f1e3d"} })" +
         resources + R"( ],
    "buckets": [ { "class": "frame", "capacity": [4, 4, 1],
      "budgets": [ {"pool": "pool/bindings", "min": 0, "max": 4096}, {"pool": "pool/history", "min": 0, "max": 1048576} ] } ],
    "lanes": 1, "budget_bytes": 16777216 })";
}

}  // namespace

TEST_CASE("history: a plan with more history images or buffers than a wave holds is refused, counting them",
          "[scheduler][history]") {
  for (const bool images : {true, false}) {
    INFO((images ? "images" : "buffers"));
    auto program = std::make_shared<const ferrum::compiled_program>(
        test::compile_ok(test::require(ferrum::parse_plan(many_pairs(5, images)))));
    auto device = ::test::null_device();
    boost::asio::thread_pool pool(1);
    auto s = test::require(ferrum::scheduler::create(program, *device, pool.get_executor(), {}));
    std::atomic<int> encoded{0};
    auto encode = [&](const ferrum::encode_context&) { ++encoded; };
    auto done = sched_test::submit(*s, encode, {"frame", small});
    const sched_test::outcome o = sched_test::get(done, 20s);
    CHECK(o.ec == errc::invalid_wave_request);
    CHECK(o.report.message.find(images ? "more than 8 imported and history images"
                                       : "10 imported and history buffers") != std::string::npos);
    CHECK(encoded == 0);
    s.reset();
    pool.join();
  }
}
