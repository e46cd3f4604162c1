// Raster nodes on the null device (docs/design.md, "Raster nodes"): a plan
// with attachment accesses gets graphics lists on the compute queue and
// each attachment's load and store ops from the plan; a device whose
// compute queue has no graphics refuses the plan, graphics lists and a
// wait at the color-attachment-output stage, each with its code. The
// drawing itself is lavapipe's (tests/gpu/vulkan/vulkan_raster_test.cpp):
// the null device records no native commands.
#include "imported_plan.hpp"
#include "raster_plan.hpp"
#include "scheduler_support.hpp"

#include "ferrum/binding/plan_json.hpp"
#include "ferrum/gpu/semaphore.hpp"

#include <boost/asio/thread_pool.hpp>

#include <array>
#include <atomic>
#include <string>

namespace {

std::shared_ptr<const ferrum::compiled_program> raster_program() {
  return std::make_shared<const ferrum::compiled_program>(
      ferrum::test::compile_ok(ferrum::test::require(ferrum::parse_plan(ferrum::test::raster_plan))));
}

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
