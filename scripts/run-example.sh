#!/bin/sh
# Sets everything up, builds the `ferrum` command (release preset) and runs
# the main job: 300 waves of the multi-bucket example through the scheduler
# on the Vulkan device (Mesa's lavapipe where there is no GPU), with the
# checking encoders verifying every slot on the device. The example plans'
# cold compile comes first. Exits non-zero if any step fails, including a
# run with violations or unexplained failures (exit 3).
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake --preset release
cmake --build --preset release --target ferrum
ferrum=./build/release/tools/ferrum
for plan in examples/plans/*.json; do
  echo "== ferrum compile $plan"
  "$ferrum" compile "$plan"
done
echo "== ferrum run examples/plans/multi_bucket.json --device vulkan --waves 300"
"$ferrum" run examples/plans/multi_bucket.json --device vulkan --waves 300
