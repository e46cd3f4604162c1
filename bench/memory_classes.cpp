// memory_classes — what device-local memory buys a bandwidth-bound node over
// host-visible memory, the memory every ferrum lane lived in before memory
// classes. Same run, same kernel, same bytes; GPU, wall and CPU time per wave.
//
// Work: one dispatch of the builtin affine kernel (word = word * 1 + 1) over
// the whole of an arena of `mib` MiB, so every byte is read once and written
// once: 2 x mib MiB moved per dispatch. One command list, re-recorded each
// wave: a timestamp, the dispatch, a timestamp; submitted alone and awaited
// (gpu::async_wait, a future) before the next wave. No scheduler: this
// measures the memory, not the waves.
//
// Arenas, made once, one per way, run alternating in each repeat (each
// repeat starting with the next):
// * device: create_arena(bytes, memory_class::device), the baseline:
//   device-local memory the host never maps;
// * host_visible: create_arena(bytes), the first host-visible coherent
//   memory type (on a discrete GPU, system memory the GPU reaches over the
//   bus: Vulkan orders it before device-local memory the host may map);
// * upload: create_arena(bytes, memory_class::upload): device-local memory
//   the host maps (BAR, resizable BAR, unified memory) where the device
//   offers it, else — and always with --discrete-layout — device-local
//   memory staged through a second, host-visible buffer. The dispatch
//   reaches the memory commands use; the staging copy is not measured.
//
// Figures: each way runs `waves` waves after a warm-up of 2. Per run, the
// mean over its waves of the GPU time of the dispatch (between its two
// timestamps, the barrier a list opens with included), wall time (record,
// submit, await) and CPU time (getrusage user + system, every thread of
// the process); the table gives the median over `repeats` runs, GB/s from
// the GPU time (2 x bytes / time), and the ratios of the medians against
// device. The host_visible arena's first and last words are checked against
// the dispatches it ran.
//
// Devices: the null device (its worker thread runs the kernel's C++ form,
// every arena is the process's memory) or, with --device vulkan, the first
// Vulkan device. On lavapipe every memory type is device-local and
// host-visible at once (the CPU's memory), so the three arenas are the same
// kind of memory and the ratios are ~1 by construction, as on the null
// device; a discrete GPU shows the difference (scripts/gpu-check.sh).
// --discrete-layout sets discrete_layout on either device: only the upload
// arena changes (staged).
//
//   ferrum_bench_memory_classes [--device null|vulkan] [--mib N] [--discrete-layout] [waves] [repeats]
//                                                                        # defaults null 32 20 9
#include "bench_driver.hpp"

#include "ferrum/gpu/async_wait.hpp"
#include "ferrum/gpu/builtin_kernels.hpp"
#include "ferrum/gpu/null_device.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

namespace asio = boost::asio;
using ferrum::bench::process_cpu_us;

constexpr std::size_t warm_up_waves = 2;

struct shape {
  std::size_t mib = 32;
  std::size_t waves = 20;
  int repeats = 9;
  bool vulkan = false;
  bool discrete_layout = false;
};

enum way { device_way, host_visible_way, upload_way, way_count };
constexpr std::array<const char*, way_count> way_names{"device", "host_visible", "upload"};

// One run of one way, per wave (means over its waves).
struct run_figures {
  double gpu_us = 0;  // 0 when the device writes no timestamps
  double wall_us = 0;
  double cpu_us = 0;
};

// What every run uses: the arenas, the kernel, one list, two timestamp slots.
class rig {
 public:
  rig(ferrum::gpu::device& device, std::size_t bytes) : device_(device) {
    arenas_[device_way] = device.create_arena(bytes, ferrum::memory_class::device).value();
    arenas_[host_visible_way] = device.create_arena(bytes).value();
    arenas_[upload_way] = device.create_arena(bytes, ferrum::memory_class::upload).value();
    affine_ = device.create_kernel(ferrum::gpu::builtin::affine()).value();
    list_ = device.create_command_list().value();
    if (device.timestamps().supported) stamps_ = device.create_timestamp_pool(2).value();
  }
  ~rig() { pool_.join(); }
  rig(const rig&) = delete;
  rig& operator=(const rig&) = delete;

  [[nodiscard]] const ferrum::gpu::arena& arena(way w) const { return *arenas_[w]; }

  run_figures run(way w, std::size_t waves) {
    wave(w, warm_up_waves, nullptr);
    double gpu_us = 0;
    const double cpu = process_cpu_us();
    const auto start = std::chrono::steady_clock::now();
    wave(w, waves, &gpu_us);
    const auto n = static_cast<double>(waves);
    run_figures f;
    f.wall_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / n;
    f.cpu_us = (process_cpu_us() - cpu) / n;
    f.gpu_us = gpu_us / n;
    return f;
  }

  // Whether the host_visible arena's first and last words hold the number
  // of dispatches it ran (each adds 1 to every word).
  [[nodiscard]] bool host_visible_checks() const {
    const std::span<const std::byte> bytes = std::as_const(*arenas_[host_visible_way]).bytes();
    std::uint32_t first = 0, last = 0;
    std::memcpy(&first, bytes.data(), 4);
    std::memcpy(&last, bytes.data() + bytes.size() - 4, 4);
    const auto expected = static_cast<std::uint32_t>(dispatches_[host_visible_way]);
    return first == expected && last == expected;
  }

 private:
  // Runs `waves` waves on `w`'s arena, adding each dispatch's GPU time to
  // `gpu_us` when given.
  void wave(way w, std::size_t waves, double* gpu_us) {
    constexpr std::array<std::uint32_t, 2> push{1, 1};
    ferrum::gpu::command_list* const submission[] = {list_.get()};
    ferrum::gpu::queue& queue = device_.queue();
    std::array<std::chrono::steady_clock::time_point, 2> times;
    for (std::size_t i = 0; i < waves; ++i) {
      list_->begin().value();
      if (stamps_) list_->timestamp(*stamps_, 0).value();
      list_->dispatch(*affine_, arenas_[w]->whole(), {}, push).value();
      if (stamps_) list_->timestamp(*stamps_, 1).value();
      list_->end().value();
      const std::uint64_t value = queue.submit_next(submission).value();
      ferrum::gpu::async_wait(pool_.get_executor(), queue.timeline(), value, asio::use_future).get();
      ++dispatches_[w];
      if (stamps_ && gpu_us != nullptr) {
        stamps_->read(0, times).value();
        *gpu_us += std::chrono::duration<double, std::micro>(times[1] - times[0]).count();
      }
    }
  }

  ferrum::gpu::device& device_;
  std::array<std::unique_ptr<ferrum::gpu::arena>, way_count> arenas_;
  std::unique_ptr<ferrum::gpu::kernel> affine_;
  std::unique_ptr<ferrum::gpu::command_list> list_;
  std::unique_ptr<ferrum::gpu::timestamp_pool> stamps_;
  std::array<std::uint64_t, way_count> dispatches_{};
  asio::thread_pool pool_{1};
};

using ferrum::bench::median;

// Returns false when the arenas do not fit the device or the host_visible
// check failed.
bool table(ferrum::gpu::device& device, const shape& s) {
  const ferrum::gpu::timestamp_clock stamp_clock = device.timestamps();
  const bool timed = stamp_clock.supported;
  const std::size_t bytes = s.mib << 20;
  std::printf("device: %s (%s)%s\n", device.name().c_str(), std::string(device.kind()).c_str(),
              s.discrete_layout ? ", discrete_layout" : "");
  if (bytes > device.limits().max_arena_bytes) {
    std::printf("%zu MiB is more than the device's largest arena (%zu bytes)\n", s.mib,
                device.limits().max_arena_bytes);
    return false;
  }
  if (!timed)
    std::printf("GPU time: not measured (the device writes no timestamps: %s)\n",
                std::string(stamp_clock.calibration).c_str());
  rig r(device, bytes);
  std::printf("upload arena: %s\n\n", r.arena(upload_way).staged()
                                          ? "staged (device-local memory and a host-visible staging buffer)"
                                          : "mapped (one buffer the host writes and the GPU uses)");

  std::array<std::vector<double>, way_count> gpu, wall, cpu;
  // Each repeat starts with the next way, so that none always runs first.
  for (int rep = 0; rep < s.repeats; ++rep)
    for (std::size_t k = 0; k < way_count; ++k) {
      const auto w = static_cast<way>((static_cast<std::size_t>(rep) + k) % way_count);
      const run_figures f = r.run(w, s.waves);
      gpu[w].push_back(f.gpu_us);
      wall[w].push_back(f.wall_us);
      cpu[w].push_back(f.cpu_us);
    }

  std::printf("%12s | %11s | %9s | %12s | %11s\n", "arena", "gpu us/wave", "gpu GB/s", "wall us/wave", "cpu us/wave");
  std::array<run_figures, way_count> f{};
  for (std::size_t w = 0; w < way_count; ++w) {
    f[w] = {median(gpu[w]), median(wall[w]), median(cpu[w])};
    char gpu_text[32] = "-", rate_text[32] = "-";
    if (timed) {
      std::snprintf(gpu_text, sizeof gpu_text, "%.1f", f[w].gpu_us);
      std::snprintf(rate_text, sizeof rate_text, "%.1f", 2.0 * static_cast<double>(bytes) / (f[w].gpu_us * 1e3));
    }
    std::printf("%12s | %11s | %9s | %12.1f | %11.1f\n", way_names[w], gpu_text, rate_text, f[w].wall_us, f[w].cpu_us);
  }
  std::printf("\n");
  const auto ratios = [&](const char* name, way a) {
    char gpu_ratio[32] = "-";
    if (timed) std::snprintf(gpu_ratio, sizeof gpu_ratio, "%.2f", f[a].gpu_us / f[device_way].gpu_us);
    std::printf("%-20s gpu %s  wall %.2f  cpu %.2f\n", name, gpu_ratio, f[a].wall_us / f[device_way].wall_us,
                f[a].cpu_us / f[device_way].cpu_us);
  };
  ratios("host_visible/device:", host_visible_way);
  ratios("upload/device:", upload_way);
  const bool checked = r.host_visible_checks();
  std::printf("check: host_visible words %s the dispatches it ran\n", checked ? "equal" : "DIFFER FROM");
  std::fflush(stdout);
  return checked;
}

constexpr const char* usage_line = "[--device null|vulkan] [--mib N] [--discrete-layout] [waves] [repeats]";

}  // namespace

int main(int argc, char** argv) {
  shape s;
  const auto args =
      ferrum::bench::parse_args(argc, argv, {s.waves, s.repeats}, {"--discrete-layout"}, {"--device", "--mib"});
  if (!args) return 2;  // parse_args printed the usage
  if (!ferrum::bench::device_option(*args, s.vulkan) || !ferrum::bench::positive_option(*args, "--mib", s.mib)) {
    std::fprintf(stderr, "usage: %s %s\n", argv[0], usage_line);
    return 2;
  }
  s.waves = args->waves;
  s.repeats = args->repeats;
  s.discrete_layout = args->has("--discrete-layout");

  std::printf(
      "memory classes: one affine dispatch per wave over %zu MiB (each byte read and written once),\n"
      "on a device-local arena (memory_class::device, the baseline), a host-visible one\n"
      "(create_arena(bytes), every lane's memory before memory classes) and an upload one; %zu waves\n"
      "after %zu warm-up, median of %d runs (arenas alternating); per wave: GPU time between two\n"
      "timestamps around the dispatch, wall and CPU time (every thread)\n\n",
      s.mib, s.waves, warm_up_waves, s.repeats);

  bool checked = false;
  if (!s.vulkan) {
    ferrum::gpu::null_device_options options;
    options.discrete_layout = s.discrete_layout;
    auto device = ferrum::gpu::null_device::create(options).value();
    checked = table(*device, s);
    std::printf(
        "\nnull device: every arena is the process's memory and its worker thread runs the kernel's\n"
        "C++ form, so the ratios are ~1 by construction; the figure that matters needs a discrete GPU\n"
        "(scripts/gpu-check.sh, --device vulkan)\n");
  } else {
    ferrum::gpu::vulkan_device_options options;
    options.discrete_layout = s.discrete_layout;
    auto device = ferrum::gpu::create_vulkan_device(options);
    if (!device) {
      std::fprintf(stderr, "vulkan: no device (%s)\n", device.error().what().c_str());
      return 1;
    }
    checked = table(**device, s);
    if ((*device)->name().find("llvmpipe") != std::string::npos)
      std::printf(
          "\nlavapipe: its one memory type is device-local and host-visible at once (the CPU's memory),\n"
          "so the three arenas are the same kind of memory and the ratios are ~1 by construction; the\n"
          "figure that matters needs a discrete GPU (scripts/gpu-check.sh)\n");
    else
      std::printf(
          "\na GPU: host_visible/device above 1 is what device-local memory buys a bandwidth-bound\n"
          "node (on a discrete GPU host-visible memory is system memory across the bus; on an\n"
          "integrated one both are the same memory and the ratio stays near 1)\n");
  }
  return checked ? 0 : 1;
}
