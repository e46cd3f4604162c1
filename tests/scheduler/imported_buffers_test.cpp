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
  ferrum::plan p = test::imported_plan(2);
  p.nodes[0].queue = ferrum::queue_kind::transfer;
  ferrum::gpu::null_device_options two_queues;
  two_queues.queues = 2;
  ferrum::scheduler_options options;
  options.queues = ferrum::queue_placement::plan;
  import_fixture<on_thread_pool> f(p, two_queues, options);
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
       "32 bytes, and bucket 'step@1x1x1' needs 256"},
      {{{"resource/lut", lut}, {"resource/mesh", mesh}, {"resource/out", f.engine.out->range(0, 40)}},
       errc::import_too_small,
       "needs 80"},
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
