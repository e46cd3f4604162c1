// A swapchain's image as a plan resource (examples/plans/present.json): each
// frame's acquired image is the wave's imported `present` image, which
// node/draw writes, node/check reads back and ferrum transitions to
// present-src for node/present; the wave waits on the acquisition and
// signals the image presentable, and the frame is presented. The engine's
// own image is read first, in the layout the wave names. Validation
// (synchronization validation included) stays silent.
#include "plan_builder.hpp"
#include "present/window_fixture.hpp"
#include "present_waves.hpp"
#include "wave_outcome.hpp"

#include <boost/asio/thread_pool.hpp>

#include <array>
#include <atomic>

namespace {

using ferrum::image_layout;
using present_test::acquire_now;
using present_test::window_fixture;
using vulkan_test::require;

}  // namespace

TEST_CASE("present waves: the acquired image is the plan's present image, drawn, checked and presented",
          "[vulkan][present][image]") {
  window_fixture f;
  if (!f.open(ferrum::test::present_width, ferrum::test::present_height)) return;
  ferrum::gpu::device& d = *f.session.device;
  f.chain = require(ferrum::gpu::swapchain::create(d, f.options(2)));
  REQUIRE(f.chain->width() == ferrum::test::present_width);
  REQUIRE(f.chain->height() == ferrum::test::present_height);
  const ferrum::image_format format = f.chain->order() == ferrum::gpu::channel_order::rgba
                                          ? ferrum::image_format::rgba8_unorm
                                          : ferrum::image_format::bgra8_unorm;
  const auto program =
      std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(ferrum::test::present_plan(format)));
  const std::uint32_t copies = ferrum::gpu::image_usage::transfer_src | ferrum::gpu::image_usage::transfer_dst;
  auto engine =
      ferrum::test::engine_image(d, {format, ferrum::test::present_width, ferrum::test::present_height, 1, 1, copies});
  ferrum::test::fill_engine_image(d, engine->at(0));
  {
    boost::asio::thread_pool pool(2);
    auto scheduler = require(
        ferrum::scheduler::create(program, d, pool.get_executor(), {.fence_timeout = std::chrono::seconds(120)}));
    std::atomic<int> wrong{0};
    const ferrum::test::present_encoder draw{&wrong, &engine->at(0)};
    std::span<std::byte> out;
    auto encode = [&](const ferrum::encode_context& c) {
      draw(c);
      if (c.node_index == 1) out = c.resource("resource/out")->bytes().value();
    };
    image_layout engine_layout = image_layout::transfer_dst;
    for (int frame = 0; frame < 4; ++frame) {
      const ferrum::gpu::swapchain_image image = acquire_now(*f.chain);
      REQUIRE(image.image != nullptr);
      const std::array<ferrum::imported_image, 2> named{
          {{"image/present", image.image, image_layout::undefined}, {"image/engine", &engine->at(0), engine_layout}}};
      const ferrum::gpu::semaphore_op waits[] = {{image.acquired, 0, ferrum::gpu::sync_stage::transfer}};
      const ferrum::gpu::semaphore_op signals[] = {{image.presentable, 0}};
      ferrum::wave_request request{"frame", {ferrum::test::present_width, ferrum::test::present_height, 1}};
      request.images = named;
      request.wait = waits;
      request.signal = signals;
      auto done = sched_test::submit(*scheduler, encode, request);
      const sched_test::outcome o = sched_test::get(done, std::chrono::seconds(120));
      REQUIRE_FALSE(o.ec);
      CHECK(ferrum::test::present_out_differs(out, o.report.wave) == 0);
      require(f.chain->present(image));
      engine_layout = image_layout::transfer_src;
    }
    CHECK(wrong == 0);
  }
  engine.reset();
  f.finish();
}
