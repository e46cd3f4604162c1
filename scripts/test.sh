#!/bin/sh
# Sets everything up and runs every test: the debug, asan and tsan presets
# (unit and cli tests), then the plan fuzzer for a bounded time.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
# The Vulkan tests run on Mesa's lavapipe; a missing driver fails them here
# rather than skipping them.
export FERRUM_REQUIRE_VULKAN=1

for preset in debug asan tsan; do
  cmake --preset "$preset"
  cmake --build --preset "$preset"
  ctest --preset "$preset"
done

# The fuzzer explores from the example plans; any crash, hang (-timeout) or
# sanitizer report fails the run. FERRUM_FUZZ_SECONDS bounds it (default 60).
cmake --preset fuzz
cmake --build --preset fuzz --target ferrum_plan_fuzz
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp examples/plans/*.json "$corpus"/
./build/fuzz/tests/fuzz/ferrum_plan_fuzz -max_total_time="${FERRUM_FUZZ_SECONDS:-60}" -timeout=10 \
  -rss_limit_mb=2048 -dict=tests/fuzz/plan.dict -print_final_stats=1 "$corpus"
echo "ferrum: all tests passed"
