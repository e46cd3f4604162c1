// fft_convolution — examples/fft_convolution's work measured against its
// floor: how much ferrum's waves (native nodes, per-lane VkFFT plans, the
// scheduler) cost above the least code that does the same convolutions.
//
// Work, per convolution: `batch` signals of `points` complex f32 values
// (default 16 x 4,096) written by the host, VkFFT's forward FFT, the
// spectra times the 33-tap kernel's spectrum (written by the host too),
// VkFFT's inverse FFT into memory the host reads. Two ways, one after the
// other in one process, on one Vulkan device and queue:
// * ferrum: the example's plan (examples/fft_convolution/fft_convolution.json,
//   its sizes scaled to --points and --batch, `lanes` = --in-flight) and its
//   per-lane VkFFT plans (fft_lane); a thread_pool of 2, encoder_tasks 2, K =
//   --in-flight waves kept in flight by the bench driver. The encoder is the
//   example's (convolution_encoder.cpp) without its check of every wave
//   against FFTW on the host (1-2 ms of CPU per wave, which would swamp what
//   is measured): node/forward writes the signals and records VkFFT's
//   forward FFT natively, node/multiply writes the kernel's spectrum and
//   dispatches the multiply kernel, node/inverse records the inverse FFT
//   natively; ferrum puts the barriers between them.
// * floor: VkFFT's own way with plain Vulkan (fft_convolution_floor.hpp): K
//   sets of buffers of the memory ferrum's lanes get, each with forward FFT,
//   multiply (ferrum's multiply SPIR-V through a plain compute pipeline) and
//   inverse recorded ONCE with the barriers between; then a loop that waits
//   for the set's previous submission (a timeline semaphore), writes the
//   signals and the kernel's spectrum, and submits: K in flight. It submits
//   on ferrum's VkQueue under the device's queue lock.
//
// Figures: each way runs `convolutions` convolutions after a warm-up of 2K;
// per run, wall time per convolution (first submission to last completion)
// and CPU time per convolution (getrusage user + system, every thread of
// the process: on lavapipe that includes its threads running the "GPU"
// work). Ways alternate, each repeat starting with the other; the table has
// the medians over `repeats` runs and the best wall time, and ferrum/floor
// of the medians. Target: ferrum's wall time within 1.1x of the floor's with
// the same number in flight (not a test: the exit status says only whether
// the results were right).
//
// Checks: after every run, the last result of each lane (ferrum) and of
// each set (floor) against FFTW (fft_reference.hpp, tolerance 1e-5); any
// above it, or a failed wave, and the exit status is 1.
//
//   ferrum_bench_fft_convolution [--points N] [--batch N] [--in-flight K] [--validate]
//                                [--wait-any] [convolutions] [repeats]  # defaults 4096 16 2, 200 5
//
// --wait-any: ferrum's device watches its queue as a device with several
// queues does (vulkan_device_options::wait_any: a wait for any of two
// semaphores), which Mesa's lavapipe does by spinning, taking a core from
// its compute threads on a small machine — how ferrum waited on every
// device before it watched a lone queue's semaphore alone
// (docs/benchmarks.md).
//
// --validate turns the validation layers on (synchronization validation
// included; not for timing) and fails on any message. Exit status: 0 the
// results matched; 1 a mismatch, a failure, a validation message or no
// Vulkan device; 2 bad usage.
#include "bench_driver.hpp"
#include "convolution_encoder.hpp"
#include "fft_convolution_floor.hpp"
#include "fft_lane.hpp"
#include "fft_reference.hpp"
#include "multiply_kernel.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/plan_json.hpp"
#include "ferrum/gpu/vulkan_device.hpp"
#include "ferrum/scheduler/lane_pool.hpp"
#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace asio = boost::asio;
using ferrum::bench::median;
using ferrum::bench::process_cpu_us;

constexpr std::string_view bucket_class = "convolution";

struct settings {
  std::uint64_t points = 4096;
  std::uint64_t batch = 16;
  std::size_t in_flight = 2;
  std::size_t convolutions = 200;
  int repeats = 5;
  bool validate = false;
  bool wait_any = false;
};

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (!(in && text << in.rdbuf())) throw std::runtime_error("cannot read '" + std::string(path) + "'");
  return text.str();
}

// The example's plan with its sizes for `shape` and `lanes` lanes.
ferrum::plan make_plan(const fft_convolution::batch_shape& shape, std::size_t lanes) {
  ferrum::result<ferrum::plan> parsed = ferrum::parse_plan(read_file(FERRUM_FFT_CONVOLUTION_PLAN));
  if (!parsed) throw std::runtime_error("the example's plan: " + parsed.error().what());
  ferrum::plan p = std::move(*parsed);
  constexpr std::array<std::string_view, 3> ids{"node/forward", "node/multiply", "node/inverse"};
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (p.nodes.size() != ids.size() || p.nodes[i].id.view() != ids[i])
      throw std::runtime_error("the example's plan no longer has the nodes forward, multiply, inverse");
  const std::uint64_t bytes = shape.bytes();
  const std::uint64_t signal_bytes = (bytes + 255) / 256 * 256;
  for (ferrum::resource_descriptor& r : p.resources) {
    const std::string_view id = r.id.view();
    if (id == "resource/signal" || id == "resource/spectrum" || id == "resource/output")
      r.demand = ferrum::resource_demand::fixed(bytes);
    else if (id == "resource/filter")
      r.demand = ferrum::resource_demand::fixed(shape.filter_bytes());
  }
  for (ferrum::bucket_spec& b : p.buckets)
    for (ferrum::workspace_budget& budget : b.budgets) {
      const std::string_view pool = budget.pool.view();
      if (pool == "pool/input")
        budget.max = signal_bytes + shape.filter_bytes();
      else if (pool == "pool/output" || pool == "pool/spectra")
        budget.max = signal_bytes;
    }
  p.lanes = static_cast<std::uint32_t>(lanes);
  p.budget_bytes = std::max<std::uint64_t>(p.budget_bytes, lanes * 4 * (signal_bytes + shape.filter_bytes() + 4096));
  return p;
}

// The example's encoder (examples/fft_convolution/convolution_encoder.cpp)
// without its per-wave FFTW check; it notes each lane's last wave instead,
// whose result is checked after the run.
struct bench_encoder {
  fft_convolution::convolution_encoder example;
  std::vector<std::atomic<std::uint64_t>>& last_wave_of_lane;

  void operator()(const ferrum::encode_context& c) const {
    // The lane's waves run one after another: its last is its highest.
    if (c.node_index == fft_convolution::forward_node)
      last_wave_of_lane.at(c.lane).store(c.wave, std::memory_order_relaxed);
    example(c);
  }
};

// The largest difference from FFTW of each lane's last result (every wave
// has completed).
double ferrum_max_error(const ferrum::scheduler& s, const fft_convolution::convolution_reference& reference,
                        const std::vector<std::atomic<std::uint64_t>>& last_wave_of_lane) {
  double largest = 0;
  std::size_t checked = 0;
  fft_convolution::read_outputs(s, [&](std::uint32_t lane, std::span<const std::byte> output) {
    const std::uint64_t wave = lane < last_wave_of_lane.size() ? last_wave_of_lane[lane].load() : 0;
    if (wave == 0) return;
    largest = std::max(largest, reference.max_error(wave, output));
    ++checked;
  });
  return checked == 0 ? std::numeric_limits<double>::infinity() : largest;
}

struct validation_log {
  std::atomic<int> messages{0};
  static void record(void* context, const ferrum::gpu::vulkan_message& m) noexcept {
    static_cast<validation_log*>(context)->messages.fetch_add(1);
    std::fprintf(stderr, "vulkan %s: %.*s\n", m.error ? "error" : "warning", static_cast<int>(m.text.size()),
                 m.text.data());
  }
};

enum way { ferrum_way, floor_way, way_count };
constexpr std::array<const char*, way_count> way_names{"ferrum", "floor"};

int run(const settings& s, validation_log& log) {
  const fft_convolution::batch_shape shape{.points = s.points, .batch = s.batch};
  const std::size_t k = s.in_flight;
  const std::size_t warm_up = 2 * k;
  std::printf(
      "fft convolution: %llu x %llu-point complex f32 signals per convolution (%.1f KiB), a %zu-tap kernel,\n"
      "%zu in flight; %zu convolutions per run after %zu warm-up, median of %d runs (ways alternating)\n"
      "ferrum: the example's plan and lane state, %zu lanes, waves kept %zu in flight\n"
      "floor:  VkFFT's record-once loop in plain Vulkan, %zu sets, %zu submissions in flight\n",
      static_cast<unsigned long long>(shape.batch), static_cast<unsigned long long>(shape.points),
      static_cast<double>(shape.bytes()) / 1024.0, fft_convolution::kernel_taps, k, s.convolutions, warm_up, s.repeats,
      k, k, k, k);

  const auto program = std::make_shared<const ferrum::compiled_program>(
      ferrum::compile(make_plan(shape, k)).value());  // throws ferrum's error on a bad plan

  ferrum::gpu::vulkan_device_options options;
  options.validation = s.validate;
  options.wait_any = s.wait_any;
  options.sink = &validation_log::record;
  options.sink_context = &log;
  auto device = ferrum::gpu::create_vulkan_device(options);
  if (!device) {
    std::fprintf(stderr, "vulkan: no device (%s)\n", device.error().what().c_str());
    return 1;
  }
  std::printf("device: %s%s\n", (*device)->name().c_str(), s.validate ? " (validation on: not for timing)" : "");

  const auto multiply = (*device)->create_kernel(fft_convolution::multiply_kernel()).value();
  const fft_convolution::convolution_reference reference(shape);
  std::vector<std::atomic<std::uint64_t>> last_wave_of_lane(k);
  bench_encoder encode{{reference, *multiply}, last_wave_of_lane};

  asio::thread_pool threads(2);
  ferrum::scheduler_options scheduler_options{.fence_timeout = std::chrono::seconds(60), .encoder_tasks = 2};
  scheduler_options.make_lane_state = fft_convolution::fft_lane::factory(shape);
  auto scheduler = ferrum::scheduler::create(program, **device, threads.get_executor(), scheduler_options);
  if (!scheduler) throw std::runtime_error("creating the scheduler: " + scheduler.error().what());
  ferrum::bench::wave_driver driver(**scheduler, threads, encode, {bucket_class, {1, 1, 1}});

  ferrum::bench::fft_floor floor(**device, shape, k, fft_convolution::multiply_kernel().spirv);
  if (s.wait_any) std::printf("ferrum: --wait-any: its fence waiter waits for any of two semaphores\n");
  if (floor.staged())
    std::printf(
        "floor: no host-visible device-local memory here: ferrum stages its upload and readback pools,\n"
        "the floor maps host-visible memory instead\n");
  std::uint64_t floor_input = 1;

  bool right = true;
  double max_error = 0;
  const auto checked = [&](double error) {
    max_error = std::max(max_error, error);
    right = right && error <= fft_convolution::tolerance;
  };
  std::array<std::vector<double>, way_count> wall, cpu;
  const auto measure = [&](way w, std::size_t count, bool timed) {
    const double cpu_start = process_cpu_us();
    const auto start = std::chrono::steady_clock::now();
    if (w == ferrum_way) {
      driver.run(count, k);
    } else {
      floor.run(floor_input, count, reference);
      floor_input += count;
    }
    const double wall_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    const double cpu_us = process_cpu_us() - cpu_start;
    // Outside the timing: each lane's or set's last result against FFTW.
    checked(w == ferrum_way ? ferrum_max_error(**scheduler, reference, last_wave_of_lane) : floor.max_error(reference));
    if (timed) {
      wall[w].push_back(wall_us / static_cast<double>(count));
      cpu[w].push_back(cpu_us / static_cast<double>(count));
    }
  };
  measure(ferrum_way, warm_up, false);
  measure(floor_way, warm_up, false);
  for (int rep = 0; rep < s.repeats; ++rep)
    for (std::size_t i = 0; i < way_count; ++i)
      measure(static_cast<way>((static_cast<std::size_t>(rep) + i) % way_count), s.convolutions, true);
  const std::size_t failures = driver.failures();
  asio::co_spawn(threads, (*scheduler)->async_shutdown(asio::use_awaitable), asio::use_future).get();

  std::printf("\n%8s | %12s | %12s | %11s\n", "way", "wall us/conv", "best wall us", "cpu us/conv");
  for (std::size_t w = 0; w < way_count; ++w)
    std::printf("%8s | %12.1f | %12.1f | %11.1f\n", way_names[w], median(wall[w]),
                *std::min_element(wall[w].begin(), wall[w].end()), median(cpu[w]));
  const double wall_ratio = median(wall[ferrum_way]) / median(wall[floor_way]);
  const double cpu_ratio = median(cpu[ferrum_way]) / median(cpu[floor_way]);
  std::printf("ferrum/floor: wall %.2f  cpu %.2f\n", wall_ratio, cpu_ratio);
  std::printf("target: ferrum's wall time within 1.10x of the floor's with %zu in flight: %s (%.2fx)\n", k,
              wall_ratio <= 1.10 ? "met" : "NOT met", wall_ratio);
  std::printf(
      "check: the last result of every lane and set after each run against FFTW: max abs error %.3g "
      "(tolerance %.0e)%s; failed waves %zu\n",
      max_error, fft_convolution::tolerance, right ? "" : " ABOVE IT", failures);
  std::fflush(stdout);
  return right && failures == 0 ? 0 : 1;
}

constexpr const char* usage_line =
    "[--points N] [--batch N] [--in-flight K] [--validate] [--wait-any] [convolutions] [repeats]";

}  // namespace

int main(int argc, char** argv) {
  settings s;
  const auto args = ferrum::bench::parse_args(argc, argv, {s.convolutions, s.repeats}, {"--validate", "--wait-any"},
                                              {"--points", "--batch", "--in-flight"});
  if (!args) return 2;  // parse_args printed the usage
  if (!ferrum::bench::positive_option(*args, "--points", s.points) ||
      !ferrum::bench::positive_option(*args, "--batch", s.batch) ||
      !ferrum::bench::positive_option(*args, "--in-flight", s.in_flight) || (s.points & (s.points - 1)) != 0 ||
      s.points < fft_convolution::kernel_taps) {
    std::fprintf(stderr, "usage: %s %s\n(--points: a power of two, at least %zu)\n", argv[0], usage_line,
                 fft_convolution::kernel_taps);
    return 2;
  }
  s.convolutions = args->waves;
  s.repeats = args->repeats;
  s.validate = args->has("--validate");
  s.wait_any = args->has("--wait-any");
  try {
    // The log outlives the device, whose destruction may report too.
    validation_log log;
    const int status = run(s, log);
    if (log.messages.load() != 0) {
      std::fprintf(stderr, "fft_convolution: the validation layers printed %d messages\n", log.messages.load());
      return 1;
    }
    return status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fft_convolution: error: %s\n", e.what());
    return 1;
  }
}
