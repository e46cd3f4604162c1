// An engine's deferred frame (examples/plans/deferred_frame.json) in waves on
// the null device: shadow cascades in the layers of one depth image, a
// G-buffer of mixed formats, lighting, a bloom chain down and up the mips of
// a half-size image, TAA over the previous frame's output, tonemap into the
// engine's image. The null device draws nothing, so its raster nodes record
// no commands; every other node's texels are checked against the host's
// computation, exactly, with the device running what no barrier orders in
// order and last to first, and every image met in the layout its command
// names.
#include "deferred_frame_waves.hpp"
#include "pinned_digests.hpp"
#include "present_waves.hpp"
#include "scheduler_support.hpp"

#include "ferrum/binding/plan.hpp"

#include <string>

TEST_CASE("deferred frame: deferred_frame.json compiles and keeps its pinned hash",
          "[scheduler][image][deferred][hash]") {
  const ferrum::plan p = ferrum::test::load_source_plan(pinned::deferred_frame_hash.plan_file);
  CHECK(ferrum::hash_plan(p).value().str() == pinned::deferred_frame_hash.digest);
  // Every node of the frame, in the order the encoders take them.
  REQUIRE(p.nodes.size() == static_cast<std::size_t>(ferrum::test::frame_node::readback) + 1);
  CHECK(p.nodes[static_cast<std::size_t>(ferrum::test::frame_node::gbuffer)].id.view() == "node/gbuffer");
  CHECK(p.nodes[static_cast<std::size_t>(ferrum::test::frame_node::taa)].id.view() == "node/taa");
  CHECK(p.nodes[static_cast<std::size_t>(ferrum::test::frame_node::readback)].id.view() == "node/readback");
}

TEST_CASE("deferred frame: the engine's frame gives the host's texels on the null device, reordered",
          "[scheduler][image][deferred]") {
  const auto program =
      std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(ferrum::test::deferred_frame_plan()));
  const ferrum::gpu::image_spec spec{ferrum::image_format::rgba32_float,
                                     ferrum::test::frame_width,
                                     ferrum::test::frame_height,
                                     1,
                                     1,
                                     ferrum::gpu::image_usage::storage | ferrum::gpu::image_usage::transfer_src};
  for (const bool reorder : {false, true}) {
    INFO("reorder_unordered " << reorder);
    ferrum::gpu::null_device_options options;
    options.reorder_unordered = reorder;
    auto device = ::test::null_device(options);
    const auto frame = ferrum::test::engine_image(*device, spec);
    CHECK(ferrum::test::run_deferred_frame_waves(program, *device, 5, frame->at(0)) == 0);
    const ferrum::gpu::image_layout_report report = device->image_layout_errors();
    INFO((report.first.empty() ? std::string() : report.first.front()));
    CHECK(report.count == 0);
  }
}
