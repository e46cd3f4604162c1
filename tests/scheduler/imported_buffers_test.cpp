// The engine's buffers in waves (wave_request::imports): each imported
// resource of the plan is the range the wave names, cut to the resource's
// size, granted to its nodes' lists; bad imports are refused before
// anything runs; waves that share a written buffer are ordered on the GPU.
// On an io_context and on a thread_pool.
#include "contract_fixture.hpp"
#include "imported_plan.hpp"
#include "scheduler_support.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using ferrum::errc;
using ferrum::memory_class;
using sched_test::on_io_context;
using sched_test::on_thread_pool;

namespace {

constexpr std::size_t import_out_stride = 128;  // step@4x1x1's out needs 128 bytes
constexpr std::size_t import_waves = 12;

// The engine's buffers, on the scheduler's device: a lookup table every
// wave reads, one mesh every wave writes, and a slice of `out` per wave.
struct engine_buffers {
  explicit engine_buffers(ferrum::gpu::device& d)
      : lut(d.create_arena(64, memory_class::upload).value()),
        mesh(d.create_arena(256, memory_class::upload).value()),
        out(d.create_arena(import_out_stride * import_waves, memory_class::upload).value()) {}

  // What wave `w` (from 0) names.
  [[nodiscard]] std::array<ferrum::imported_buffer, 3> of(std::size_t w) const {
    return {{{"resource/lut", lut->whole()},
             {"resource/mesh", mesh->whole()},
             {"resource/out", out->range(w * import_out_stride, import_out_stride)}}};
  }

  std::unique_ptr<ferrum::gpu::arena> lut, mesh, out;
};

// produce fills the mesh with a value of the wave's; consume copies its
// first 64 bytes into out. Every node checks that its imported resources
// are the buffers the wave named, cut to the bucket's sizes.
struct import_encoder {
  const engine_buffers* engine;
  std::atomic<int>* wrong;
  // The value wave `w` writes.
  static std::uint32_t value_of(std::uint64_t w) { return 0xA0000000u + static_cast<std::uint32_t>(w); }

  void operator()(const ferrum::encode_context& c) const {
    const ferrum::node_resource* mesh = c.resource("resource/mesh");
    const bool mesh_ok = mesh != nullptr && mesh->range.arena == engine->mesh.get() && mesh->range.offset == 0 &&
                         mesh->range.size == 256 && mesh->memory == memory_class::imported &&
                         ferrum::test::code_of(mesh->bytes()) == errc::no_host_bytes;
    if (!mesh_ok) ++*wrong;
    if (c.node_index == 0) {
      const ferrum::node_resource* lut = c.resource("resource/lut");
      if (lut == nullptr || lut->range.arena != engine->lut.get() || lut->range.size != 64) ++*wrong;
      test::require(c.commands.fill(mesh->range, value_of(c.wave)));
      return;
    }
    const ferrum::node_resource* out = c.resource("resource/out");
    const std::size_t needed = c.bucket.str() == "step@1x1x1" ? 80 : 128;
    if (out == nullptr || out->range.arena != engine->out.get() || out->range.offset % import_out_stride != 0 ||
        out->range.size != needed)
      ++*wrong;
    test::require(c.commands.copy({mesh->range.arena, 0, 64}, {out->range.arena, out->range.offset, 64}));
  }
};

// A scheduler over the null device, on a `Context`, running imported_plan.
template <class Context>
struct import_fixture {
  explicit import_fixture(ferrum::plan p = test::imported_plan(), ferrum::gpu::null_device_options device_options = {},
                          ferrum::scheduler_options options = {})
      : program(std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(p))),
        device(::test::null_device(device_options)),
        engine(*device) {
    scheduler = ferrum::scheduler::create(program, *device, context.executor(), options).value();
  }
  ~import_fixture() {
    scheduler.reset();
    context.stop();
  }

  std::shared_ptr<const ferrum::compiled_program> program;
  std::unique_ptr<ferrum::gpu::null_device> device;
  engine_buffers engine;
  Context context;
  std::unique_ptr<ferrum::scheduler> scheduler;
};

// imported_plan over two lanes with node/produce on the transfer queue, on
// two null queues.
struct two_queue_imports : import_fixture<on_thread_pool> {
  two_queue_imports() : import_fixture(transfer_plan(), two_queues(), plan_queues()) {}
  static ferrum::plan transfer_plan() {
    ferrum::plan p = test::imported_plan(2);
    p.nodes[0].queue = ferrum::queue_kind::transfer;
    return p;
  }
  static ferrum::gpu::null_device_options two_queues() {
    ferrum::gpu::null_device_options o;
    o.queues = 2;
    return o;
  }
  static ferrum::scheduler_options plan_queues() {
    ferrum::scheduler_options o;
    o.queues = ferrum::queue_placement::plan;
    return o;
  }
};

std::uint32_t imported_word_at(const ferrum::gpu::arena& a, std::size_t offset) {
  std::uint32_t v = 0;
  std::memcpy(&v, a.bytes().data() + offset, 4);
  return v;
}

void import_nothing(const ferrum::encode_context&) {}

}  // namespace

TEMPLATE_TEST_CASE("imports: each wave's nodes get the buffers it names, and write them", "[scheduler][imported]",
                   on_io_context, on_thread_pool) {
  import_fixture<TestType> f;
  std::atomic<int> wrong{0};
  const import_encoder encode{&f.engine, &wrong};
  std::vector<std::array<ferrum::imported_buffer, 3>> named;
  for (std::size_t w = 0; w < import_waves; ++w) named.push_back(f.engine.of(w));
  std::vector<std::future<sched_test::outcome>> done;
  for (std::size_t w = 0; w < import_waves; ++w) {
    ferrum::wave_request request{"step", {w % 2 == 0 ? 1u : 4u, 1, 1}};
    request.imports = named[w];
    done.push_back(sched_test::submit(*f.scheduler, encode, request));
  }
  std::vector<std::uint64_t> ids;
  for (auto& d : done) {
    const sched_test::outcome o = sched_test::get(d);
    REQUIRE_FALSE(o.ec);
    ids.push_back(o.report.wave);
  }
  CHECK(wrong == 0);
  // Each wave's slice of out holds what that wave wrote into the mesh: no
  // wave's fill of the one mesh came between another's fill and its copy.
  for (std::size_t w = 0; w < import_waves; ++w)
    for (std::size_t word = 0; word < 16; ++word)
      CHECK(imported_word_at(*f.engine.out, w * import_out_stride + 4 * word) == import_encoder::value_of(ids[w]));
}

TEST_CASE("imports: a wave that writes a buffer an earlier wave uses waits for it on the GPU",
          "[scheduler][imported]") {
  // produce on the transfer queue fills the one mesh; consume, on compute,
  // holds its queue 20 ms before copying it out. Two lanes: the second
  // wave's fill, on the other queue, would land in that pause unless the
  // wave waited for the first one.
  two_queue_imports f;
  auto pause = [] { std::this_thread::sleep_for(20ms); };
  std::atomic<int> wrong{0};
  const import_encoder fill_and_copy{&f.engine, &wrong};
  auto encode = [&](const ferrum::encode_context& c) {
    if (c.node_index == 1) test::require(c.commands.host(ferrum::gpu::host_call(pause)));
    fill_and_copy(c);
  };
  std::vector<std::array<ferrum::imported_buffer, 3>> named;
  for (std::size_t w = 0; w < 4; ++w) named.push_back(f.engine.of(w));
  std::vector<std::future<sched_test::outcome>> done;
  for (std::size_t w = 0; w < 4; ++w) {
    ferrum::wave_request request{"step", {1, 1, 1}};
    request.imports = named[w];
    done.push_back(sched_test::submit(*f.scheduler, encode, request));
  }
  for (std::size_t w = 0; w < 4; ++w) {
    const sched_test::outcome o = sched_test::get(done[w]);
    REQUIRE_FALSE(o.ec);
    CHECK(imported_word_at(*f.engine.out, w * import_out_stride) == import_encoder::value_of(o.report.wave));
  }
  CHECK(wrong == 0);
}

TEMPLATE_TEST_CASE("imports: a bad import fails the wave before anything runs, with its code", "[scheduler][imported]",
                   on_io_context, on_thread_pool) {
  import_fixture<TestType> f;
  auto other = ::test::null_device();
  const auto foreign = other->create_arena(256, memory_class::upload).value();
  const auto small = f.device->create_arena(32, memory_class::upload).value();
  const ferrum::gpu::arena_range lut = f.engine.lut->whole();
  const ferrum::gpu::arena_range mesh = f.engine.mesh->whole();
  const ferrum::gpu::arena_range out = f.engine.out->range(0, 128);
  struct refusal {
    std::vector<ferrum::imported_buffer> imports;
    errc code;
    const char* says;
  };
  const std::vector<refusal> cases{
      {{{"resource/lut", lut}, {"resource/mesh", mesh}}, errc::import_missing, "resource 'resource/out'"},
      {{}, errc::import_missing, "no buffer for resource 'resource/lut'"},
      {{{"resource/lut", lut}, {"resource/mesh", small->whole()}, {"resource/out", out}},
       errc::import_too_small,
       "32 bytes given, and bucket 'step@1x1x1' wants 256"},
      {{{"resource/lut", lut}, {"resource/mesh", mesh}, {"resource/out", f.engine.out->range(0, 40)}},
       errc::import_too_small,
       "wants 80"},
      {{{"resource/lut", lut}, {"resource/mesh", foreign->whole()}, {"resource/out", out}},
       errc::foreign_object,
       "imports[1] (resource 'resource/mesh')"},
      {{{"resource/lut", lut}, {"resource/mesh", f.engine.mesh->range(128, 256)}, {"resource/out", out}},
       errc::range_out_of_bounds,
       "bytes [128, +256) of an arena of 256"},
      {{{"resource/lut", lut}, {"resource/mesh", mesh}, {"resource/out", out}, {"resource/scratch", out}},
       errc::invalid_wave_request,
       "'resource/scratch', which is no imported buffer"},
      {{{"resource/lut", lut}, {"resource/mesh", mesh}, {"resource/out", out}, {"resource/lut", lut}},
       errc::invalid_wave_request,
       "imports[3] names 'resource/lut', which wave_request::imports[0] names too"},
      {{{"resource/lut", lut}, {"resource/mesh", {}}, {"resource/out", out}}, errc::invalid_wave_request, "no arena"},
      {{{"resource/lut", lut}, {"resource/mesh", mesh}, {"resource/out", f.engine.mesh->range(128, 128)}},
       errc::invalid_wave_request,
       "overlap in one arena"},
      {std::vector<ferrum::imported_buffer>(ferrum::max_wave_imports + 1, {"resource/lut", lut}),
       errc::invalid_wave_request, "a wave holds at most 8"},
  };
  const std::uint64_t submitted = f.device->queue().last_submitted();
  for (const refusal& r : cases) {
    ferrum::wave_request request{"step", {1, 1, 1}};
    request.imports = r.imports;
    std::atomic<int> encoded{0};
    auto encode = [&](const ferrum::encode_context&) { ++encoded; };
    auto done = sched_test::submit(*f.scheduler, encode, request);
    const sched_test::outcome o = sched_test::get(done);
    CHECK(o.ec == r.code);
    CHECK_THAT(o.report.message, Catch::Contains(r.says));
    CHECK(encoded == 0);
    CHECK(o.report.submitted_value == 0);
  }
  // Nothing reached the device, and the scheduler still runs waves.
  CHECK(f.device->queue().last_submitted() == submitted);
  ferrum::wave_request good{"step", {1, 1, 1}};
  const auto named = f.engine.of(0);
  good.imports = named;
  auto encode = import_nothing;
  auto done = sched_test::submit(*f.scheduler, encode, good);
  CHECK_FALSE(sched_test::get(done).ec);
}

TEST_CASE("imports: a refused wave still passes the engine's semaphores on", "[scheduler][imported]") {
  import_fixture<on_thread_pool> f;
  auto semaphore = f.device->create_semaphore(ferrum::gpu::semaphore_kind::timeline).value();
  const ferrum::gpu::semaphore_op signal[] = {{semaphore.get(), 1}};
  ferrum::wave_request request{"step", {1, 1, 1}};
  request.signal = signal;
  auto encode = import_nothing;
  auto done = sched_test::submit(*f.scheduler, encode, request);  // names no buffer
  CHECK(sched_test::get(done).ec == errc::import_missing);
  CHECK(sched_test::eventually([&] { return semaphore->value() && *semaphore->value() >= 1; }));
}

TEST_CASE("imports: a scheduler over several devices refuses them", "[scheduler][imported]") {
  const auto program =
      std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(test::imported_plan()));
  auto first = ::test::null_device();
  auto second = ::test::null_device();
  const engine_buffers engine(*first);
  boost::asio::thread_pool pool(2);
  std::vector<ferrum::gpu::device*> devices{first.get(), second.get()};
  auto s = ferrum::scheduler::create(program, devices, pool.get_executor()).value();
  ferrum::wave_request request{"step", {1, 1, 1}};
  const auto named = engine.of(0);
  request.imports = named;
  auto encode = import_nothing;
  auto done = sched_test::submit(*s, encode, request);
  const sched_test::outcome o = sched_test::get(done);
  CHECK(o.ec == errc::invalid_wave_request);
  CHECK_THAT(o.report.message, Catch::Contains("several devices"));
  s.reset();
  pool.join();
}

TEST_CASE("imports: no arena of class imported is made, only imported", "[gpu][imported]") {
  auto device = ::test::null_device();
  auto made = device->create_arena(64, memory_class::imported);
  CHECK(ferrum::test::code_of(made) == errc::invalid_memory_class);
  CHECK_THAT(made.error().detail, Catch::Contains("import_vulkan_buffer"));
}

TEST_CASE("imports: a replaying lane records afresh when its wave names other buffers", "[scheduler][imported]") {
  ferrum::scheduler_options options;
  options.replay = true;
  import_fixture<on_thread_pool> f(test::imported_plan(2), {}, options);
  std::mutex mutex;
  std::map<std::uint64_t, bool> replayed;  // by wave
  std::atomic<int> wrong{0};
  const import_encoder fill_and_copy{&f.engine, &wrong};
  auto encode = [&](const ferrum::encode_context& c) {
    if (c.node_index == 0) {
      const std::lock_guard lock(mutex);
      replayed[c.wave] = c.replay;
    }
    if (!c.replay) fill_and_copy(c);
  };
  // Per lane, the slice of out its last wave named.
  std::map<std::uint32_t, std::size_t> last_slice;
  std::vector<std::array<ferrum::imported_buffer, 3>> named{f.engine.of(0), f.engine.of(1)};
  int recorded_for_new_buffers = 0;
  for (std::size_t slice : {0, 0, 0, 0, 1, 1, 1, 1, 0, 0}) {
    ferrum::wave_request request{"step", {1, 1, 1}};
    request.imports = named[slice];
    auto done = sched_test::submit(*f.scheduler, encode, request);
    const sched_test::outcome o = sched_test::get(done);
    REQUIRE_FALSE(o.ec);
    const auto seen = last_slice.find(o.report.lane);
    const bool same = seen != last_slice.end() && seen->second == slice;
    const std::lock_guard lock(mutex);
    INFO("wave " << o.report.wave << ", lane " << o.report.lane << ", slice " << slice);
    CHECK(replayed.at(o.report.wave) == same);
    if (seen != last_slice.end() && !same) ++recorded_for_new_buffers;
    last_slice[o.report.lane] = slice;
  }
  CHECK(recorded_for_new_buffers >= 2);  // each change of buffers, on some lane
  CHECK(wrong == 0);
}

namespace {

// An engine's buffer made with only `usage` (gpu::buffer_usage bits), as
// gpu::import_vulkan_buffer records it, on the null device: for the checks
// a wave makes of it (it never reaches a command here).
struct usage_arena final : ferrum::gpu::arena {
  usage_arena(const ferrum::gpu::device& d, std::span<std::byte> bytes, std::uint32_t usage)
      : ferrum::gpu::arena(d, bytes, 0) {
    set_usage(usage);
  }
};

}  // namespace

TEST_CASE("imports: a buffer must have the usage its plan's accesses need, named when it lacks it",
          "[scheduler][imported]") {
  namespace usage = ferrum::gpu::buffer_usage;
  // consume reads the mesh as uniforms; produce on the transfer queue
  // fills it (transfer-dst) and reads the lut (transfer-src).
  ferrum::plan p = test::imported_plan();
  p.nodes[0].queue = ferrum::queue_kind::transfer;
  p.nodes[1].access[1] = ferrum::resource_access::uniform;
  import_fixture<on_thread_pool> f(p);
  std::vector<std::byte> lut_bytes(64), mesh_bytes(256);
  const usage_arena lut_storage(*f.device, lut_bytes, usage::storage);
  const usage_arena lut_copied(*f.device, lut_bytes, usage::transfer_src);
  const usage_arena mesh_storage(*f.device, mesh_bytes, usage::storage | usage::transfer_dst);
  const usage_arena mesh_uniform(*f.device, mesh_bytes, usage::uniform | usage::transfer_dst);
  const ferrum::gpu::arena_range out = f.engine.out->range(0, 128);
  struct refusal {
    std::vector<ferrum::imported_buffer> imports;
    const char* says;
  };
  const std::vector<refusal> cases{
      {{{"resource/lut", lut_storage.whole()}, {"resource/mesh", mesh_uniform.whole()}, {"resource/out", out}},
       "imports[0] (resource 'resource/lut'): the buffer lacks transfer-src usage, which the plan's access 'read' on "
       "the transfer queue needs (it has storage)"},
      {{{"resource/lut", lut_copied.whole()}, {"resource/mesh", mesh_storage.whole()}, {"resource/out", out}},
       "imports[1] (resource 'resource/mesh'): the buffer lacks uniform usage, which the plan's access 'uniform' "
       "needs (it has storage, transfer-dst)"},
  };
  for (const refusal& r : cases) {
    ferrum::wave_request request{"step", {1, 1, 1}};
    request.imports = r.imports;
    auto encode = import_nothing;
    auto done = sched_test::submit(*f.scheduler, encode, request);
    const sched_test::outcome o = sched_test::get(done);
    CHECK(o.ec == errc::buffer_usage_missing);
    CHECK_THAT(o.report.message, Catch::Contains(r.says));
  }
  // The usage the accesses need, and no more: accepted.
  const std::array<ferrum::imported_buffer, 3> fits{
      {{"resource/lut", lut_copied.whole()}, {"resource/mesh", mesh_uniform.whole()}, {"resource/out", out}}};
  ferrum::wave_request request{"step", {1, 1, 1}};
  request.imports = fits;
  auto encode = import_nothing;
  auto done = sched_test::submit(*f.scheduler, encode, request);
  CHECK_FALSE(sched_test::get(done).ec);
}

TEST_CASE("imports: a buffer not shared with a queue a node that uses it runs on is refused, naming both",
          "[scheduler][imported]") {
  const std::uint32_t compute = ferrum::queue_bit(ferrum::queue_kind::compute);
  const auto first_wave = [](auto& f) {
    ferrum::wave_request request{"step", {1, 1, 1}};
    const auto named = f.engine.of(0);
    request.imports = named;
    auto encode = import_nothing;
    auto done = sched_test::submit(*f.scheduler, encode, request);
    return sched_test::get(done);
  };
  // node/produce, on a transfer queue of its own, fills the mesh: a buffer
  // made EXCLUSIVE on the main family cannot be used there.
  two_queue_imports f;
  ferrum::gpu::null_device::share_with(*f.engine.mesh, compute);
  const sched_test::outcome refused = first_wave(f);
  CHECK(refused.ec == errc::import_not_shared);
  CHECK_THAT(refused.report.message,
             Catch::Contains("wave_request::imports[1] (resource 'resource/mesh'): node 0 runs on the device's "
                             "'transfer' queue, of a family the engine did not share it with (only the compute "
                             "queues)"));
  ferrum::gpu::null_device::share_with(*f.engine.mesh, 0);
  CHECK_THAT(first_wave(f).report.message, Catch::Contains("(none of the device's queues)"));
  // Shared with both queues: the wave runs.
  ferrum::gpu::null_device::share_with(*f.engine.mesh, compute | ferrum::queue_bit(ferrum::queue_kind::transfer));
  CHECK_FALSE(first_wave(f).ec);
  // On one queue, which runs the transfer node too, compute alone is enough.
  ferrum::gpu::null_device_options one_queue;
  one_queue.queues = 1;
  import_fixture<on_thread_pool> one(two_queue_imports::transfer_plan(), one_queue);
  ferrum::gpu::null_device::share_with(*one.engine.mesh, compute);
  CHECK_FALSE(first_wave(one).ec);
}

TEST_CASE("imports: a command refuses a buffer without the usage it needs", "[gpu][imported]") {
  namespace usage = ferrum::gpu::buffer_usage;
  auto device = ::test::null_device();
  std::vector<std::byte> bytes(64);
  const usage_arena vertices(*device, bytes, usage::vertex);
  const usage_arena copied(*device, bytes, usage::transfer_src | usage::transfer_dst);
  auto list = device->create_command_list().value();
  test::require(list->begin());
  const auto fill = list->fill(vertices.whole(), 0u);
  CHECK(ferrum::test::code_of(fill) == errc::buffer_usage_missing);
  CHECK_THAT(fill.error().detail, Catch::Contains("made without transfer-dst usage (it has vertex)"));
  const auto copy = list->copy(vertices.range(0, 32), copied.range(32, 32));
  CHECK(ferrum::test::code_of(copy) == errc::buffer_usage_missing);
  CHECK_THAT(copy.error().detail, Catch::Contains("copy source range [0, +32)"));
  CHECK(list->fill(copied.whole(), 0u).has_value());
}

TEST_CASE("imports: a buffer must have its resource's bytes, not rounded up to its alignment",
          "[scheduler][imported]") {
  // resource/lut: 96 bytes, aligned to 64 (128 in a lane).
  ferrum::plan p = test::imported_plan();
  for (ferrum::resource_descriptor& r : p.resources)
    if (r.id.view() == "resource/lut") {
      r.demand = ferrum::resource_demand::fixed(96);
      r.alignment = 64;
    }
  import_fixture<on_thread_pool> f(p);
  const auto lut = f.device->create_arena(96, memory_class::upload).value();
  const ferrum::gpu::arena_range mesh = f.engine.mesh->whole();
  const ferrum::gpu::arena_range out = f.engine.out->range(0, 128);
  std::size_t lut_size = 0;
  auto encode = [&](const ferrum::encode_context& c) {
    if (c.node_index == 0) lut_size = c.resource("resource/lut")->range.size;
  };
  const std::array<ferrum::imported_buffer, 3> exact{
      {{"resource/lut", lut->whole()}, {"resource/mesh", mesh}, {"resource/out", out}}};
  ferrum::wave_request request{"step", {1, 1, 1}};
  request.imports = exact;
  auto done = sched_test::submit(*f.scheduler, encode, request);
  CHECK_FALSE(sched_test::get(done).ec);
  CHECK(lut_size == 96);
  const std::array<ferrum::imported_buffer, 3> short_one{
      {{"resource/lut", lut->range(0, 92)}, {"resource/mesh", mesh}, {"resource/out", out}}};
  request.imports = short_one;
  auto refused = sched_test::submit(*f.scheduler, encode, request);
  const sched_test::outcome o = sched_test::get(refused);
  CHECK(o.ec == errc::import_too_small);
  CHECK_THAT(o.report.message, Catch::Contains("92 bytes given, and bucket 'step@1x1x1' wants 96"));
}

namespace {

// Two waves over two queues, the second submitted once the first's compute
// node runs: the first's compute node waits (up to `patience`) for the
// second's transfer node, which runs at once unless the second wave waits
// for the first on the GPU. Both read the one lut; wave w writes the mesh
// at mesh_at[w] (256 bytes of 512) and out at 128 * w. Whether the first
// gave up waiting: the waves were ordered.
bool second_wave_waited(std::array<std::size_t, 2> mesh_at, std::chrono::milliseconds patience) {
  two_queue_imports f;
  const auto mesh = f.device->create_arena(512, memory_class::upload).value();
  std::atomic<bool> started{false}, second_ran{false}, gave_up{false};
  auto hold = [&] {
    started = true;
    const auto until = std::chrono::steady_clock::now() + patience;
    while (!second_ran && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
    gave_up = !second_ran;
  };
  auto mark = [&] { second_ran = true; };
  std::atomic<std::uint64_t> first_wave{0};
  auto encode = [&](const ferrum::encode_context& c) {
    if (first_wave == 0) first_wave = c.wave;
    if (c.node_index == 1 && c.wave == first_wave) test::require(c.commands.host(ferrum::gpu::host_call(hold)));
    if (c.node_index == 0 && c.wave != first_wave) test::require(c.commands.host(ferrum::gpu::host_call(mark)));
  };
  std::array<std::array<ferrum::imported_buffer, 3>, 2> named;
  for (std::size_t w = 0; w < 2; ++w)
    named[w] = {{{"resource/lut", f.engine.lut->whole()},
                 {"resource/mesh", mesh->range(mesh_at[w], 256)},
                 {"resource/out", f.engine.out->range(128 * w, 128)}}};
  ferrum::wave_request request{"step", {1, 1, 1}};
  request.imports = named[0];
  auto one = sched_test::submit(*f.scheduler, encode, request);
  REQUIRE(sched_test::eventually([&] { return started.load(); }));
  request.imports = named[1];
  auto two = sched_test::submit(*f.scheduler, encode, request);
  CHECK_FALSE(sched_test::get(one).ec);
  CHECK_FALSE(sched_test::get(two).ec);
  CHECK(second_ran);
  return gave_up;
}

}  // namespace

TEST_CASE("imports: waves over disjoint ranges of one buffer, both reading another, do not wait for each other",
          "[scheduler][imported]") {
  CHECK_FALSE(second_wave_waited({0, 256}, 5s));
}

TEST_CASE("imports: waves whose written ranges of one buffer overlap still wait for each other",
          "[scheduler][imported]") {
  CHECK(second_wave_waited({0, 128}, 150ms));
  CHECK(second_wave_waited({0, 0}, 150ms));
}
