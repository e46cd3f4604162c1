// examples/frame_loop/frame_loop_options.cpp — the frame_loop example's
// command line, described once for both parsing and --help.
#include "frame_loop_options.hpp"

#include <CLI/CLI.hpp>

#include <charconv>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace frame_loop {
namespace {

// CLI11 would convert "-3" to 2^64 - 3 and "1e3" to 1000: the text is
// checked as digits alone, and in range, before it converts it.
CLI::Validator whole_number(std::uint64_t min, std::uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, ec] = std::from_chars(text.data(), end, value);
        if (!text.empty() && ec == std::errc{} && stop == end && value >= min && value <= max) return {};
        return "must be a whole number from " + std::to_string(min) + " to " + std::to_string(max) + ", not '" + text +
               "'";
      },
      "");
}

// "WxH", each a whole number from 1 to 4096.
CLI::Validator image_size_text() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto x = text.find('x');
        const auto in_range = [](std::string part) { return whole_number(1, 4096)(part).empty(); };
        if (x != std::string::npos && in_range(text.substr(0, x)) && in_range(text.substr(x + 1))) return {};
        return "must be WxH, each a whole number from 1 to 4096, not '" + text + "'";
      },
      "");
}

// Describes the options into `app`, to be parsed into `o`.
void describe(CLI::App& app, options& o) {
  // As before CLI11: an option given twice takes its last value.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--frames", o.frames, "Frames to render, 1 to 1000000 (default 300, three in flight).")
      ->type_name("N")
      ->check(whole_number(1, 1'000'000));
  app.add_option("--device", o.device,
                 "vulkan: the first Vulkan device (a GPU, else Mesa's lavapipe); null: the null device, whose CPU "
                 "thread runs the kernels' C++ forms (default vulkan).")
      ->type_name("vulkan|null")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            return text == "vulkan" || text == "null" ? std::string() : "must be vulkan or null, not '" + text + "'";
          },
          ""));
  app.add_option("--width", o.size.width, "Image width in pixels, 1 to 4096 (default 256).")
      ->type_name("W")
      ->check(whole_number(1, 4096));
  app.add_option("--height", o.size.height,
                 "Image height in pixels, 1 to 4096 (default 256). The plan needs a bucket of at least width x "
                 "height pixels.")
      ->type_name("H")
      ->check(whole_number(1, 4096));
  app.add_option_function<std::vector<std::string>>(
         "--resize-at",
         [&o](const std::vector<std::string>& values) {
           o.resize_at = std::stoull(values[0]);
           const std::string& size = values[1];
           const auto x = size.find('x');
           o.resize_to = {static_cast<std::uint32_t>(std::stoul(size.substr(0, x))),
                          static_cast<std::uint32_t>(std::stoul(size.substr(x + 1)))};
         },
         "From frame N (1 to the frame count - 1) on, frames are W x H pixels (each 1 to 4096): a plan made "
         "for that size is compiled on a background thread and replaces the running one while frames go on.")
      ->type_name("N WxH")
      ->expected(2)
      ->check(whole_number(1, 1'000'000).application_index(0))
      ->check(image_size_text().application_index(1));
  app.add_option("--out", o.out, "Where frame.png, trace.json and timeline.svg go (default frame_loop_out).")
      ->type_name("DIR");
  app.add_option("--plan", o.plan, "The plan (default: frame_loop.json beside the example's sources).")
      ->type_name("FILE");
  // A flag takes no value: "--validate=false" is refused, not read as a
  // switch that turns validation off.
  app.add_flag("--validate", o.validate, "Vulkan validation layers on; any message they print fails the run.")
      ->disable_flag_override();
  app.add_flag("--discrete-layout", o.discrete_layout,
               "Lay memory out as on a discrete GPU, whatever the device: the images in device memory the host "
               "never maps, the parameters uploaded and the output image read back through staging copies.")
      ->disable_flag_override();
  app.add_flag("!--no-gpu-timestamps", o.gpu_timestamps,
               "Do not time the passes on the GPU (by default each pass is, where the device has timestamps: GPU "
               "time per frame in the summary, a GPU track in the trace).")
      ->disable_flag_override();
  app.add_flag("--present", o.present,
               "Show the frames in a window (GLFW, a Vulkan swapchain; needs a display and --device vulkan); "
               "--resize-at resizes it. Also writes expected.png, the last frame drawn on the host, and "
               "expected-edges.png to --out.")
      ->disable_flag_override();
  app.add_flag("--overlay", o.overlay,
               "With --present: draw a Dear ImGui window over the frames, in a node of each frame's wave, with "
               "the summary's numbers live (frames/s, frame time, each pass's GPU time, lanes in flight, memory); "
               "the frames record afresh each time (no replay). Also writes overlay-region.txt, where the window "
               "lies in the last frame (x y width height), to --out.")
      ->disable_flag_override();
  app.add_option("--hold-until", o.hold_until,
                 "With --present: after the last frame, print 'ready for screenshot' and keep the window until "
                 "FILE exists (at most 120 s).")
      ->type_name("FILE");
  app.add_option("--compare-screenshot", o.compare_screenshot,
                 "Compare SHOT (a PNG screenshot of the --present window) with EXPECTED (its expected.png) away "
                 "from EDGES (its expected-edges.png): print the largest red/green/blue difference; fail above "
                 "the frame check's tolerance. With OVERLAY (an --overlay run's overlay-region.txt), the window "
                 "must differ there, at most of its pixels, and is left out of the rest.")
      ->type_name("SHOT EXPECTED EDGES [OVERLAY]")
      ->expected(3, 4);
  app.footer("Exit status: 0 ok, 1 failed, 77 no Vulkan driver (1 instead when FERRUM_REQUIRE_VULKAN=1).");
}

constexpr const char* description =
    "ferrum's main example: an engine-style frame loop, each frame a submission wave: a compute pattern, a "
    "lit torus drawn over it, a blur and a tone map.";

}  // namespace

options parse_options(int argc, const char* const* argv) {
  options o;
  o.plan = FERRUM_FRAME_LOOP_PLAN;
  CLI::App app{description, "ferrum_frame_loop"};
  describe(app, o);
  try {
    app.parse(argc, argv);
    if (o.resize_at && *o.resize_at >= o.frames)
      throw std::invalid_argument("--resize-at: frame " + std::to_string(*o.resize_at) + " is not below --frames " +
                                  std::to_string(o.frames) + " (--help lists the options)");
    if (o.present && o.device != "vulkan")
      throw std::invalid_argument("--present needs --device vulkan (--help lists the options)");
    if (o.overlay && !o.present) throw std::invalid_argument("--overlay needs --present (--help lists the options)");
    if (!o.hold_until.empty() && !o.present)
      throw std::invalid_argument("--hold-until needs --present (--help lists the options)");
  } catch (const CLI::CallForHelp&) {
    o.help = true;
  } catch (const CLI::ParseError& e) {
    throw std::invalid_argument(std::string(e.what()) + " (--help lists the options)");
  }
  return o;
}

std::string usage() {
  options unused;
  CLI::App app{description, "ferrum_frame_loop"};
  describe(app, unused);
  return app.help();
}

}  // namespace frame_loop
