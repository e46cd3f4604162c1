// pipelining — what k lanes buy over one: waves per second with 1, 2 and 3
// lanes of the same plan, the same encoders and the same GPU work, in the
// same run. With one lane a wave cannot start until the previous wave's
// fence is reached, so the CPU's part of a wave (encoding) and the GPU's
// part (its dispatches) take turns; with k lanes they overlap.
//
// Per wave: `nodes` nodes, each owning a binding slot of `slot_kib` KiB.
// Each node's encoder first reads back its slot — what the GPU wrote there
// in the lane's previous wave, now safe to read since the lane is ours — and
// checks every word (CPU work proportional to the slot), then records a
// write_pattern dispatch over the slot with a seed of this wave (GPU work
// proportional to the slot). A wave whose readback finds a word that is not
// the previous wave's pattern counts as a violation. The scheduler keeps
// 2 x lanes waves submitted; a thread_pool of 2 threads runs the encoders.
//
// Devices: the null device, whose CPU thread plays a GPU that takes
// `latency_us` per submission on top of running the kernel's C++ form, and
// the Vulkan device (a GPU, or lavapipe on the CPU; skipped when there is no
// driver).
//
//   ferrum_bench_pipelining [waves] [repeats]     # defaults 300 3
#include "bench_driver.hpp"
#include "bench_plan.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/gpu/builtin_kernels.hpp"
#include "ferrum/gpu/null_device.hpp"
#include "ferrum/gpu/vulkan_device.hpp"
#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/thread_pool.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace {

namespace asio = boost::asio;

constexpr std::size_t nodes = 4;
constexpr std::uint64_t slot_kib = 256;
constexpr auto null_latency = std::chrono::microseconds(500);

// Per lane and node, the wave whose pattern the slot holds (0: none yet).
// A node's encoder reads its entry, then sets it to its own wave: the lane's
// next wave reads it only after this wave's fence and release.
using written_by = std::array<std::array<std::atomic<std::uint64_t>, nodes>, 3>;

// Reads back the slot (the lane's previous wave's pattern), then records
// this wave's pattern over it.
struct readback_encoder {
  const ferrum::gpu::kernel* writer;
  std::atomic<std::uint64_t>* violations;
  written_by* written;

  void operator()(const ferrum::encode_context& c) const {
    std::atomic<std::uint64_t>& entry = (*written)[c.lane][c.node_index];
    const std::uint64_t previous = entry.exchange(c.wave, std::memory_order_relaxed);
    if (previous != 0) {
      const std::span<const std::byte> bytes = c.binding->bytes();
      const auto seed = static_cast<std::uint32_t>(previous * nodes + c.node_index);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < bytes.size() / 4; ++i) {
        std::uint32_t word = 0;
        std::memcpy(&word, bytes.data() + 4 * i, 4);
        wrong += word != ferrum::gpu::builtin::pattern_word(seed, static_cast<std::uint32_t>(i)) ? 1 : 0;
      }
      if (wrong != 0) violations->fetch_add(1);
    }
    const std::array<std::uint32_t, 1> seed{static_cast<std::uint32_t>(c.wave * nodes + c.node_index)};
    c.commands.dispatch(*writer, c.slot, {}, seed).value();
  }
};

struct run_result {
  double waves_per_s = 0;
  std::uint64_t failed = 0;
  std::uint64_t violations = 0;
};

// Runs `waves` waves (after a warm-up of 2 x lanes) with 2 x lanes submitted.
run_result run(ferrum::gpu::device& device, std::uint32_t lanes, std::size_t waves) {
  const ferrum::plan p = ferrum::bench::binding_plan(nodes, lanes, slot_kib * 1024);
  auto program = std::make_shared<const ferrum::compiled_program>(ferrum::compile(p).value());
  const auto writer = device.create_kernel(ferrum::gpu::builtin::write_pattern()).value();
  std::atomic<std::uint64_t> violations{0};
  written_by written{};
  readback_encoder encode{writer.get(), &violations, &written};
  asio::thread_pool pool(2);
  run_result result;
  {
    auto s = ferrum::scheduler::create(program, device, pool.get_executor(), {.encoder_tasks = 2}).value();
    ferrum::bench::wave_driver driver(*s, pool, encode);
    driver.run(2 * lanes, 2 * lanes);
    const double us = driver.run(waves, 2 * lanes);
    result.waves_per_s = static_cast<double>(waves) * 1e6 / us;
    result.failed = driver.failures();
  }
  pool.join();
  result.violations = violations.load();
  return result;
}

void table(const char* title, ferrum::gpu::device& device, std::size_t waves, int repeats) {
  std::printf("%s\n%6s | %10s | %8s | %s\n", title, "lanes", "waves/s", "gain", "failed, violations");
  double one_lane = 0;
  for (const std::uint32_t lanes : {1u, 2u, 3u}) {
    run_result best;
    std::uint64_t failed = 0;
    std::uint64_t violations = 0;
    for (int r = 0; r < repeats; ++r) {
      const run_result got = run(device, lanes, waves);
      failed += got.failed;
      violations += got.violations;
      if (got.waves_per_s > best.waves_per_s) best = got;
    }
    if (lanes == 1) one_lane = best.waves_per_s;
    std::printf("%6u | %10.1f | %7.2fx | %llu, %llu\n", lanes, best.waves_per_s, best.waves_per_s / one_lane,
                static_cast<unsigned long long>(failed), static_cast<unsigned long long>(violations));
    std::fflush(stdout);
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const auto args = ferrum::bench::parse_args(argc, argv, {300, 3});
  if (!args) return 2;
  const std::size_t waves = args->waves;
  const int repeats = args->repeats;
  std::printf(
      "pipelining: %zu nodes x %llu KiB slots per wave; each node reads back and checks its slot on the\n"
      "CPU, then writes it on the device; %zu waves after warm-up, best of %d (gain: over 1 lane)\n\n",
      nodes, static_cast<unsigned long long>(slot_kib), waves, repeats);
  {
    ferrum::gpu::null_device_options options;
    options.latency = null_latency;
    auto device = ferrum::gpu::null_device::create(options).value();
    char title[96];
    std::snprintf(title, sizeof title, "null device (%lld us per submission plus the kernel on its CPU thread)",
                  static_cast<long long>(null_latency.count()));
    table(title, *device, waves, repeats);
  }
  auto vulkan = ferrum::gpu::create_vulkan_device({});
  if (!vulkan) {
    std::printf("vulkan: skipped (%s)\n", vulkan.error().what().c_str());
    return 0;
  }
  const std::string title = "vulkan (" + (*vulkan)->name() + ")";
  table(title.c_str(), **vulkan, waves, repeats);
  return 0;
}
