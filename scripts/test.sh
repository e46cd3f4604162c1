#!/bin/sh
# Sets everything up and runs every test: the release, asan and tsan presets
# (unit, cli, example and install tests), then the plan fuzzer for a bounded
# time. Prints how long each stage took, and a table of them at the end.
#
# Why these presets: release is what the main job (scripts/run-example.sh)
# and the benchmarks build, so it cannot break unseen, and it runs the tests
# with the optimizer on; asan (address + undefined, assertions on) and tsan
# cover what a plain debug build would, so there is no debug stage.
set -eu
cd "$(dirname "$0")/.."

stages=""
# stage NAME COMMAND...: runs COMMAND, then prints and records its time.
stage() {
  name=$1
  shift
  started=$(date +%s)
  "$@"
  seconds=$(($(date +%s) - started))
  echo "ferrum: stage $name took ${seconds} s"
  stages="$stages$(printf '  %-16s %5d s' "$name" "$seconds")
"
}

stage deps ./scripts/install-deps.sh
stage format ./scripts/lint.sh --format
# The Vulkan tests run on Mesa's lavapipe; a missing driver fails them here
# rather than skipping them.
export FERRUM_REQUIRE_VULKAN=1

for preset in release asan tsan; do
  stage "$preset-build" sh -c "cmake --preset $preset && cmake --build --preset $preset"
  stage "$preset-test" ctest --preset "$preset"
done

# The fuzzer explores from the example plans; any crash, hang (-timeout) or
# sanitizer report fails the run. FERRUM_FUZZ_SECONDS bounds it (default 60).
stage fuzz-build sh -c "cmake --preset fuzz && cmake --build --preset fuzz --target ferrum_plan_fuzz"
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp examples/plans/*.json "$corpus"/
stage fuzz-run ./build/fuzz/tests/fuzz/ferrum_plan_fuzz -max_total_time="${FERRUM_FUZZ_SECONDS:-60}" -timeout=10 \
  -rss_limit_mb=2048 -dict=tests/fuzz/plan.dict -print_final_stats=1 "$corpus"

printf 'ferrum: stage times\n%s' "$stages"
echo "ferrum: all tests passed"
