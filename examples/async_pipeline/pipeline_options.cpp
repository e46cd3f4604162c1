// examples/async_pipeline/pipeline_options.cpp — parses the command line of
// ferrum_async_pipeline (pipeline_options.hpp).
#include "pipeline_options.hpp"

#include <charconv>
#include <string_view>

namespace {

// Whether all of `text` is a number that fits `value` (then stored there).
template <class Number>
bool parse_number(std::string_view text, Number& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::optional<pipeline_options> parse_pipeline_options(int argc, char** argv) {
  pipeline_options o;
  bool plan_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!arg.starts_with("-")) {
      if (plan_given) return std::nullopt;
      o.plan = arg;
      plan_given = true;
      continue;
    }
    if (arg == "--discrete-layout") {
      o.discrete_layout = true;
      continue;
    }
    if (i + 1 == argc) return std::nullopt;
    const std::string_view value = argv[++i];
    bool ok = true;
    if (arg == "--device") {
      o.device = value;
      ok = value == "null" || value == "vulkan";
    } else if (arg == "--requests") {
      ok = parse_number(value, o.requests) && o.requests > 0;
    } else if (arg == "--in-flight") {
      ok = parse_number(value, o.in_flight) && o.in_flight > 0;
    } else if (arg == "--seed") {
      ok = parse_number(value, o.seed);
    } else {
      ok = false;
    }
    if (!ok) return std::nullopt;
  }
  return o;
}
