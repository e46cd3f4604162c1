#!/bin/sh
# Sets everything up, builds the `ferrum` command and runs the main job: the
# cold compile of the example plans (the scheduler's `ferrum run` replaces it
# when the hot path lands).
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake --preset release
cmake --build --preset release --target ferrum
for plan in examples/plans/*.json; do
  echo "== ferrum compile $plan"
  ./build/release/tools/ferrum compile "$plan"
done
