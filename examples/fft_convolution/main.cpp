// examples/fft_convolution/main.cpp — a third-party library inside waves:
// each wave convolves a batch of 16 signals of 4,096 complex points with a
// fixed kernel (a 33-tap Gaussian) by FFT. VkFFT records the forward and
// inverse FFTs into native nodes (its plans are each lane's engine state,
// fft_lane.hpp), a ferrum kernel multiplies the spectra by the kernel's,
// and every wave's result is checked against FFTW on the host
// (convolution_encoder.hpp says when). Several chains of waves run at once
// over the plan's two lanes (fft_convolution.json).
//
//   ferrum_fft_convolution [--waves N] [--in-flight N] [--discrete-layout] [--validate]
//
// --validate turns on the validation layers with synchronization
// validation; any message they print fails the run.
//
// Exit codes: 0 every result matched FFTW within the tolerance; 1 a
// mismatch, a failed wave, a validation message or bad usage; 77 no Vulkan
// driver (1 instead when FERRUM_REQUIRE_VULKAN=1).
#include "convolution_encoder.hpp"
#include "fft_lane.hpp"
#include "fft_reference.hpp"
#include "multiply_kernel.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/plan_json.hpp"
#include "ferrum/gpu/vulkan_device.hpp"
#include "ferrum/scheduler/lane_pool.hpp"
#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iostream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace asio = boost::asio;
using std::chrono::steady_clock;

namespace {

constexpr int exit_skipped = 77;
constexpr fft_convolution::batch_shape shape{.points = 4096, .batch = 16};
constexpr std::string_view bucket_class = "convolution";

struct options {
  std::uint64_t waves = 24;
  std::size_t in_flight = 4;
  bool discrete_layout = false;
  bool validate = false;
};

std::uint64_t parse_count(std::string_view flag, const char* text) {
  std::uint64_t value = 0;
  const std::string_view s = text == nullptr ? "" : text;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || end != s.data() + s.size() || value == 0 || value > 100000)
    throw std::invalid_argument(std::string(flag) + " needs a whole number from 1 to 100000, not '" + std::string(s) +
                                "'");
  return value;
}

options parse_options(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--waves")
      o.waves = parse_count(arg, i + 1 < argc ? argv[++i] : nullptr);
    else if (arg == "--in-flight")
      o.in_flight = static_cast<std::size_t>(parse_count(arg, i + 1 < argc ? argv[++i] : nullptr));
    else if (arg == "--discrete-layout")
      o.discrete_layout = true;
    else if (arg == "--validate")
      o.validate = true;
    else
      throw std::invalid_argument("unknown argument '" + std::string(arg) +
                                  "'; usage: ferrum_fft_convolution [--waves N] [--in-flight N] "
                                  "[--discrete-layout] [--validate]");
  }
  return o;
}

// Counts the validation layers' messages (on any thread) and prints them.
struct validation_log {
  std::atomic<int> messages{0};
  static void record(void* context, const ferrum::gpu::vulkan_message& m) noexcept {
    static_cast<validation_log*>(context)->messages.fetch_add(1);
    std::cerr << "fft_convolution: vulkan " << (m.error ? "error: " : "warning: ") << m.text << '\n';
  }
};

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (!(in && text << in.rdbuf())) throw std::runtime_error("cannot read '" + std::string(path) + "'");
  return text.str();
}

// The node order and resources the encoder relies on.
void check_plan(const ferrum::plan& p) {
  constexpr std::string_view ids[] = {"node/forward", "node/multiply", "node/inverse"};
  if (p.nodes.size() != std::size(ids)) throw std::runtime_error("the plan must have exactly three nodes");
  for (std::size_t i = 0; i < std::size(ids); ++i)
    if (p.nodes[i].id.view() != ids[i])
      throw std::runtime_error("node " + std::to_string(i) + " of the plan must be '" + std::string(ids[i]) + "'");
  const auto output = std::ranges::find_if(p.resources, [](const auto& r) { return r.id.view() == "resource/output"; });
  // Checked by the lane's next wave: only a persistent resource keeps its bytes.
  if (output == p.resources.end() || output->lifetime != ferrum::allocation_lifetime::persistent)
    throw std::runtime_error("resource/output must be a persistent resource");
}

// What the chains of waves share; it outlives them.
struct run_state {
  run_state(ferrum::scheduler& s, const fft_convolution::convolution_encoder& e, std::uint64_t n, std::uint32_t lanes)
      : scheduler(s), encode(e), waves(n), last_wave_of_lane(lanes, 0) {}

  ferrum::scheduler& scheduler;
  const fft_convolution::convolution_encoder& encode;
  std::uint64_t waves;
  std::atomic<std::uint64_t> next{0};
  std::mutex mutex;
  std::uint64_t completed = 0;
  std::vector<std::string> failures;
  std::vector<std::uint64_t> last_wave_of_lane;  // 0: none
};

// One chain: submits a wave, awaits it, submits the next, until `waves`
// waves were submitted over all chains.
asio::awaitable<void> chain(run_state* r) {
  while (r->next.fetch_add(1) < r->waves) {
    const ferrum::wave_request request{.bucket_class = bucket_class, .extent = {1, 1, 1}};
    auto [ec, report] = co_await r->scheduler.async_submit(request, r->encode, asio::as_tuple(asio::use_awaitable));
    const std::scoped_lock lock(r->mutex);
    if (ec) {
      r->failures.push_back("wave " + std::to_string(report.wave) + ": " + ferrum::error_code_name(ec) + " " +
                            report.message);
      continue;
    }
    ++r->completed;
    // A lane's waves complete in order, but their handlers may not run in
    // order: keep the highest.
    std::uint64_t& last = r->last_wave_of_lane.at(report.lane);
    last = std::max(last, report.wave);
  }
}

int run(const options& o, validation_log& log) {
  const std::string text = read_file(FERRUM_FFT_CONVOLUTION_PLAN);
  ferrum::result<ferrum::plan> plan = ferrum::parse_plan(text);
  if (!plan) throw std::runtime_error("the plan: " + plan.error().what());
  check_plan(*plan);
  ferrum::result<ferrum::compiled_program> compiled = ferrum::compile(*plan);
  if (!compiled) throw std::runtime_error("compiling the plan: " + compiled.error().what());
  auto program = std::make_shared<const ferrum::compiled_program>(std::move(*compiled));

  ferrum::gpu::vulkan_device_options device_options;
  device_options.discrete_layout = o.discrete_layout;
  device_options.validation = o.validate;
  device_options.sink = &validation_log::record;
  device_options.sink_context = &log;
  auto device = ferrum::gpu::create_vulkan_device(device_options);
  if (!device) {
    const char* required = std::getenv("FERRUM_REQUIRE_VULKAN");
    if (device.error() == ferrum::errc::vulkan_unavailable && !(required && std::string_view(required) == "1")) {
      std::cerr << "fft_convolution: skipped: no Vulkan device (" << device.error().what() << ")\n";
      return exit_skipped;
    }
    throw std::runtime_error("creating the Vulkan device: " + device.error().what());
  }
  // What the waves use is made before the scheduler, which outlives none of it.
  const auto multiply = (*device)->create_kernel(fft_convolution::multiply_kernel()).value();
  const fft_convolution::convolution_reference reference(shape);
  fft_convolution::convolution_checks checks;
  const fft_convolution::convolution_encoder encode{reference, *multiply, &checks};

  asio::thread_pool threads(2);
  ferrum::scheduler_options scheduler_options{.fence_timeout = std::chrono::seconds(20), .encoder_tasks = 2};
  // Each lane's VkFFT plans, made with its memory (fft_lane.hpp).
  scheduler_options.make_lane_state = fft_convolution::fft_lane::factory(shape);
  const steady_clock::time_point made = steady_clock::now();
  auto scheduler = ferrum::scheduler::create(program, **device, threads.get_executor(), scheduler_options);
  if (!scheduler) throw std::runtime_error("creating the scheduler: " + scheduler.error().what());
  const steady_clock::time_point start = steady_clock::now();

  run_state state(**scheduler, encode, o.waves, program->lanes);
  std::vector<std::future<void>> chains;
  for (std::size_t i = 0; i < o.in_flight; ++i)
    chains.push_back(asio::co_spawn(threads, chain(&state), asio::use_future));
  for (std::future<void>& c : chains) c.get();
  const std::chrono::duration<double, std::milli> took = steady_clock::now() - start;

  // The last result of each lane: every wave has completed, none runs.
  fft_convolution::read_outputs(**scheduler, [&](std::uint32_t lane, std::span<const std::byte> output) {
    if (lane < state.last_wave_of_lane.size() && state.last_wave_of_lane[lane] != 0)
      fft_convolution::check_output(reference, checks, state.last_wave_of_lane[lane], output);
  });
  const ferrum::scheduler_stats stats = (*scheduler)->stats();
  asio::co_spawn(threads, (*scheduler)->async_shutdown(asio::use_awaitable), asio::use_future).get();

  const std::chrono::duration<double, std::milli> setup = start - made;
  std::cout << "fft_convolution on " << (*device)->name() << (o.discrete_layout ? " (discrete layout)" : "") << ": "
            << o.waves << " waves of " << shape.batch << " x " << shape.points << "-point convolutions, " << o.in_flight
            << " chains over " << program->lanes << " lanes (at most " << stats.max_in_flight
            << " waves on the GPU at once)\n"
            << "time:   " << took.count() << " ms, " << took.count() / static_cast<double>(o.waves)
            << " ms per wave; lanes and their VkFFT plans made in " << setup.count() << " ms\n"
            << "check:  " << checks.checked() << " of " << state.completed << " results against FFTW, max abs error "
            << checks.max_error() << " (tolerance " << fft_convolution::tolerance << "), " << checks.mismatches()
            << " above it\n";
  for (const std::string& f : state.failures) std::cerr << "fft_convolution: failed: " << f << '\n';
  const bool right =
      state.failures.empty() && state.completed == o.waves && checks.checked() == o.waves && checks.mismatches() == 0;
  std::cout << (right ? "all results match\n" : "FAILED\n");
  return right ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const options o = parse_options(argc, argv);
    // The log outlives the device, whose destruction may report too.
    validation_log log;
    const int status = run(o, log);
    if (status == 0 && log.messages.load() != 0) {
      std::cerr << "fft_convolution: error: the Vulkan validation layers printed " << log.messages.load()
                << " messages\n";
      return 1;
    }
    return status;
  } catch (const std::exception& e) {
    std::cerr << "fft_convolution: error: " << e.what() << '\n';
    return 1;
  }
}
