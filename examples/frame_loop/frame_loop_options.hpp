// examples/frame_loop/frame_loop_options.hpp — the frame_loop example's
// command line, parsed by CLI11.
//
//   frame_loop::options o = frame_loop::parse_options(argc, argv);
//   if (o.help) std::cout << frame_loop::usage();
#pragma once

#include "frame_renderer.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace frame_loop {

struct options {
  std::uint64_t frames = 300;
  std::string device = "vulkan";  // "vulkan" or "null"
  image_size size;
  std::filesystem::path out = "frame_loop_out";
  std::filesystem::path plan;  // parse_options' default: frame_loop.json in the example's sources
  bool validate = false;       // Vulkan validation layers on; any message fails the run
  // --discrete-layout: the device lays memory out as a discrete GPU must
  // (device memory unmapped, uploads and the read-back image staged).
  bool discrete_layout = false;
  bool gpu_timestamps = true;  // GPU time per pass (off: --no-gpu-timestamps, or a device without them)
  bool help = false;           // --help or -h: print usage() and do nothing else
  // --resize-at N WxH: frames from N on are WxH, on a plan compiled for that
  // size on a background thread and swapped in while frames run.
  std::optional<std::uint64_t> resize_at;
  image_size resize_to;
  // --present: the frames shown in a window (GLFW, a Vulkan swapchain;
  // frame_presenter.hpp), which --resize-at resizes. Vulkan only.
  bool present = false;
  // --overlay: with --present, a Dear ImGui window over the frames
  // (frame_overlay.hpp).
  bool overlay = false;
  // --hold-until FILE: with --present, after the last frame the window stays
  // until FILE exists (for a screenshot), after "ready for screenshot".
  std::filesystem::path hold_until;
  // --compare-screenshot SHOT EXPECTED EDGES [OVERLAY]: compare two PNG
  // files (a screenshot of the window, the expected.png a --present run
  // wrote) away from the torus's edges, and, given an --overlay run's
  // overlay-region.txt, the overlay's region apart; do nothing else. Empty
  // otherwise.
  std::vector<std::filesystem::path> compare_screenshot;
};

// Parses the command line (`argv[0]` is the program's name). Throws
// std::invalid_argument saying what is wrong: an unknown option or argument,
// a missing or malformed value, a value out of range. An option given twice
// takes its last value.
[[nodiscard]] options parse_options(int argc, const char* const* argv);

// The --help text: every option, its default, the exit statuses.
[[nodiscard]] std::string usage();

}  // namespace frame_loop
