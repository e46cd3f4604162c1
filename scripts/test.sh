#!/bin/sh
# Sets everything up and runs every test: the release, asan and tsan presets
# (unit, cli, example and install tests), then the plan and program fuzzers
# for a bounded time. Prints how long each stage took, and a table of them at
# the end.
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

# The fuzzers explore from the example plans and from their compiled
# programs; any crash, hang (-timeout) or sanitizer report fails the run.
# FERRUM_FUZZ_SECONDS bounds both together (default 60): two thirds for the
# plan fuzzer, the rest for the program loader's, so the total does not grow.
# Plan inputs may grow to 16 KiB, past the largest example (libFuzzer caps
# them at the largest seed otherwise).
fuzz_seconds=${FERRUM_FUZZ_SECONDS:-60}
plan_seconds=$((fuzz_seconds * 2 / 3))
program_seconds=$((fuzz_seconds - plan_seconds))
stage fuzz-build sh -c "cmake --preset fuzz && cmake --build --preset fuzz --target ferrum_plan_fuzz ferrum_program_fuzz"
corpus=$(mktemp -d)
program_corpus=$(mktemp -d)
trap 'rm -rf "$corpus" "$program_corpus"' EXIT
cp examples/plans/*.json "$corpus"/
stage fuzz-run ./build/fuzz/tests/fuzz/ferrum_plan_fuzz -max_total_time="$plan_seconds" -timeout=10 \
  -rss_limit_mb=2048 -max_len=16384 -dict=tests/fuzz/plan.dict -print_final_stats=1 "$corpus"
# The program fuzzer writes the example plans' programs into its corpus at startup.
stage fuzz-program env FERRUM_PROGRAM_FUZZ_SEEDS="$program_corpus" ./build/fuzz/tests/fuzz/ferrum_program_fuzz \
  -max_total_time="$program_seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$program_corpus"

printf 'ferrum: stage times\n%s' "$stages"
echo "ferrum: all tests passed"
