// examples/frame_loop/frame_loop_options.cpp — parsing the frame_loop
// example's command line.
#include "frame_loop_options.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <system_error>

namespace frame_loop {
namespace {

constexpr std::string_view value_options[] = {"--frames", "--device", "--width", "--height", "--out", "--plan"};

std::uint64_t number(std::string_view option, std::string_view text, std::uint64_t min, std::uint64_t max) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < min || value > max)
    throw std::invalid_argument(std::string(option) + " takes a whole number from " + std::to_string(min) + " to " +
                                std::to_string(max) + ", not '" + std::string(text) + "'");
  return value;
}

}  // namespace

options parse_options(std::span<char*> args) {
  options o;
  o.plan = FERRUM_FRAME_LOOP_PLAN;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view option = args[i];
    if (option == "--help" || option == "-h") {
      o.help = true;
      continue;
    }
    if (option == "--validate") {
      o.validate = true;
      continue;
    }
    if (std::ranges::find(value_options, option) == std::end(value_options))
      throw std::invalid_argument("unknown option '" + std::string(option) + "' (--help lists them)");
    if (i + 1 == args.size()) throw std::invalid_argument(std::string(option) + " needs a value");
    const std::string_view value = args[++i];
    if (option == "--frames") {
      o.frames = number(option, value, 1, 1'000'000);
    } else if (option == "--device") {
      if (value != "vulkan" && value != "null")
        throw std::invalid_argument("--device takes vulkan or null, not '" + std::string(value) + "'");
      o.device = value;
    } else if (option == "--width") {
      o.size.width = static_cast<std::uint32_t>(number(option, value, 1, 4096));
    } else if (option == "--height") {
      o.size.height = static_cast<std::uint32_t>(number(option, value, 1, 4096));
    } else if (option == "--out") {
      o.out = value;
    } else if (option == "--plan") {
      o.plan = value;
    }
  }
  return o;
}

}  // namespace frame_loop
