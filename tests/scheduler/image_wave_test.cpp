// A plan's images in waves on the null device (docs/design.md, "Images"):
// each lane holds its images in image memory placed by the device's sizes,
// two transient images sharing it; the compiler's transitions put every
// image in the layout each node's commands name, which the device checks
// (drop any one transition and it reports the command that met the image
// in the wrong layout); texels go through the images and back exactly,
// the persistent one's from wave to wave.
#include "image_copy_waves.hpp"
#include "mip_chain_waves.hpp"
#include "scheduler_support.hpp"

#include <boost/asio/io_context.hpp>

#include <optional>
#include <string>

namespace {

using test::image_copy_plan;
using test::run_image_waves;

using wave_runner = std::size_t (*)(const std::shared_ptr<const ferrum::compiled_program>&, ferrum::gpu::device&,
                                    std::size_t);

// `run` over `compiled` gives every texel right with no layout error, the
// device running what no barrier orders in order and last to first.
void check_clean(const ferrum::compiled_program& compiled, wave_runner run, std::size_t waves) {
  for (const bool reorder : {false, true}) {
    INFO("reorder_unordered " << reorder);
    ferrum::gpu::null_device_options options;
    options.reorder_unordered = reorder;
    auto device = ::test::null_device(options);
    CHECK(run(std::make_shared<const ferrum::compiled_program>(compiled), *device, waves) == 0);
    const ferrum::gpu::image_layout_report report = device->image_layout_errors();
    INFO((report.first.empty() ? std::string() : report.first.front()));
    CHECK(report.count == 0);
  }
}

// Without any one of `compiled`'s `transitions` transitions, `run` meets an
// image in another layout than its command names, which the device counts.
void check_each_transition_needed(const ferrum::compiled_program& compiled, std::size_t transitions, wave_runner run) {
  const ferrum::lane_recipe& recipe = compiled.buckets[0].lane;
  REQUIRE(recipe.transitions.size() == transitions);
  for (std::size_t k = 0; k < recipe.transitions.size(); ++k) {
    const ferrum::image_transition& t = recipe.transitions[k];
    INFO("without transition " << k << " (image " << recipe.images[t.image].resource.str() << " "
                               << ferrum::to_string(t.range) << " " << to_string(t.from) << " -> " << to_string(t.to)
                               << ")");
    ferrum::compiled_program dropped = compiled;
    ferrum::lane_recipe& lane = dropped.buckets[0].lane;
    lane.transitions.erase(lane.transitions.begin() + static_cast<std::ptrdiff_t>(k));
    for (std::size_t& begin : lane.transition_begin)
      if (begin > k) --begin;
    auto device = ::test::null_device();
    (void)run(std::make_shared<const ferrum::compiled_program>(std::move(dropped)), *device, 2);
    CHECK(device->image_layout_errors().count > 0);
  }
}

}  // namespace

TEST_CASE("image waves: texels go through images sharing memory and back exactly, with no layout error",
          "[scheduler][image]") {
  check_clean(ferrum::test::compile_ok(image_copy_plan(2)), run_image_waves, 6);
}

TEST_CASE("image waves: dropping any one of the compiler's transitions is caught by the device", "[scheduler][image]") {
  check_each_transition_needed(ferrum::test::compile_ok(image_copy_plan(1)), 6, run_image_waves);
}

TEST_CASE("image waves: a mip chain written level by level through views gives the host's texels",
          "[scheduler][image]") {
  check_clean(ferrum::test::compile_ok(ferrum::test::mip_chain_plan()), ferrum::test::run_mip_chain_waves, 4);
}

TEST_CASE("image waves: dropping any one transition of a mip level is caught by the device", "[scheduler][image]") {
  // fill: mip 0 to transfer-dst; down1: mip 0 to read-only, mip 1 to general;
  // down2: mip 1 to read-only, mip 2 to general; flat: mip 2 to read-only,
  // out to general; read: out to transfer-src.
  check_each_transition_needed(ferrum::test::compile_ok(ferrum::test::mip_chain_plan()), 8,
                               ferrum::test::run_mip_chain_waves);
}

TEST_CASE("image waves: a transition from undefined where contents were needed loses them on the device",
          "[scheduler][image]") {
  // The null device discards what a transition from undefined leaves: a
  // compiler that derived one where a node still needs the texels (mip 0
  // after fill, mip 1 after down1, ...) shows in the texels read back.
  const ferrum::compiled_program compiled = ferrum::test::compile_ok(ferrum::test::mip_chain_plan());
  std::size_t kept = 0;
  for (std::size_t k = 0; k < compiled.buckets[0].lane.transitions.size(); ++k) {
    if (compiled.buckets[0].lane.transitions[k].from == ferrum::image_layout::undefined) continue;
    ++kept;
    INFO("transition " << k << " from undefined");
    ferrum::compiled_program forgetful = compiled;
    forgetful.buckets[0].lane.transitions[k].from = ferrum::image_layout::undefined;
    auto device = ::test::null_device();
    CHECK(ferrum::test::run_mip_chain_waves(std::make_shared<const ferrum::compiled_program>(std::move(forgetful)),
                                            *device, 1) > 0);
  }
  CHECK(kept == 4);
}

TEST_CASE("image waves: images of other formats carry their texels exactly", "[scheduler][image]") {
  auto device = ::test::null_device();
  const auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(
      ferrum::test::with_image_formats(image_copy_plan(1), ferrum::image_format::rg16_unorm,
                                       ferrum::image_format::rgba8_srgb, ferrum::image_format::a2b10g10r10_unorm)));
  CHECK(run_image_waves(program, *device, 2) == 0);
  CHECK(device->image_layout_errors().count == 0);
}

TEST_CASE("image waves: a format feature the device lacks refuses the plan, and a replacement, by name",
          "[scheduler][image]") {
  ferrum::gpu::null_device_options options;
  options.withheld = {{ferrum::image_format::rgba8_srgb, ferrum::gpu::format_feature::transfer_src}};
  auto device = ::test::null_device(options);
  const auto lacking = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(
      ferrum::test::with_image_formats(image_copy_plan(1), ferrum::image_format::r32_float,
                                       ferrum::image_format::r32_float, ferrum::image_format::rgba8_srgb)));
  boost::asio::io_context context;
  auto refused = ferrum::scheduler::create(lacking, *device, context.get_executor());
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error() == ferrum::errc::format_unsupported);
  INFO(refused.error().detail);
  // image/history's first transfer-src is node/read.b's, the plan's node 3.
  CHECK(refused.error().detail.find("image 'image/history' of format 'rgba8-srgb' is taken 'transfer-src' by node 3") !=
        std::string::npos);
  CHECK(refused.error().detail.find("has no transfer-src feature for rgba8-srgb") != std::string::npos);

  // A scheduler over a plan the device can run, then the lacking one in its place.
  auto scheduler = ferrum::test::require(ferrum::scheduler::create(
      std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(image_copy_plan(1))), *device,
      context.get_executor()));
  std::optional<boost::system::error_code> replaced;
  scheduler->async_replace(lacking, [&](boost::system::error_code ec) { replaced = ec; });
  context.restart();
  context.run();
  REQUIRE(replaced.has_value());
  CHECK(*replaced == ferrum::errc::format_unsupported);
}
