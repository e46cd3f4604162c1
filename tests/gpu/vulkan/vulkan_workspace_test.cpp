// Lane memory on the Vulkan device, validation (synchronization included)
// on: interval aliasing and persistent resources proven by data
// (workspace_probe.hpp), as the scheduler tests do on the null device. Where
// two resources share bytes, the device must order the later node's writes
// after the earlier node's reads: the probe's snapshots and checks see it.
#include "vulkan_test_support.hpp"
#include "workspace_probe.hpp"

#include <random>

TEST_CASE("vulkan: lane memory aliasing and persistence hold by data (generated plans)", "[vulkan][workspace]") {
  vulkan_test::session s;
  if (!s.open()) return;
  std::mt19937_64 rng(5);
  workspace_probe::outcome total;
  for (int round = 0; round < 3; ++round) {
    const ferrum::plan p = workspace_probe::generate(rng, {});
    const workspace_probe::outcome o = workspace_probe::run(*s.device, p, 5);
    total.aliased_words += o.aliased_words;
    total.persistent_first_uses_checked += o.persistent_first_uses_checked;
  }
  CHECK(total.aliased_words > 0);
  CHECK(total.persistent_first_uses_checked > 0);
  s.finish();
}
