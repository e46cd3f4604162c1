// The engine's images in waves (wave_request::images): each imported image
// of the plan is the image the wave names, its first transition from the
// layout the wave names, and the wave leaves it in its last use's (present:
// present-src); the null device checks every layout; bad images are refused
// before anything runs. On an io_context and on a thread_pool.
#include "contract_fixture.hpp"
#include "present_waves.hpp"
#include "scheduler_support.hpp"

#include "ferrum/binding/plan_json.hpp"

#include <boost/asio/thread_pool.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using ferrum::errc;
using ferrum::image_format;
using ferrum::image_layout;
using sched_test::on_io_context;
using sched_test::on_thread_pool;
namespace usage = ferrum::gpu::image_usage;

namespace {

constexpr std::uint32_t copies = usage::transfer_src | usage::transfer_dst;

// The engine's images on the null device: one it filled and reads through
// the plan, and a swapchain's two.
struct engine_images {
  explicit engine_images(ferrum::gpu::device& d)
      : engine(ferrum::test::engine_image(d, spec(copies))),
        present{ferrum::test::engine_image(d, spec(copies)), ferrum::test::engine_image(d, spec(copies))} {
    ferrum::test::fill_engine_image(d, engine->at(0));
  }
  static ferrum::gpu::image_spec spec(std::uint32_t u, image_format f = image_format::rgba8_unorm,
                                      std::uint32_t width = ferrum::test::present_width, std::uint32_t mips = 1,
                                      std::uint32_t layers = 1) {
    return {f, width, ferrum::test::present_height, mips, layers, u};
  }
  std::unique_ptr<ferrum::gpu::image_memory> engine;
  std::array<std::unique_ptr<ferrum::gpu::image_memory>, 2> present;
};

template <class Context>
struct present_fixture {
  explicit present_fixture(ferrum::scheduler_options options = {})
      : program(
            std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(ferrum::test::present_plan()))),
        device(::test::null_device()),
        images(*device) {
    options.fence_timeout = std::chrono::seconds(60);
    scheduler = ferrum::scheduler::create(program, *device, context.executor(), options).value();
  }
  ~present_fixture() {
    scheduler.reset();
    context.stop();
  }
  std::shared_ptr<const ferrum::compiled_program> program;
  std::unique_ptr<ferrum::gpu::null_device> device;
  engine_images images;
  Context context;
  std::unique_ptr<ferrum::scheduler> scheduler;
};

std::string first_layout_error(const ferrum::gpu::null_device& d) {
  const ferrum::gpu::image_layout_report r = d.image_layout_errors();
  return r.first.empty() ? std::string() : r.first.front();
}

}  // namespace

TEMPLATE_TEST_CASE("imported images: each wave's nodes get the images it names, and leave them as its last uses do",
                   "[scheduler][image][imported]", on_io_context, on_thread_pool) {
  for (const bool replay : {false, true}) {
    INFO("replay " << replay);
    present_fixture<TestType> f({.replay = replay});
    std::atomic<int> wrong{0};
    const ferrum::test::present_encoder draw{&wrong, &f.images.engine->at(0)};
    std::span<std::byte> out;
    auto encode = [&](const ferrum::encode_context& c) {
      draw(c);
      if (c.node_index == 1) out = c.resource("resource/out")->bytes().value();
    };
    // The engine's image is in transfer-dst, as its fill left it; after a
    // wave, in transfer-src (node/check's); each present image starts
    // undefined. Waves take the two lanes in turn, and the present image
    // changes after four: with replay each lane replays its recording once,
    // then records afresh for the other image (a replay would leave it
    // untouched, and the device meet it undefined below).
    image_layout engine_layout = image_layout::transfer_dst;
    for (std::size_t w = 0; w < 8; ++w) {
      const std::array<ferrum::imported_image, 2> named{
          {{"image/present", &f.images.present[w / 4 % 2]->at(0), image_layout::undefined},
           {"image/engine", &f.images.engine->at(0), engine_layout}}};
      ferrum::wave_request request{"frame", {ferrum::test::present_width, ferrum::test::present_height, 1}};
      request.images = named;
      auto done = sched_test::submit(*f.scheduler, encode, request);
      const sched_test::outcome o = sched_test::get(done, std::chrono::seconds(60));
      REQUIRE_FALSE(o.ec);
      CHECK(ferrum::test::present_out_differs(out, o.report.wave) == 0);
      // The report says where the wave left each image: the next wave names
      // the engine's image in it (the device checks it), the present image
      // is ready to present.
      // In the compiled program's order (its images by id): image/engine first.
      REQUIRE(o.report.images().size() == 2);
      CHECK(o.report.images()[0].resource == "image/engine");
      CHECK(o.report.images()[0].image == named[1].image);
      CHECK(o.report.images()[1].image == named[0].image);
      CHECK(o.report.final_layout("image/present") == image_layout::present_src);
      CHECK(o.report.final_layout("image/engine") == image_layout::transfer_src);
      CHECK_FALSE(o.report.final_layout("resource/in").has_value());
      engine_layout = o.report.final_layout("image/engine").value_or(image_layout::undefined);
    }
    CHECK(wrong == 0);
    // Each present image is in present-src: the device meets it there.
    auto list = ferrum::test::require(f.device->create_command_list());
    const std::uint64_t value = ::test::submit(*f.device, *list, [&](ferrum::gpu::command_list& l) {
      for (const auto& p : f.images.present)
        ferrum::test::require(l.transition(p->at(0), image_layout::present_src, image_layout::transfer_src));
    });
    ::test::require_reached(f.device->queue().timeline(), value);
    INFO(first_layout_error(*f.device));
    CHECK(f.device->image_layout_errors().count == 0);
  }
}

TEST_CASE("imported images: a wave that names the wrong layout for an engine's image is caught by the device",
          "[scheduler][image][imported]") {
  present_fixture<on_thread_pool> f;
  std::atomic<int> wrong{0};
  const ferrum::test::present_encoder draw{&wrong, &f.images.engine->at(0)};
  // The engine's image is in transfer-dst; the wave says general.
  const std::array<ferrum::imported_image, 2> named{
      {{"image/present", &f.images.present[0]->at(0), image_layout::undefined},
       {"image/engine", &f.images.engine->at(0), image_layout::general}}};
  ferrum::wave_request request{"frame", {ferrum::test::present_width, ferrum::test::present_height, 1}};
  request.images = named;
  auto done = sched_test::submit(*f.scheduler, draw, request);
  REQUIRE_FALSE(sched_test::get(done, std::chrono::seconds(60)).ec);
  CHECK(f.device->image_layout_errors().count > 0);
  CHECK_THAT(first_layout_error(*f.device), Catch::Contains("general"));
}

TEMPLATE_TEST_CASE("imported images: a bad image fails the wave before anything runs, with its code",
                   "[scheduler][image][imported]", on_io_context, on_thread_pool) {
  present_fixture<TestType> f;
  ferrum::gpu::device& d = *f.device;
  auto other = ::test::null_device();
  const auto foreign = ferrum::test::engine_image(*other, engine_images::spec(copies));
  const auto r32 = ferrum::test::engine_image(d, engine_images::spec(copies, image_format::r32_float));
  const auto narrow = ferrum::test::engine_image(d, engine_images::spec(copies, image_format::rgba8_unorm, 8));
  const auto read_only = ferrum::test::engine_image(d, engine_images::spec(usage::transfer_src));
  const auto two_mips = ferrum::test::engine_image(d, engine_images::spec(copies, image_format::rgba8_unorm, 16, 2, 1));
  const auto two_layers =
      ferrum::test::engine_image(d, engine_images::spec(copies, image_format::rgba8_unorm, 16, 1, 2));
  const ferrum::gpu::image* engine = &f.images.engine->at(0);
  const ferrum::gpu::image* present = &f.images.present[0]->at(0);
  struct refusal {
    std::vector<ferrum::imported_image> images;
    errc code;
    const char* says;
  };
  const auto two = [&](const ferrum::gpu::image* p, image_layout l = image_layout::undefined) {
    return std::vector<ferrum::imported_image>{{"image/present", p, l}, {"image/engine", engine}};
  };
  const std::vector<refusal> cases{
      {{}, errc::import_missing, "no image for resource 'image/engine' in wave_request::images"},
      {{{"image/engine", engine}}, errc::import_missing, "no image for resource 'image/present'"},
      {two(&r32->at(0)), errc::invalid_image,
       "images[0] (resource 'image/present'): format 'r32-float', and bucket 'frame@16x8x1' takes 'rgba8-unorm'"},
      {two(&narrow->at(0)), errc::invalid_image, "extent 8x8, and bucket 'frame@16x8x1' takes 16x8"},
      {two(&two_mips->at(0)), errc::invalid_image, "mips 2, and bucket 'frame@16x8x1' takes 1"},
      {two(&two_layers->at(0)), errc::invalid_image, "layers 2, and bucket 'frame@16x8x1' takes 1"},
      {two(&read_only->at(0)), errc::invalid_image,
       "usage transfer-src lacks transfer-dst, which the plan's accesses of it need (transfer-src,transfer-dst)"},
      {two(present, image_layout::shader_read_only), errc::invalid_image, "layout 'shader-read-only'"},
      {two(&foreign->at(0)), errc::foreign_object, "images[0] (resource 'image/present'): an image of device"},
      {two(nullptr), errc::invalid_wave_request, "has no image"},
      {{{"image/present", present}, {"image/engine", engine}, {"resource/in", present}},
       errc::invalid_wave_request,
       "'resource/in', which is no imported image of the plan"},
      {{{"image/present", present}, {"image/engine", engine}, {"image/present", present}},
       errc::invalid_wave_request,
       "images[2] names 'image/present', which wave_request::images[0] names too"},
      {two(engine), errc::invalid_wave_request, "the image named for resource 'image/engine' too"},
      {std::vector<ferrum::imported_image>(ferrum::max_wave_images + 1, {"image/present", present}),
       errc::invalid_wave_request, "a wave holds at most 8"},
  };
  const std::uint64_t submitted = d.queue().last_submitted();
  for (const refusal& r : cases) {
    INFO(r.says);
    ferrum::wave_request request{"frame", {ferrum::test::present_width, ferrum::test::present_height, 1}};
    request.images = r.images;
    std::atomic<int> encoded{0};
    auto encode = [&](const ferrum::encode_context&) { ++encoded; };
    auto done = sched_test::submit(*f.scheduler, encode, request);
    const sched_test::outcome o = sched_test::get(done);
    CHECK(o.ec == r.code);
    CHECK_THAT(o.report.message, Catch::Contains(r.says));
    CHECK(encoded == 0);
    CHECK(o.report.submitted_value == 0);
    CHECK(o.report.images().empty());  // nothing named was taken
  }
  CHECK(d.queue().last_submitted() == submitted);
}

TEST_CASE("imported images: a wave that submits nothing leaves each image in the layout it named",
          "[scheduler][image][imported]") {
  present_fixture<on_thread_pool> f;
  const std::array<ferrum::imported_image, 2> named{
      {{"image/present", &f.images.present[0]->at(0), image_layout::undefined},
       {"image/engine", &f.images.engine->at(0), image_layout::transfer_dst}}};
  ferrum::wave_request request{"frame", {ferrum::test::present_width, ferrum::test::present_height, 1}};
  request.images = named;
  const auto encode = [](const ferrum::encode_context&) { throw std::runtime_error("the engine's encoder fails"); };
  auto done = sched_test::submit(*f.scheduler, encode, request);
  const sched_test::outcome o = sched_test::get(done, std::chrono::seconds(60));
  CHECK(o.ec == errc::encoder_failed);
  CHECK(o.report.submitted_value == 0);
  REQUIRE(o.report.images().size() == 2);
  CHECK(o.report.final_layout("image/present") == image_layout::undefined);
  CHECK(o.report.final_layout("image/engine") == image_layout::transfer_dst);
}

namespace {

// An engine's texture (image/tex, imported) that node/read, on the
// transfer queue, reads as transfer-src; node/hold, on compute, after it.
constexpr const char* texture_plan = R"({
  "format": "ferrum.plan.v2",
  "nodes": [
    { "id": "node/read", "queue": "transfer", "resources": ["resource/read.args", "image/tex", "resource/a"],
      "binding": "resource/read.args",
      "access": {"resource/read.args": "read", "image/tex": "transfer-src", "resource/a": "write"} },
    { "id": "node/hold", "resources": ["resource/a"], "after": ["node/read"], "access": {"resource/a": "read"} }
  ],
  "resources": [
    { "id": "resource/read.args", "pool": "pool/bindings", "kind": "binding", "node": "node/read",
      "demand": {"fixed": 16}, "alignment": 16, "lifetime": "invocation", "usage": "binding", "element": "u8",
      "storage": {"allocator": "linear-arena", "view": "contiguous", "contract": "5e1d9a3c7b2f0e8d4a6c1b9f3e7d2a5c8b0f4e6d1a3c9b7f2e5d8a0c4b6f1e3d"} },
    { "id": "resource/a", "pool": "pool/work", "kind": "workspace",
      "demand": {"fixed": 64}, "alignment": 16, "lifetime": "invocation", "usage": "storage", "element": "u8",
      "storage": {"allocator": "linear-arena", "view": "contiguous", "contract": "c2a8e4f06b1d9c3a7e5f2b8d0c6a4e1f9b3d7c5a2e8f0b6d4c1a9e3f7b5d2c8a"} },
    { "id": "image/tex", "pool": "pool/engine", "kind": "workspace", "lifetime": "invocation",
      "image": {"format": "rgba8-unorm", "extent": [16, 8]} }
  ],
  "buckets": [
    { "class": "frame", "capacity": [1, 1, 1],
      "budgets": [ {"pool": "pool/bindings", "min": 0, "max": 4096}, {"pool": "pool/work", "min": 0, "max": 4096},
                   {"pool": "pool/engine", "min": 0, "max": 1048576} ] }
  ],
  "pools": {"pool/engine": {"memory": "imported"}},
  "lanes": 2,
  "budget_bytes": 16777216
})";

// Two waves of texture_plan on two null queues, naming the engine's
// texture (in transfer-src, where the engine left it) in `named`; the
// second is submitted once the first's node/hold runs, which waits (up to
// `patience`) for the second's node/read. Whether it gave up: the waves
// were ordered.
bool second_texture_wave_waited(image_layout named, std::chrono::milliseconds patience) {
  const auto program = std::make_shared<const ferrum::compiled_program>(
      ferrum::test::compile_ok(ferrum::test::require(ferrum::parse_plan(texture_plan))));
  ferrum::gpu::null_device_options two_queues;
  two_queues.queues = 2;
  auto device = ::test::null_device(two_queues);
  const auto texture = ferrum::test::engine_image(*device, engine_images::spec(copies));
  auto list = ferrum::test::require(device->create_command_list());
  ::test::require_reached(
      device->queue().timeline(), ::test::submit(*device, *list, [&](ferrum::gpu::command_list& l) {
        ferrum::test::require(l.transition(texture->at(0), image_layout::undefined, image_layout::transfer_src));
      }));
  boost::asio::thread_pool pool(2);
  ferrum::scheduler_options options;
  options.queues = ferrum::queue_placement::plan;
  auto scheduler = ferrum::scheduler::create(program, *device, pool.get_executor(), options).value();
  std::atomic<bool> started{false}, second_ran{false}, gave_up{false};
  auto hold = [&] {
    started = true;
    const auto until = std::chrono::steady_clock::now() + patience;
    while (!second_ran && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    gave_up = !second_ran;
  };
  auto mark = [&] { second_ran = true; };
  std::atomic<std::uint64_t> first_wave{0};
  auto encode = [&](const ferrum::encode_context& c) {
    std::uint64_t none = 0;
    first_wave.compare_exchange_strong(none, c.wave);
    if (c.node_index == 1 && c.wave == first_wave) ferrum::test::require(c.commands.host(ferrum::gpu::host_call(hold)));
    if (c.node_index == 0 && c.wave != first_wave) ferrum::test::require(c.commands.host(ferrum::gpu::host_call(mark)));
  };
  const std::array<ferrum::imported_image, 1> images{{{"image/tex", &texture->at(0), named}}};
  ferrum::wave_request request{"frame", {1, 1, 1}};
  request.images = images;
  auto one = sched_test::submit(*scheduler, encode, request);
  REQUIRE(sched_test::eventually([&] { return started.load(); }));
  auto two = sched_test::submit(*scheduler, encode, request);
  CHECK_FALSE(sched_test::get(one).ec);
  CHECK_FALSE(sched_test::get(two).ec);
  CHECK(second_ran);
  CHECK(device->image_layout_errors().count == 0);
  scheduler.reset();
  pool.join();
  return gave_up;
}

}  // namespace

TEST_CASE(
    "imported images: waves that only read an engine's texture, in the layout their reads need, do not wait "
    "for each other",
    "[scheduler][image][imported]") {
  CHECK_FALSE(second_texture_wave_waited(image_layout::transfer_src, std::chrono::seconds(5)));
}

TEST_CASE("imported images: waves that change an engine's image's layout still wait for each other",
          "[scheduler][image][imported]") {
  // Named undefined: each wave transitions it to transfer-src (a write).
  CHECK(second_texture_wave_waited(image_layout::undefined, std::chrono::milliseconds(150)));
}

TEST_CASE("imported images: an image not shared with a queue a node that uses it runs on is refused, naming both",
          "[scheduler][image][imported]") {
  const auto program = std::make_shared<const ferrum::compiled_program>(
      ferrum::test::compile_ok(ferrum::test::require(ferrum::parse_plan(texture_plan))));
  const auto waves_on = [&](unsigned queues, std::uint32_t shared) {
    ferrum::gpu::null_device_options device_options;
    device_options.queues = queues;
    auto device = ::test::null_device(device_options);
    const auto texture = ferrum::test::engine_image(*device, engine_images::spec(copies));
    ferrum::gpu::null_device::share_with(texture->at(0), shared);
    boost::asio::thread_pool pool(1);
    ferrum::scheduler_options options;
    options.queues = ferrum::queue_placement::plan;
    auto scheduler = ferrum::scheduler::create(program, *device, pool.get_executor(), options).value();
    const std::array<ferrum::imported_image, 1> images{{{"image/tex", &texture->at(0), image_layout::undefined}}};
    ferrum::wave_request request{"frame", {1, 1, 1}};
    request.images = images;
    auto encode = [](const ferrum::encode_context&) {};
    auto done = sched_test::submit(*scheduler, encode, request);
    const sched_test::outcome outcome = sched_test::get(done);
    scheduler.reset();
    pool.join();
    return outcome;
  };
  const std::uint32_t compute = ferrum::queue_bit(ferrum::queue_kind::compute);
  // node/read runs on a transfer queue of its own, which an image made
  // EXCLUSIVE on the main family cannot be used on.
  const sched_test::outcome refused = waves_on(2, compute);
  CHECK(refused.ec == errc::import_not_shared);
  CHECK_THAT(refused.report.message,
             Catch::Contains("wave_request::images[0] (resource 'image/tex'): node 0 runs on the device's 'transfer' "
                             "queue, of a family the engine did not share it with (only the compute queues)"));
  // Shared with both, or on a device whose one queue runs both kinds: it runs.
  CHECK_FALSE(waves_on(2, compute | ferrum::queue_bit(ferrum::queue_kind::transfer)).ec);
  CHECK_FALSE(waves_on(1, compute).ec);
}
