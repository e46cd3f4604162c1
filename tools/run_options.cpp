#include "run_options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <thread>

namespace ferrum::tools {
namespace {

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

// The probability in `text`, or an error naming `item`. from_chars takes no
// sign, space or hex prefix, so "+0.5", " 0.5" and "0x1" are refused; "nan"
// and "inf" parse and are refused by the range check.
boost::system::result<double, std::string> parse_probability(std::string_view text, std::string_view item) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, value, std::chars_format::fixed);
  if (text.empty() || ec != std::errc{} || stop != end)
    return "fault " + in_quotes(item) + ": the probability must be a decimal number in [0, 1]";
  if (!std::isfinite(value) || value < 0.0 || value > 1.0)
    return "fault " + in_quotes(item) + ": the probability must lie in [0, 1]";
  return value;
}

}  // namespace

unsigned default_threads() noexcept { return std::clamp(std::thread::hardware_concurrency(), 1u, 8u); }

boost::system::result<fault_spec, std::string> parse_fault_spec(std::string_view text) {
  if (text.empty())
    return std::string("--fault needs kind:probability items (kinds delay, hang, lost, encoder, cancel)");
  fault_spec spec;
  bool seen[5] = {};
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item =
        text.substr(start, comma == std::string_view::npos ? text.size() - start : comma - start);
    const std::size_t colon = item.find(':');
    if (colon == std::string_view::npos)
      return "fault " + in_quotes(item) + " is not kind:probability (kinds delay, hang, lost, encoder, cancel)";
    const std::string_view kind = item.substr(0, colon);
    static constexpr std::string_view kinds[5] = {"delay", "hang", "lost", "encoder", "cancel"};
    double* const targets[5] = {&spec.delay, &spec.hang, &spec.lost, &spec.encoder, &spec.cancel};
    std::size_t k = 0;
    while (k < 5 && kinds[k] != kind) ++k;
    if (k == 5) return "unknown fault kind " + in_quotes(kind) + " (kinds: delay, hang, lost, encoder, cancel)";
    if (seen[k]) return "fault kind " + in_quotes(kind) + " is given twice";
    seen[k] = true;
    auto probability = parse_probability(item.substr(colon + 1), item);
    if (!probability) return probability.error();
    *targets[k] = *probability;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return spec;
}

std::string check_run_options(run_options& options) {
  if (options.device != "null" && options.device != "vulkan")
    return "unknown device " + in_quotes(options.device) + " (devices: null, vulkan)";
  if (options.waves < 1 || options.waves > max_waves)
    return "--waves must lie in 1.." + std::to_string(max_waves) + ", got " + std::to_string(options.waves);
  if (options.devices < 1 || options.devices > max_devices)
    return "--devices must lie in 1.." + std::to_string(max_devices) + ", got " + std::to_string(options.devices);
  if (options.threads < 1 || options.threads > max_threads)
    return "--threads must lie in 1.." + std::to_string(max_threads) + ", got " + std::to_string(options.threads);
  if (options.fence_timeout_ms < 1 || options.fence_timeout_ms > max_fence_timeout_ms)
    return "--fence-timeout must lie in 1.." + std::to_string(max_fence_timeout_ms) + " ms, got " +
           std::to_string(options.fence_timeout_ms);
  options.faults = {};
  if (options.fault_given) {
    auto spec = parse_fault_spec(options.fault_text);
    if (!spec) return spec.error();
    options.faults = *spec;
  }
  // Only the null device can make a submission late, hang or lose the device.
  if (options.device != "null" && options.faults.device_faults())
    return "fault kinds delay, hang and lost need --device null (the " + options.device +
           " device cannot inject them); encoder and cancel work on every device";
  // Device faults are decided per submission and accounted per wave by its
  // fence value, which takes one submission per wave (run_accounting.hpp);
  // a staged lane adds its stage-in and stage-out submissions.
  if (options.discrete_layout && options.faults.device_faults())
    return "fault kinds delay, hang and lost need one submission per wave, and --discrete-layout adds each "
           "lane's staging submissions; encoder and cancel work with it";
  if (options.device != "null" && options.reorder)
    return "--reorder needs --device null (the " + options.device + " device runs commands as its driver does)";
  return {};
}

}  // namespace ferrum::tools
