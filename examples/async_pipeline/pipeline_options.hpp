// examples/async_pipeline/pipeline_options.hpp — the command line of
// ferrum_async_pipeline.
//
//   std::optional<pipeline_options> o = parse_pipeline_options(argc, argv);
//   if (!o) std::cerr << pipeline_usage;
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

struct pipeline_options {
  // The default holds when run from the repository root; ctest passes the path.
  std::string plan = "examples/async_pipeline/pipeline.json";
  std::string device = "null";  // or "vulkan"
  std::uint64_t requests = 400;
  std::size_t in_flight = 16;  // requests started and not yet checked, at most
  std::uint32_t seed = 1;      // of the request sizes and payloads
  // --discrete-layout: the device lays memory out as a discrete GPU must
  // (device memory unmapped, the requests' parameters staged).
  bool discrete_layout = false;
};

inline constexpr const char* pipeline_usage =
    "usage: ferrum_async_pipeline [PLAN] [--device null|vulkan] [--requests N] [--in-flight N] [--seed S]\n"
    "                             [--discrete-layout]\n"
    "  PLAN defaults to examples/async_pipeline/pipeline.json (from the repository root)\n";

// The options of `argv`; nullopt for an unknown option, a missing or bad
// value, a count of 0 or a second PLAN.
[[nodiscard]] std::optional<pipeline_options> parse_pipeline_options(int argc, char** argv);
