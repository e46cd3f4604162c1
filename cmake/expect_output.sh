#!/bin/sh
# expect_output.sh STATUS PATTERN COMMAND [ARG...]
#
# Runs COMMAND, prints what it printed (stdout and stderr together), and
# passes (0) only when it exited STATUS *and* its output matches PATTERN: a
# grep extended regular expression over the whole output, where '.' matches
# newlines too. CTest's PASS_REGULAR_EXPRESSION would ignore the exit status
# (cmake/ferrum_output_tests.cmake). A COMMAND that exits 77 (skipped: no
# Vulkan driver) passes 77 on unless 77 is what is expected. Otherwise fails
# (1), saying which check failed.
#
# FERRUM_TEST_LD_PRELOAD, when set, becomes COMMAND's LD_PRELOAD (the asan
# build's runtime), so that this shell, grep and cat run without it.
set -u
expected=$1
pattern=$2
shift 2
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
if [ -n "${FERRUM_TEST_LD_PRELOAD:-}" ]; then
  env LD_PRELOAD="$FERRUM_TEST_LD_PRELOAD" "$@" > "$out" 2>&1
else
  "$@" > "$out" 2>&1
fi
status=$?
cat "$out"
if [ "$status" -eq 77 ] && [ "$expected" -ne 77 ]; then
  exit 77
fi
if [ "$status" -ne "$expected" ]; then
  echo "expect_output: the command exited $status, not $expected"
  exit 1
fi
if ! grep -Ezq -- "$pattern" "$out"; then
  echo "expect_output: the command exited $status as expected, but its output does not match '$pattern'"
  exit 1
fi
echo "expect_output: the command exited $status and its output matches"
