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

work=$(mktemp -d)
build_pid=""
trap 'if [ -n "$build_pid" ]; then kill -- -"$build_pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT

# build_start PRESET [TARGET...]: configures and builds PRESET in the
# background at the lowest CPU priority, its output in $work. It runs while
# the tests of the preset before it do and takes only the CPU they leave
# idle: the tests keep the 2 cores 80-92% busy (docs/building.md). It runs in
# a session of its own (setsid), so that it can be stopped whole; where the
# kernel groups processes by session (sched_autogroup), that session's group
# is given the lowest priority too, or it would share the CPU evenly with the
# tests' group whatever its nice value.
build_start() {
  build_preset=$1
  shift
  setsid sh -c 'preset=$1; shift
    if [ -w /proc/self/autogroup ]; then echo 19 > /proc/self/autogroup; fi
    exec nice -n 19 sh -c "cmake --preset $preset && cmake --build --preset $preset $*"' \
    sh "$build_preset" "$@" > "$work/$build_preset-build.log" 2>&1 &
  build_pid=$!
}
# build_finish: waits for the build build_start began and prints its output;
# fails if the build did.
build_finish() {
  status=0
  wait "$build_pid" || status=$?
  build_pid=""
  cat "$work/$build_preset-build.log"
  if [ "$status" -ne 0 ]; then
    echo "ferrum: the $build_preset build failed ($status)"
    return 1
  fi
}

# Each preset's tests run while the next preset builds; a "-build" stage is
# what remained of that build after the tests before it.
stage release-build sh -c "cmake --preset release && cmake --build --preset release"
build_start asan
stage release-test ctest --preset release
stage asan-build build_finish
build_start tsan
stage asan-test ctest --preset asan
stage tsan-build build_finish
build_start fuzz --target ferrum_plan_fuzz ferrum_program_fuzz
stage tsan-test ctest --preset tsan
stage fuzz-build build_finish

# The fuzzers explore from the example plans and from their compiled
# programs; any crash, hang (-timeout) or sanitizer report fails the run.
# Both run at once, one core each, for FERRUM_FUZZ_SECONDS (default 30)
# each. Plan inputs may grow to 16 KiB, past the largest example (libFuzzer
# caps them at the largest seed otherwise).
fuzz_seconds=${FERRUM_FUZZ_SECONDS:-30}
fuzz_dir="$work/fuzz"
mkdir "$fuzz_dir" "$fuzz_dir/plans" "$fuzz_dir/programs"
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
