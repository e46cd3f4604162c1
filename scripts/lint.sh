#!/bin/sh
# The house habits, checked: every C++ file is formatted as .clang-format
# says, and the libraries, the `ferrum` command and the examples pass the
# checks of .clang-tidy.
#
#   scripts/lint.sh             # both (clang-tidy needs a configured build/release)
#   scripts/lint.sh --format    # formatting only (seconds; test.sh runs this)
set -eu
cd "$(dirname "$0")/.."

git ls-files '*.cpp' '*.hpp' | xargs clang-format-14 --dry-run --Werror
echo "ferrum: formatting is clean"
[ "${1:-}" = "--format" ] && exit 0

[ -f build/release/compile_commands.json ] || cmake --preset release >/dev/null
# Sources only: each header is checked through the sources that include it
# (HeaderFilterRegex). The compile commands are g++'s: clang is told to pass
# over the warning options it does not know.
git ls-files 'common/src/*.cpp' 'binding/src/*.cpp' 'gpu/src/*.cpp' 'scheduler/src/*.cpp' 'tools/*.cpp' \
  'examples/*.cpp' | xargs run-clang-tidy-14 -quiet -p build/release -j "$(nproc)" \
  -extra-arg=-Wno-unknown-warning-option >/tmp/ferrum-clang-tidy.log 2>&1 || {
  grep -E "(warning|error):" /tmp/ferrum-clang-tidy.log | sort -u
  echo "ferrum: clang-tidy found problems (full log: /tmp/ferrum-clang-tidy.log)"
  exit 1
}
echo "ferrum: clang-tidy is clean"
