#!/bin/sh
# One command for a machine with a real GPU (never run by CI): installs what
# it needs, refuses when the only Vulkan devices are software ones (Mesa's
# lavapipe), builds release, runs the Vulkan tests, the frame_loop example (its
# raster pass, compute post-processing, 3 frames in flight) at 1920x1080 for
# 600 frames with GPU timestamps (also with --discrete-layout), at 3840x2160
# for 300,
# the async compute example plan, and the fence latency, pipelining, replay,
# barriers, barrier order (split barriers among them), memory classes and FFT
# convolution benchmarks, then prints one summary: the device, its driver and
# each figure. Full outputs go to build/gpu-check/.
#
#   ./scripts/gpu-check.sh          # as root; about 5 minutes on 16 cores
#
# Exit status: 0 every step passed; 1 a step failed (named); 2 no real GPU.
set -eu
cd "$(dirname "$0")/.."
out=build/gpu-check
log() { echo "gpu-check: $*"; }
fail() {
  log "FAILED: $*"
  exit 1
}

./scripts/install-deps.sh || fail "installing packages (scripts/install-deps.sh); is Debian's archive reachable?"

# The first device whose type is not a CPU is a real GPU; vulkaninfo lists
# every device the loader finds, lavapipe among them.
summary=$(vulkaninfo --summary 2>/dev/null) || fail "vulkaninfo --summary: no Vulkan loader or driver"
gpu=$(printf '%s\n' "$summary" | awk '
  /deviceType/ { type = $3 }
  /deviceName/ { sub(/^[^=]*= /, ""); name = $0 }
  /driverInfo/ { sub(/^[^=]*= /, ""); if (type != "PHYSICAL_DEVICE_TYPE_CPU" && found == "") found = name " | " $0 }
  END { print found }')
if [ -z "$gpu" ]; then
  software=$(printf '%s\n' "$summary" | sed -n 's/^[[:space:]]*deviceName[[:space:]]*= //p' | paste -sd, -)
  log "no real GPU: the only Vulkan devices are software ones (${software:-none}); nothing to check here"
  exit 2
fi
device=${gpu%% | *}
driver=${gpu#* | }
log "device: $device (driver $driver)"

mkdir -p "$out"
jobs=$(nproc)
started=$(date +%s)
cmake --preset release >"$out/configure.log" 2>&1 || fail "cmake --preset release (see $out/configure.log)"
cmake --build --preset release -j "$jobs" >"$out/build.log" 2>&1 || fail "build (see $out/build.log)"
log "built release in $(($(date +%s) - started)) s"

export FERRUM_REQUIRE_VULKAN=1
ctest --preset release -L vulkan -j "$jobs" >"$out/ctest.log" 2>&1 || fail "ctest -L vulkan (see $out/ctest.log)"
tests=$(grep -E "tests passed" "$out/ctest.log" || true)

release=build/release
"$release/examples/frame_loop/ferrum_frame_loop" --device vulkan --frames 600 --width 1920 --height 1080 \
  --out "$out/frame_loop" >"$out/frame_loop.log" 2>&1 || fail "frame_loop (see $out/frame_loop.log)"
# The same with every upload and readback staged (the path a GPU without
# resizable BAR takes), to compare with the layout the device picks.
"$release/examples/frame_loop/ferrum_frame_loop" --device vulkan --frames 600 --width 1920 --height 1080 \
  --discrete-layout --out "$out/frame_loop_discrete" >"$out/frame_loop_discrete.log" 2>&1 ||
  fail "frame_loop --discrete-layout (see $out/frame_loop_discrete.log)"
"$release/examples/frame_loop/ferrum_frame_loop" --device vulkan --frames 300 --width 3840 --height 2160 \
  --out "$out/frame_loop_4k" >"$out/frame_loop_4k.log" 2>&1 || fail "frame_loop at 4K (see $out/frame_loop_4k.log)"
"$release/bench/ferrum_bench_fence_latency" 2000 >"$out/fence_latency.log" 2>&1 ||
  fail "fence latency bench (see $out/fence_latency.log)"
"$release/bench/ferrum_bench_pipelining" 300 3 >"$out/pipelining.log" 2>&1 ||
  fail "pipelining bench (see $out/pipelining.log)"
"$release/bench/ferrum_bench_replay" 2000 5 >"$out/replay.log" 2>&1 || fail "replay bench (see $out/replay.log)"
# Barriers: many small independent dispatches (where a barrier's drain shows
# most), then fewer larger ones.
"$release/bench/ferrum_bench_barriers" --device vulkan --nodes 64 --work-kib 64 500 5 >"$out/barriers.log" 2>&1 ||
  fail "barriers bench (see $out/barriers.log)"
"$release/bench/ferrum_bench_barriers" --device vulkan --nodes 32 --work-kib 1024 300 5 \
  >"$out/barriers_large.log" 2>&1 || fail "barriers bench, larger nodes (see $out/barriers_large.log)"
# Barrier order and split barriers: barriers per frame, the stages they wait
# for, the needless drains events save (the compiler's figures: no device).
"$release/bench/ferrum_bench_barrier_order" 21 >"$out/barrier_order.log" 2>&1 ||
  fail "barrier order bench (see $out/barrier_order.log)"
# Async compute: the example plan whose cull and reduce passes run on the
# async compute queue beside the main queue's shade pass; on a GPU with a
# compute family apart from the main one, a queue of its own (the queues
# line says which), checked and timed per node.
"$release/tools/ferrum" run examples/plans/async_compute.json --device vulkan --waves 300 --gpu-timestamps \
  >"$out/async_compute.log" 2>&1 || fail "async compute run (see $out/async_compute.log)"
# Memory classes: a bandwidth-bound dispatch over 256 MiB, device-local
# against host-visible (and upload) memory.
"$release/bench/ferrum_bench_memory_classes" --device vulkan --mib 256 20 9 >"$out/memory_classes.log" 2>&1 ||
  fail "memory classes bench (see $out/memory_classes.log)"
# FFT convolution: examples/fft_convolution's work in ferrum's waves against
# VkFFT's record-once loop in plain Vulkan; the example's size, then larger
# batches with three in flight.
"$release/bench/ferrum_bench_fft_convolution" 2000 9 >"$out/fft_convolution.log" 2>&1 ||
  fail "fft convolution bench (see $out/fft_convolution.log)"
"$release/bench/ferrum_bench_fft_convolution" --points 16384 --batch 64 --in-flight 3 500 9 \
  >"$out/fft_convolution_large.log" 2>&1 ||
  fail "fft convolution bench, larger batches (see $out/fft_convolution_large.log)"

echo
echo "== ferrum gpu-check: $device"
echo "driver:        $driver"
echo "vulkan tests:  $tests"
frame_figures='^(device|memory|frames/s|frame time|gpu time|per pass|check):'
echo "-- frame_loop 1920x1080, 600 frames, GPU timestamps on"
grep -E "$frame_figures" "$out/frame_loop.log"
echo "-- frame_loop 1920x1080, 600 frames, --discrete-layout (uploads and the output staged)"
grep -E "$frame_figures" "$out/frame_loop_discrete.log"
echo "-- frame_loop 3840x2160, 300 frames"
grep -E "$frame_figures" "$out/frame_loop_4k.log"
echo "-- fence latency (timeline reached -> coroutine resumed)"
grep -E "p50|vulkan|baseline|null" "$out/fence_latency.log" | head -n 12
echo "-- pipelining (lanes against one)"
cat "$out/pipelining.log"
echo "-- replay against recording"
cat "$out/replay.log"
barrier_figures='^compiled bucket|^ *[|] barriers|^ *(way|derived|every_node|floor) [|]|/derived:|/floor:'
echo "-- barriers: derived against every_node and the bare floor, 64 nodes x 64 KiB"
grep -E "$barrier_figures" "$out/barriers.log"
echo "-- barriers: 32 nodes x 1024 KiB"
grep -E "$barrier_figures" "$out/barriers_large.log"
echo "-- split barriers (compiler's figures): barriers, events and needless drains per frame"
sed -n '/^split barriers/,$p' "$out/barrier_order.log"
echo "-- async compute (examples/plans/async_compute.json, 300 waves): its queues, GPU time and critical path"
grep -E '^ *(queues|gpu|gpu path|violations) ' "$out/async_compute.log"
echo "-- memory classes: one dispatch over 256 MiB, device-local against host-visible"
grep -E '^upload arena|^ *(arena|device|host_visible|upload) [|]|/device:|^check:' "$out/memory_classes.log"
fft_figures='^ *(way|ferrum|floor) [|]|^ferrum/floor:|^target:|^check:'
echo "-- fft convolution: ferrum's waves against VkFFT's record-once loop, 16 x 4096 points, 2 in flight"
grep -E "$fft_figures" "$out/fft_convolution.log"
echo "-- fft convolution: 64 x 16384 points, 3 in flight"
grep -E "$fft_figures" "$out/fft_convolution_large.log"
echo "== gpu-check took $(($(date +%s) - started)) s; outputs in $out/"
