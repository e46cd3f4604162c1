// Arenas of a memory class on Vulkan, in both layouts
// (vulkan_device_options::discrete_layout), with validation.
#include "ferrum/gpu/vulkan_device.hpp"

#include "arena_class_checks.hpp"
#include "vulkan_test_support.hpp"

#include <catch2/catch.hpp>

using namespace vulkan_test;

TEST_CASE("vulkan: host bytes, staging and round trips of arena classes, both layouts", "[vulkan][arena]") {
  for (const bool discrete : {false, true}) {
    INFO("discrete_layout " << discrete);
    session s;
    if (!s.open_layout(discrete)) return;
    ferrum::test::check_arena_classes(*s.device, discrete);
    ferrum::test::check_round_trip(*s.device);
    ferrum::test::check_stage_errors(*s.device, discrete);
    s.finish();
  }
}
