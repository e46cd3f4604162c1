// Raster nodes on the null device (docs/design.md, "Raster nodes"): a plan
// with attachment accesses gets graphics lists on the compute queue and
// each attachment's load and store ops from the plan; a device whose
// compute queue has no graphics refuses the plan, graphics lists and a
// wait at the color-attachment-output stage, each with its code. The
// drawing itself is lavapipe's (tests/gpu/vulkan/vulkan_raster_test.cpp):
// the null device records no native commands.
#include "imported_plan.hpp"
#include "present_waves.hpp"
#include "raster_plan.hpp"
#include "scheduler_support.hpp"

#include "ferrum/binding/plan_json.hpp"
#include "ferrum/gpu/semaphore.hpp"

#include <boost/asio/thread_pool.hpp>

#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace {

std::shared_ptr<const ferrum::compiled_program> raster_program(std::string_view plan = ferrum::test::raster_plan) {
  return std::make_shared<const ferrum::compiled_program>(
      ferrum::test::compile_ok(ferrum::test::require(ferrum::parse_plan(plan))));
}

namespace usage = ferrum::gpu::image_usage;

}  // namespace

TEST_CASE("raster nodes: graphics lists, and each attachment's load and store ops from the plan",
          "[scheduler][raster]") {
  auto device = ::test::null_device();
  REQUIRE(device->limits().graphics);
  std::atomic<int> wrong{0};
  const auto encode = [&](const ferrum::encode_context& c) {
    // Every list of the wave's compute queue covers the draws.
    if (c.commands.stages() != ferrum::gpu::list_stages::graphics) ++wrong;
    for (const ferrum::node_image& i : c.images) {
      const std::string_view id = i.id->view();
      // node/draw: both cleared (their first use); the color image kept
      // for node/read, the depth image not (used once). node/read's copy:
      // no attachment, load and store.
      const bool draws = c.node_index == 0;
      const auto load = draws ? ferrum::attachment_load::clear : ferrum::attachment_load::load;
      const auto store =
          draws && id == "image/depth" ? ferrum::attachment_store::dont_care : ferrum::attachment_store::store;
      if (i.load != load || i.store != store) ++wrong;
    }
    // The null device records no native commands, graphics or not.
    if (c.node_index == 0 && c.native().error() != ferrum::errc::native_unavailable) ++wrong;
  };
  boost::asio::thread_pool pool(2);
  auto scheduler = ferrum::test::require(ferrum::scheduler::create(raster_program(), *device, pool.get_executor()));
  for (int i = 0; i < 3; ++i) {
    const std::uint32_t side = ferrum::test::raster_side;
    auto done = sched_test::submit(*scheduler, encode, {"frame", {side, side, side * side}});
    const auto [ec, report] = sched_test::get(done, std::chrono::seconds(30));
    INFO(report.message);
    CHECK_FALSE(ec);
  }
  scheduler.reset();
  pool.join();
  CHECK(wrong.load() == 0);
}

TEST_CASE("raster nodes: a device without graphics refuses the plan, graphics lists and a color-attachment wait",
          "[scheduler][raster]") {
  ferrum::gpu::null_device_options options;
  options.graphics = false;
  auto compute_only = ::test::null_device(options);
  CHECK_FALSE(compute_only->limits().graphics);
  boost::asio::thread_pool pool(1);
  auto refused = ferrum::scheduler::create(raster_program(), *compute_only, pool.get_executor());
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error() == ferrum::errc::raster_unsupported);
  CHECK(refused.error().detail.find("'image/color' is drawn") != std::string::npos);
  // A buffer read as vertices, or indices, draws too: refused as well.
  ferrum::plan vertices = ferrum::test::imported_plan();
  vertices.nodes[1].access[1] = ferrum::resource_access::vertex;
  auto drawn =
      ferrum::scheduler::create(std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(vertices)),
                                *compute_only, pool.get_executor());
  REQUIRE_FALSE(drawn.has_value());
  CHECK(drawn.error() == ferrum::errc::raster_unsupported);
  CHECK(drawn.error().detail.find("'resource/mesh' is drawn") != std::string::npos);
  CHECK(compute_only->create_command_list(ferrum::queue_kind::compute, ferrum::gpu::list_stages::graphics).error() ==
        ferrum::errc::unsupported_command);
  CHECK(ferrum::test::require(compute_only->create_command_list())->stages() == ferrum::gpu::list_stages::compute);

  // With graphics: none on the transfer queue.
  auto device = ::test::null_device();
  CHECK(device->create_command_list(ferrum::queue_kind::transfer, ferrum::gpu::list_stages::graphics).error() ==
        ferrum::errc::unsupported_command);

  // A wait at color-attachment-output: only on the compute queue of a
  // device with graphics.
  const auto wait_at_output = [](ferrum::gpu::device& d, ferrum::queue_kind kind) {
    auto acquired = ferrum::test::require(d.create_semaphore(ferrum::gpu::semaphore_kind::timeline));
    ferrum::test::require(acquired->signal_from_host(1));
    auto list = ferrum::test::require(d.create_command_list(kind));
    ferrum::test::require(list->begin());
    ferrum::test::require(list->end());
    const std::array waits{
        ferrum::gpu::semaphore_op{acquired.get(), 1, ferrum::gpu::sync_stage::color_attachment_output}};
    ferrum::gpu::command_list* lists[] = {list.get()};
    ferrum::gpu::queue& q = d.queue(kind);
    auto submitted = q.submit_next(lists, {}, {.waits = waits});
    if (submitted) ::test::require_reached(q.timeline(), *submitted);
    return submitted ? ferrum::errc::ok : static_cast<ferrum::errc>(submitted.error().code.value());
  };
  CHECK(wait_at_output(*compute_only, ferrum::queue_kind::compute) == ferrum::errc::invalid_semaphore_op);
  CHECK(wait_at_output(*device, ferrum::queue_kind::transfer) == ferrum::errc::invalid_semaphore_op);
  CHECK(wait_at_output(*device, ferrum::queue_kind::compute) == ferrum::errc::ok);
  CHECK(ferrum::gpu::to_string(ferrum::gpu::sync_stage::color_attachment_output) == "color-attachment-output");
}

TEST_CASE("raster nodes: the engine's attachments are cleared where their first use draws, loaded where written before",
          "[scheduler][raster][imported]") {
  auto device = ::test::null_device();
  const std::uint32_t side = ferrum::test::raster_side;
  const auto image = [&](ferrum::image_format f, std::uint32_t u) {
    return ferrum::test::engine_image(*device, {f, side, side, 1, 1, u});
  };
  const auto color = image(ferrum::image_format::rgba8_unorm, usage::color_attachment | usage::transfer_src);
  const auto depth = image(ferrum::image_format::d32_float, usage::depth_attachment);
  const auto frame = image(ferrum::image_format::rgba8_unorm, usage::color_attachment | usage::transfer_dst);
  using seen = std::pair<ferrum::attachment_load, ferrum::attachment_store>;
  std::mutex lock;
  std::map<std::pair<std::size_t, std::string>, seen> ops;  // by node and image
  const auto encode = [&](const ferrum::encode_context& c) {
    const std::lock_guard held(lock);
    for (const ferrum::node_image& i : c.images) ops[{c.node_index, std::string(i.id->view())}] = {i.load, i.store};
  };
  constexpr seen cleared{ferrum::attachment_load::clear, ferrum::attachment_store::store};
  constexpr seen kept{ferrum::attachment_load::load, ferrum::attachment_store::store};
  // The raster plan with the engine's targets: both drawn first, so both
  // cleared; both stored (the engine's), the depth image too, used once.
  // frame_loop's overlay shape: written by a copy first, so the drawing
  // loads it.
  struct plan_case {
    std::string plan;
    std::vector<ferrum::imported_image> images;
    std::map<std::pair<std::size_t, std::string>, seen> expected;
    std::vector<std::pair<std::string, ferrum::image_layout>> left;
  };
  const std::vector<plan_case> cases{
      {ferrum::test::imported_raster_plan(),
       {{"image/color", &color->at(0)}, {"image/depth", &depth->at(0)}},
       {{{0, "image/color"}, cleared}, {{0, "image/depth"}, cleared}, {{1, "image/color"}, kept}},
       {{"image/color", ferrum::image_layout::transfer_src}, {"image/depth", ferrum::image_layout::depth_attachment}}},
      {ferrum::test::overlay_plan,
       {{"image/frame", &frame->at(0)}},
       {{{0, "image/frame"}, kept}, {{1, "image/frame"}, kept}, {{2, "image/frame"}, kept}},
       {{"image/frame", ferrum::image_layout::present_src}}},
  };
  for (const plan_case& p : cases) {
    ops.clear();
    boost::asio::thread_pool pool(2);
    auto scheduler =
        ferrum::test::require(ferrum::scheduler::create(raster_program(p.plan), *device, pool.get_executor()));
    ferrum::wave_request request{"frame", {side, side, side * side}};
    request.images = p.images;
    auto done = sched_test::submit(*scheduler, encode, request);
    const auto [ec, report] = sched_test::get(done, std::chrono::seconds(30));
    INFO(report.message);
    CHECK_FALSE(ec);
    CHECK(ops == p.expected);
    // The report says where each image is left: its last use's layout.
    REQUIRE(report.images().size() == p.left.size());
    for (std::size_t i = 0; i < p.left.size(); ++i) {
      CHECK(report.images()[i].resource == p.left[i].first);
      CHECK(report.images()[i].image == p.images[i].image);
      CHECK(report.final_layout(p.left[i].first) == p.left[i].second);
    }
    scheduler.reset();
    pool.join();
  }
  CHECK(device->image_layout_errors().count == 0);
}
