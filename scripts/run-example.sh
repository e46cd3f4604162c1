#!/bin/sh
# Sets everything up, builds (release preset) and runs the main job: the
# frame_loop example — 300 frames, three in flight, each a submission wave of
# a compute pattern, a raster pass drawing a lit torus over it, a blur and a
# tone map over the plan's images (then a copy to the host) on the Vulkan device
# (Mesa's lavapipe where there is no GPU). It checks its last frame against the host's drawing of it, writes it
# as a PNG and writes the waves' trace (Chrome JSON and an SVG timeline) to
# frame_loop_out/. Then the `ferrum` command checks the same scheduler with its
# checking encoders. Exits non-zero if any step fails.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake --preset release
cmake --build --preset release --target ferrum_frame_loop ferrum
echo "== ferrum_frame_loop --frames 300 --device vulkan --out frame_loop_out"
./build/release/examples/frame_loop/ferrum_frame_loop --frames 300 --device vulkan --out frame_loop_out
echo "== ferrum run examples/plans/multi_bucket.json --device vulkan --waves 300"
./build/release/tools/ferrum run examples/plans/multi_bucket.json --device vulkan --waves 300
