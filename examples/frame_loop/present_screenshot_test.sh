#!/bin/sh
# examples/frame_loop/present_screenshot_test.sh — the --present screenshot
# test (CMakeLists.txt): on a virtual X display (xvfb-run), ferrum_frame_loop
# on lavapipe shows 120 frames in a window (FERRUM_PRESENT_TEST_FRAMES), resized halfway, with the validation
# layers on (through the loader's environment, which the test sets: they
# print to stdout, which the test's regular expression reads); after the last frame it keeps the window (--hold-until) while
# xwd takes a screenshot of it, which ImageMagick's convert makes a PNG, and
# frame_loop --compare-screenshot compares with the last frame drawn on the
# host (expected.png) away from the torus's edges (expected-edges.png),
# allowing the difference the frame check allows; with --overlay, away from
# the overlay's window too (overlay-region.txt), which must differ.
#
#   present_screenshot_test.sh FRAME_LOOP OUT_DIR SCREENSHOT_PNG [FRAME_LOOP_OPTION...]
#
# FRAME_LOOP_OPTIONs go to the --present run (--discrete-layout, --overlay).
#
# Exit status: 0 ok; 77 no Vulkan driver (frame_loop's, unless
# FERRUM_REQUIRE_VULKAN=1); 1 otherwise, a missing tool included.
#
# FERRUM_FRAME_LOOP_LD_PRELOAD: the LD_PRELOAD of frame_loop alone (the asan
# build's, cmake/ferrum_sanitizers.cmake), not of Xvfb, xwd or convert.
# FERRUM_PRESENT_TEST_FRAMES: the frames it shows (default 120; at least 8),
# resized at half of them to FERRUM_PRESENT_TEST_RESIZE_TO (default 320x180).
set -eu

if [ $# -lt 3 ]; then
  echo "usage: $0 FRAME_LOOP OUT_DIR SCREENSHOT_PNG [FRAME_LOOP_OPTION...]" >&2
  exit 2
fi

# Outside the virtual display: check the tools, then run this script again
# under xvfb-run (24-bit colour, as a desktop's).
if [ -z "${FERRUM_PRESENT_TEST_DISPLAY:-}" ]; then
  for tool in xvfb-run:xvfb xwd:x11-apps convert:imagemagick; do
    if ! command -v "${tool%%:*}" >/dev/null 2>&1; then
      echo "present_screenshot_test: error: ${tool%%:*} is missing: install Debian's ${tool#*:}" \
        "(scripts/install-deps.sh)" >&2
      exit 1
    fi
  done
  FERRUM_PRESENT_TEST_DISPLAY=1 exec xvfb-run -a -s "-screen 0 1280x1024x24" "$0" "$@"
fi

frame_loop=$1
out=$2
screenshot=$3
shift 3
# lavapipe, where it is installed, even beside a GPU: its surfaces work on
# Xvfb, which a GPU's driver may not present to. (Unless the caller chose
# the drivers.)
for icd in /usr/share/vulkan/icd.d/lvp_icd.*.json; do
  if [ -e "$icd" ] && [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]; then
    VK_DRIVER_FILES=$icd
    VK_ICD_FILENAMES=$icd
    export VK_DRIVER_FILES VK_ICD_FILENAMES
  fi
done
title="ferrum frame_loop" # frame_presenter.hpp's window title
preload=${FERRUM_FRAME_LOOP_LD_PRELOAD:-}
rm -rf "$out"
mkdir -p "$out"
log="$out/frame_loop.log"
taken="$out/screenshot-taken"
: >"$log"

frames=${FERRUM_PRESENT_TEST_FRAMES:-120}
resize_to=${FERRUM_PRESENT_TEST_RESIZE_TO:-320x180}
LD_PRELOAD=$preload "$frame_loop" --present --frames "$frames" --resize-at $((frames / 2)) "$resize_to" --out "$out" \
  --hold-until "$taken" "$@" >"$log" 2>&1 &
pid=$!
# Released whatever happens: frame_loop waits for this file after its last frame.
trap 'touch "$taken"' EXIT

# Until the window shows the last frame, or frame_loop ended first (a
# failure, or 77: no Vulkan driver). lavapipe takes seconds; 240 s at most.
waited=0
until grep -q "ready for screenshot" "$log"; do
  if ! kill -0 "$pid" 2>/dev/null; then
    status=0
    wait "$pid" || status=$?
    cat "$log"
    [ "$status" -eq 77 ] && exit 77
    echo "present_screenshot_test: error: frame_loop ended (status $status) before its window was ready" >&2
    [ "$status" -eq 0 ] && status=1
    exit "$status"
  fi
  if [ "$waited" -ge 1200 ]; then
    cat "$log"
    echo "present_screenshot_test: error: no 'ready for screenshot' within 240 s" >&2
    exit 1
  fi
  sleep 0.2
  waited=$((waited + 1))
done

shot_status=0
xwd -name "$title" -silent -out "$out/window.xwd" || shot_status=$?
touch "$taken"
status=0
wait "$pid" || status=$?
cat "$log"
if [ "$status" -ne 0 ]; then
  echo "present_screenshot_test: error: frame_loop failed (status $status)" >&2
  exit 1
fi
if [ "$shot_status" -ne 0 ]; then
  echo "present_screenshot_test: error: xwd could not take a screenshot of the window '$title'" >&2
  exit 1
fi
convert "$out/window.xwd" "$screenshot"
# An --overlay run says where its window lies: held apart, it must differ.
overlay=""
[ -f "$out/overlay-region.txt" ] && overlay="$out/overlay-region.txt"
# shellcheck disable=SC2086 # $overlay: no argument when empty
LD_PRELOAD=$preload "$frame_loop" --compare-screenshot "$screenshot" "$out/expected.png" "$out/expected-edges.png" \
  $overlay
echo "screenshot: $screenshot"
