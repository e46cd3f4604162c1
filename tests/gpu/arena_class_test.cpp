// Arenas of a memory class on the null device, in both layouts
// (null_device_options::discrete_layout).
#include "arena_class_checks.hpp"
#include "null_device_support.hpp"

#include <catch2/catch.hpp>

namespace {

ferrum::gpu::null_device_options discrete_options() {
  ferrum::gpu::null_device_options options;
  options.discrete_layout = true;
  return options;
}

}  // namespace

TEST_CASE("arena classes: host bytes and staging per class on the null device, both layouts", "[gpu][arena]") {
  ferrum::test::check_arena_classes(*test::null_device(), false);
  ferrum::test::check_arena_classes(*test::null_device(discrete_options()), true);
}

TEST_CASE("arena classes: host data round-trips through device memory on the null device, both layouts",
          "[gpu][arena]") {
  ferrum::test::check_round_trip(*test::null_device());
  ferrum::test::check_round_trip(*test::null_device(discrete_options()));
}

TEST_CASE("arena classes: on the discrete layout a missing stage-in copy leaves the GPU without the host's data",
          "[gpu][arena]") {
  ferrum::test::check_round_trip(*test::null_device(discrete_options()), true);
}

TEST_CASE("arena classes: stage and barrier errors on the null device", "[gpu][arena]") {
  ferrum::test::check_stage_errors(*test::null_device(), false);
  ferrum::test::check_stage_errors(*test::null_device(discrete_options()), true);
  // An arena of another device.
  const auto one = test::null_device(discrete_options());
  const auto other = test::null_device(discrete_options());
  auto foreign = ferrum::test::require(other->create_arena(64, ferrum::memory_class::upload));
  auto list = ferrum::test::require(one->create_command_list());
  ferrum::test::require(list->begin());
  CHECK(list->stage(*foreign).error().code == ferrum::errc::foreign_object);
}
