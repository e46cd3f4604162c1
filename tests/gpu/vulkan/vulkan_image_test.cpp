// Images on Vulkan with validation (synchronization validation included):
// texels through images sharing memory, layout changes in barriers, every
// refusal; and a plan's images in a scheduler's lanes, waves copying texels
// through them.
#include "ferrum/gpu/vulkan_device.hpp"

#include "image_checks.hpp"
#include "image_copy_waves.hpp"
#include "image_kernel_checks.hpp"
#include "vulkan_test_support.hpp"

#include <catch2/catch.hpp>

using namespace vulkan_test;

TEST_CASE("vulkan: texels round-trip through images sharing memory, both layouts", "[vulkan][image]") {
  for (const bool discrete : {false, true}) {
    INFO("discrete_layout " << discrete);
    session s;
    if (!s.open_layout(discrete)) return;
    ferrum::test::check_image_round_trip(*s.device);
    s.finish();
  }
}

TEST_CASE("vulkan: refused image specs, memory and commands", "[vulkan][image]") {
  session s;
  if (!s.open()) return;
  session other;
  if (!other.open()) return;
  ferrum::test::check_image_errors(*s.device, *other.device);
  ferrum::test::check_image_made_in_layout(*s.device);
  other.finish();
  s.finish();
}

TEST_CASE("vulkan: a kernel writes a storage image from a sampled one, exactly, both layouts",
          "[vulkan][image][kernel]") {
  for (const bool discrete : {false, true}) {
    INFO("discrete_layout " << discrete);
    session s;
    if (!s.open_layout(discrete)) return;
    ferrum::test::check_image_kernel(*s.device);
    s.finish();
  }
}

TEST_CASE("vulkan: refused image kernels and image operands", "[vulkan][image][kernel]") {
  session s;
  if (!s.open()) return;
  session other;
  if (!other.open()) return;
  ferrum::test::check_image_kernel_errors(*s.device, *other.device);
  other.finish();
  s.finish();
}

TEST_CASE("vulkan: a plan's images in lanes: texels through images sharing memory, wave after wave, both layouts",
          "[vulkan][image]") {
  for (const bool discrete : {false, true}) {
    INFO("discrete_layout " << discrete);
    session s;
    if (!s.open_layout(discrete)) return;
    const auto program =
        std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(ferrum::test::image_copy_plan(2)));
    CHECK(ferrum::test::run_image_waves(program, *s.device, 5) == 0);
    s.finish();
  }
}
