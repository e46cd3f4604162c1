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
# Both run at once, one core each, for FERRUM_FUZZ_SECONDS (default 40)
# each. Plan inputs may grow to 16 KiB, past the largest example (libFuzzer
# caps them at the largest seed otherwise).
fuzz_seconds=${FERRUM_FUZZ_SECONDS:-40}
stage fuzz-build sh -c "cmake --preset fuzz && cmake --build --preset fuzz --target ferrum_plan_fuzz ferrum_program_fuzz"
fuzz_dir=$(mktemp -d)
trap 'rm -rf "$fuzz_dir"' EXIT
mkdir "$fuzz_dir/plans" "$fuzz_dir/programs"
cp examples/plans/*.json "$fuzz_dir/plans"/
# fuzz_result FUZZER PID: waits for the fuzzer; prints the end of its log, or
# all of it and fails if the fuzzer failed.
fuzz_result() {
  if wait "$2"; then
    echo "ferrum: the $1 fuzzer passed; the end of its output:"
    tail -n 8 "$fuzz_dir/$1.log"
  else
    cat "$fuzz_dir/$1.log"
    echo "ferrum: the $1 fuzzer failed"
    return 1
  fi
}
fuzz_run() {
  ./build/fuzz/tests/fuzz/ferrum_plan_fuzz -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=16384 -dict=tests/fuzz/plan.dict -print_final_stats=1 "$fuzz_dir/plans" > "$fuzz_dir/plan.log" 2>&1 &
  plan_pid=$!
  # The program fuzzer writes the example plans' programs into its corpus at startup.
  env FERRUM_PROGRAM_FUZZ_SEEDS="$fuzz_dir/programs" ./build/fuzz/tests/fuzz/ferrum_program_fuzz \
    -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$fuzz_dir/programs" \
    > "$fuzz_dir/program.log" 2>&1 &
  program_pid=$!
  failed=0
  fuzz_result plan "$plan_pid" || failed=1
  fuzz_result program "$program_pid" || failed=1
  return $failed
}
stage fuzz-run fuzz_run

printf 'ferrum: stage times\n%s' "$stages"
echo "ferrum: all tests passed"
