// Images on Vulkan with validation (synchronization validation included):
// texels through images sharing memory, layout changes in barriers, every
// refusal; and a plan's images in a scheduler's lanes, waves copying texels
// through them.
#include "ferrum/gpu/vulkan_device.hpp"

#include "dropped_barrier.hpp"
#include "image_checks.hpp"
#include "image_copy_waves.hpp"
#include "image_kernel_checks.hpp"
#include "vulkan_test_support.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

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

TEST_CASE("vulkan: dropping each derived barrier between an aliased image plan's nodes is reported by validation",
          "[vulkan][image][validation]") {
  // image_copies.json: image/a and image/b share bytes (an interval pool),
  // image/history is written and read again; every barrier past the first
  // node orders a node's copies after the last one's, with layout changes.
  const auto program =
      std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(ferrum::test::image_copy_plan(2)));
  REQUIRE(program->buckets[0].image_window.size < program->buckets[0].unaliased_image_bytes);
  const std::vector<std::size_t> nodes = ferrum::test::barrier_nodes(*program);
  REQUIRE(nodes.size() == 3);
  for (const std::size_t n : nodes) {
    INFO("without the barrier before node " << n);
    session s;
    if (!s.open()) return;
    (void)ferrum::test::run_image_waves(ferrum::test::without_barrier(*program, n), *s.device, 2);
    const std::string log = s.finish_reported();
    INFO(log);
    CHECK(reports_missing_barrier(log));
  }
}

TEST_CASE("vulkan: two independent image chains on one queue share image memory, validation silent, data checked",
          "[vulkan][image][validation]") {
  // image_copies.json with node/fill.b after node/fill.a only: the chains
  // fill.a -> read.a and fill.b -> read.b have no path between them, yet on
  // one queue image/a and image/b still share bytes (docs/design.md, "Lane
  // memory"); the barrier before fill.b orders read.a's copy out first.
  ferrum::plan p = ferrum::test::image_copy_plan(2);
  REQUIRE(p.nodes[2].id.view() == "node/fill.b");
  p.nodes[2].after = {p.nodes[0].id};
  const auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(p));
  REQUIRE(program->buckets[0].image_window.size < program->buckets[0].unaliased_image_bytes);
  REQUIRE(program->buckets[0].lane.barrier_before[2]);
  {
    session s;
    if (!s.open()) return;
    CHECK(ferrum::test::run_image_waves(program, *s.device, 5) == 0);
    s.finish();
  }
  session s;
  if (!s.open()) return;
  (void)ferrum::test::run_image_waves(ferrum::test::without_barrier(*program, 2), *s.device, 2);
  const std::string log = s.finish_reported();
  INFO(log);
  CHECK(reports_missing_barrier(log));
}
