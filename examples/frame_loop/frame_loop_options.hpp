// examples/frame_loop/frame_loop_options.hpp — the frame_loop example's
// command line.
//
//   frame_loop::options o = frame_loop::parse_options(std::span(argv + 1, argc - 1));
//   if (o.help) std::cout << frame_loop::usage;
#pragma once

#include "frame_renderer.hpp"

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

namespace frame_loop {

struct options {
  std::uint64_t frames = 300;
  std::string device = "vulkan";  // "vulkan" or "null"
  image_size size;
  std::filesystem::path out = "frame_loop_out";
  std::filesystem::path plan;  // parse_options' default: frame_loop.json in the example's sources
  bool validate = false;       // Vulkan validation layers on; any message fails the run
  bool help = false;
};

inline constexpr const char* usage =
    "usage: ferrum_frame_loop [--frames N] [--device vulkan|null] [--width W] [--height H]\n"
    "                         [--out DIR] [--plan FILE] [--validate]\n"
    "  --frames N            frames to render (default 300, three in flight)\n"
    "  --device vulkan|null  the first Vulkan device (a GPU, else Mesa's lavapipe), or\n"
    "                        the null device, whose CPU thread runs the kernels' C++ forms\n"
    "                        (default vulkan)\n"
    "  --width W, --height H image size in pixels, 1 to 4096 (default 256 x 256)\n"
    "  --out DIR             where frame.png, trace.json and timeline.svg go\n"
    "                        (default frame_loop_out)\n"
    "  --plan FILE           the plan (default: frame_loop.json beside the example's sources)\n"
    "  --validate            Vulkan validation layers on; any message they print fails the run\n"
    "exit status: 0 ok, 1 failed, 77 no Vulkan driver (1 instead when FERRUM_REQUIRE_VULKAN=1)\n";

// Parses the arguments after the program's name. Throws std::invalid_argument
// saying what is wrong (an unknown option, a missing or malformed value, a
// value out of range).
[[nodiscard]] options parse_options(std::span<char*> args);

}  // namespace frame_loop
