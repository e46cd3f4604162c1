// barriers — what the barriers derived from a plan's hazards buy over a
// barrier before every node (what ferrum did before, and what a command
// stream that orders each command after the last does), and what the
// scheduler costs over a bare loop doing the same job. Same run, same plan,
// same kernels, GPU and wall time per wave.
//
// Plan: `nodes` (K) independent compute nodes in a ferrum.plan.v2 plan, each
// owning a 64-byte binding slot (read-write) and a workspace resource of its
// own of `work_kib` KiB (write), no `after`, in a conservative pool: no two
// nodes touch the same bytes, so the compiler derives no barrier in a wave.
// Each node's encoder dispatches the builtin write_pattern kernel over its
// workspace (seed: wave x K + node). One lane, one wave in flight, a
// thread_pool of 2 threads, encoder_tasks 1 (each wave records its K lists
// on one thread, as the floor does).
//
// Ways, run alternating in each repeat (each repeat starting with the next):
// * derived: scheduler_options::barriers = barrier_placement::derived (the
//   default): a node's list opens with a barrier only where derived, here
//   never;
// * every_node: barrier_placement::every_node, the baseline: every node's
//   list opens with a barrier, K per wave;
// * floor: no scheduler. One command list per node over a guarded arena of
//   the same size, each granted its node's range and begun with
//   list_opening::by_hazards (no barrier), recording the same dispatch, the
//   K lists submitted together with queue::submit_next and the value awaited
//   with gpu::async_wait (a future) on the timeline.
// Barriers per wave are what the lists recorded (command_list::barriers()
// after each node's commands, summed over the run's waves).
//
// Figures: each way runs `waves` waves after a warm-up of 20, twice: with GPU
// timestamps (scheduler_options::gpu_timestamps; the floor writes the same
// two timestamps per node into a timestamp_pool of its own), giving the GPU
// time of a wave (wave_report::gpu: from the first node's begin to the last
// node's end) and wall and CPU time per wave (CPU: getrusage user + system,
// every thread of the process); then without timestamps, giving wall time
// alone (on a GPU, a node's timestamps are written once the work before them
// completed, so they may order nodes themselves; the untimed wall time shows
// what the barriers cost without them). Per run, the mean over its waves;
// the table gives the median over `repeats` runs, and the ratios of the
// medians: every_node/derived and derived/floor.
//
// Devices: the null device (its worker thread runs a queue's commands one
// after another, the kernel's C++ form on the CPU) or, with --device
// vulkan, the first Vulkan device (a GPU; or lavapipe, which also runs a
// queue's commands in order). Either way, every_node/derived is ~1 without a
// GPU that overlaps independent dispatches; scripts/gpu-check.sh runs it on
// one.
//
//   ferrum_bench_barriers [--device null|vulkan] [--nodes K] [--work-kib N] [waves] [repeats]
//                                                  # defaults null 8 64 200 9
#include "bench_driver.hpp"
#include "bench_plan.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/gpu/async_wait.hpp"
#include "ferrum/gpu/builtin_kernels.hpp"
#include "ferrum/gpu/null_device.hpp"
#include "ferrum/gpu/vulkan_device.hpp"
#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace asio = boost::asio;
using ferrum::bench::process_cpu_us;

constexpr std::size_t warm_up_waves = 20;
constexpr std::uint64_t slot_bytes = 64;

struct shape {
  std::size_t nodes = 8;
  std::uint64_t work_kib = 64;
  std::size_t waves = 200;
  int repeats = 9;
  bool vulkan = false;
};

// K nodes, node i owning "res/i" (its binding slot) and "res/work.i", both
// its own; no node runs after another.
ferrum::plan barrier_plan(const shape& s) {
  using ferrum::bench::make_id;
  ferrum::plan p = ferrum::bench::binding_plan(s.nodes, 1, slot_bytes);
  p.format = ferrum::plan_format::v2;
  const auto pool = make_id<ferrum::pool_id>("pool/work");
  for (std::size_t i = 0; i < s.nodes; ++i) {
    ferrum::resource_descriptor r = p.resources[i];
    r.id = make_id<ferrum::resource_id>("res/work." + std::to_string(i));
    r.pool = pool;
    r.kind = ferrum::allocation_kind::workspace;
    r.node.reset();
    r.demand = ferrum::resource_demand::fixed(s.work_kib << 10);
    r.alignment = 256;
    r.usage = ferrum::buffer_usage::storage;
    r.element = ferrum::element_type::u32;
    p.nodes[i].resources.push_back(r.id);
    p.nodes[i].access = {ferrum::resource_access::read_write, ferrum::resource_access::write};
    p.resources.push_back(r);
  }
  p.buckets[0].budgets.push_back({pool, 0, std::uint64_t{1} << 32});
  return p;
}

double since_us(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

double span_us(const ferrum::gpu_interval& i) {
  return std::chrono::duration<double, std::micro>(i.end - i.begin).count();
}

// One run of one way, per wave (means over its waves).
struct run_figures {
  double gpu_us = 0;  // 0 when not timed
  double wall_us = 0;
  double cpu_us = 0;
  double barriers = 0;
  std::size_t failed = 0;
};

// Dispatches write_pattern over the node's workspace; counts the barriers
// its list recorded.
struct pattern_encoder {
  const ferrum::gpu::kernel* writer;
  std::size_t nodes;
  std::atomic<std::uint64_t>* barriers;

  void operator()(const ferrum::encode_context& c) const {
    const std::array<std::uint32_t, 1> seed{static_cast<std::uint32_t>(c.wave * nodes + c.node_index)};
    c.commands.dispatch(*writer, c.resources[1].range, {}, seed).value();
    barriers->fetch_add(c.commands.barriers(), std::memory_order_relaxed);
  }
};

run_figures run_scheduler(ferrum::gpu::device& device, const shape& s, ferrum::barrier_placement placement,
                          bool timed) {
  auto program = std::make_shared<const ferrum::compiled_program>(ferrum::compile(barrier_plan(s)).value());
  const auto writer = device.create_kernel(ferrum::gpu::builtin::write_pattern()).value();
  std::atomic<std::uint64_t> barriers{0};
  pattern_encoder encode{writer.get(), s.nodes, &barriers};
  asio::thread_pool pool(2);
  run_figures f;
  {
    const ferrum::scheduler_options options{.encoder_tasks = 1, .gpu_timestamps = timed, .barriers = placement};
    auto sched = ferrum::scheduler::create(program, device, pool.get_executor(), options).value();
    const ferrum::wave_request request{"step", {1, 1, 1}};
    double gpu_us = 0;
    const auto run = [&](std::size_t waves) {
      for (std::size_t w = 0; w < waves; ++w) {
        try {
          const ferrum::wave_report r = sched->async_submit(request, encode, asio::use_future).get();
          if (r.gpu) gpu_us += span_us(*r.gpu);
        } catch (const boost::system::system_error&) {
          ++f.failed;
        }
      }
    };
    run(warm_up_waves);
    gpu_us = 0;
    barriers.store(0);
    const double cpu = process_cpu_us();
    const auto start = std::chrono::steady_clock::now();
    run(s.waves);
    const auto waves = static_cast<double>(s.waves);
    f.wall_us = since_us(start) / waves;
    f.cpu_us = (process_cpu_us() - cpu) / waves;
    f.gpu_us = gpu_us / waves;
    f.barriers = static_cast<double>(barriers.load()) / waves;
  }
  pool.join();
  return f;
}

// The floor: K lists over a guarded arena, each granted its node's range,
// opened by_hazards (no barrier), submitted together and awaited.
run_figures run_floor(ferrum::gpu::device& device, const shape& s, bool timed) {
  const std::size_t work = s.work_kib << 10;
  auto memory = device.create_arena(s.nodes * work).value();
  memory->guard();
  const auto writer = device.create_kernel(ferrum::gpu::builtin::write_pattern()).value();
  std::unique_ptr<ferrum::gpu::timestamp_pool> stamps;
  if (timed) stamps = device.create_timestamp_pool(2 * s.nodes).value();
  std::vector<std::unique_ptr<ferrum::gpu::command_list>> lists;
  std::vector<ferrum::gpu::command_list*> submission;
  std::vector<ferrum::gpu::arena_range> ranges;
  for (std::size_t n = 0; n < s.nodes; ++n) ranges.push_back(memory->range(n * work, work));
  for (std::size_t n = 0; n < s.nodes; ++n) {
    lists.push_back(device.create_command_list().value());
    lists.back()->grant(std::span(ranges).subspan(n, 1));
    submission.push_back(lists.back().get());
  }
  std::vector<std::chrono::steady_clock::time_point> times(2 * s.nodes);
  asio::thread_pool pool(2);
  ferrum::gpu::queue& queue = device.queue();
  run_figures f;
  double gpu_us = 0;
  std::uint64_t barriers = 0;
  const auto run = [&](std::size_t waves, std::uint64_t first_wave) {
    for (std::size_t w = 0; w < waves; ++w) {
      const std::uint64_t wave = first_wave + w;
      for (std::size_t n = 0; n < s.nodes; ++n) {
        ferrum::gpu::command_list& list = *lists[n];
        list.begin(ferrum::gpu::list_opening::by_hazards).value();
        const auto slot = static_cast<std::uint32_t>(2 * n);
        if (stamps) list.timestamp(*stamps, slot).value();
        const std::array<std::uint32_t, 1> seed{static_cast<std::uint32_t>(wave * s.nodes + n)};
        list.dispatch(*writer, ranges[n], {}, seed).value();
        barriers += list.barriers();
        if (stamps) list.timestamp(*stamps, slot + 1).value();
        list.end().value();
      }
      const std::uint64_t value = queue.submit_next(submission).value();
      ferrum::gpu::async_wait(pool.get_executor(), queue.timeline(), value, asio::use_future).get();
      if (stamps) {
        stamps->read(0, times).value();
        const auto [first, last] = std::minmax_element(times.begin(), times.end());
        gpu_us += std::chrono::duration<double, std::micro>(*last - *first).count();
      }
    }
  };
  run(warm_up_waves, 1);
  gpu_us = 0;
  barriers = 0;
  const double cpu = process_cpu_us();
  const auto start = std::chrono::steady_clock::now();
  run(s.waves, warm_up_waves + 1);
  const auto waves = static_cast<double>(s.waves);
  f.wall_us = since_us(start) / waves;
  f.cpu_us = (process_cpu_us() - cpu) / waves;
  f.gpu_us = gpu_us / waves;
  f.barriers = static_cast<double>(barriers) / waves;
  pool.join();
  return f;
}

enum way { derived_way, every_node_way, floor_way, way_count };
constexpr std::array<const char*, way_count> way_names{"derived", "every_node", "floor"};

run_figures run_way(ferrum::gpu::device& device, const shape& s, way w, bool timed) {
  switch (w) {
    case derived_way:
      return run_scheduler(device, s, ferrum::barrier_placement::derived, timed);
    case every_node_way:
      return run_scheduler(device, s, ferrum::barrier_placement::every_node, timed);
    default:
      return run_floor(device, s, timed);
  }
}

using ferrum::bench::median;

// A way's medians over the repeats.
struct way_figures {
  double gpu_us = 0;
  double wall_us = 0;
  double cpu_us = 0;
  double untimed_wall_us = 0;
  double barriers = 0;
  std::size_t failed = 0;
};

void table(ferrum::gpu::device& device, const shape& s) {
  const ferrum::gpu::timestamp_clock stamp_clock = device.timestamps();
  const bool timed = stamp_clock.supported;
  const ferrum::compiled_program program = ferrum::compile(barrier_plan(s)).value();
  std::printf("device: %s (%s)\n", device.name().c_str(), std::string(device.kind()).c_str());
  std::printf("compiled bucket %s: %zu barriers per wave derived (every_node: %zu)\n",
              program.buckets[0].id.str().c_str(), program.buckets[0].lane.barriers_per_wave(), s.nodes);
  if (!timed)
    std::printf("GPU time: not measured (the device writes no timestamps: %s)\n",
                std::string(stamp_clock.calibration).c_str());
  std::printf("\n");

  std::array<std::vector<double>, way_count> gpu, wall, cpu, untimed, barriers;
  std::array<std::size_t, way_count> failed{};
  // Each repeat starts with the next way, so that none always runs first.
  for (int r = 0; r < s.repeats; ++r)
    for (std::size_t k = 0; k < way_count; ++k) {
      const std::size_t w = (static_cast<std::size_t>(r) + k) % way_count;
      const run_figures with = run_way(device, s, static_cast<way>(w), timed);
      const run_figures without = run_way(device, s, static_cast<way>(w), false);
      gpu[w].push_back(with.gpu_us);
      wall[w].push_back(with.wall_us);
      cpu[w].push_back(with.cpu_us);
      barriers[w].push_back(with.barriers);
      untimed[w].push_back(without.wall_us);
      failed[w] += with.failed + without.failed;
    }

  std::printf("%10s | %8s | %11s | %12s | %11s | %14s | %s\n", "", "barriers", "gpu us/wave", "wall us/wave",
              "cpu us/wave", "wall us/wave", "failed");
  std::printf("%10s | %8s | %11s | %12s | %11s | %14s |\n", "way", "per wave", "(stamps)", "(stamps)", "(stamps)",
              "(no stamps)");
  std::array<way_figures, way_count> f{};
  for (std::size_t w = 0; w < way_count; ++w) {
    f[w] = {median(gpu[w]), median(wall[w]), median(cpu[w]), median(untimed[w]), median(barriers[w]), failed[w]};
    char gpu_text[32] = "-";
    if (timed) std::snprintf(gpu_text, sizeof gpu_text, "%.1f", f[w].gpu_us);
    std::printf("%10s | %8.1f | %11s | %12.1f | %11.1f | %14.1f | %zu\n", way_names[w], f[w].barriers, gpu_text,
                f[w].wall_us, f[w].cpu_us, f[w].untimed_wall_us, f[w].failed);
  }
  std::printf("\n");
  const auto ratios = [&](const char* name, way a, way b) {
    char gpu_ratio[32] = "-";
    if (timed) std::snprintf(gpu_ratio, sizeof gpu_ratio, "%.2f", f[a].gpu_us / f[b].gpu_us);
    std::printf("%-19s gpu %s  wall %.2f  cpu %.2f  wall (no stamps) %.2f\n", name, gpu_ratio,
                f[a].wall_us / f[b].wall_us, f[a].cpu_us / f[b].cpu_us, f[a].untimed_wall_us / f[b].untimed_wall_us);
  };
  ratios("every_node/derived:", every_node_way, derived_way);
  ratios("derived/floor:", derived_way, floor_way);
  std::fflush(stdout);
}

constexpr const char* usage_line = "[--device null|vulkan] [--nodes K] [--work-kib N] [waves] [repeats]";

}  // namespace

int main(int argc, char** argv) {
  shape s;
  const auto args =
      ferrum::bench::parse_args(argc, argv, {s.waves, s.repeats}, {}, {"--device", "--nodes", "--work-kib"});
  if (!args) return 2;  // parse_args printed the usage
  if (!ferrum::bench::device_option(*args, s.vulkan) || !ferrum::bench::positive_option(*args, "--nodes", s.nodes) ||
      !ferrum::bench::positive_option(*args, "--work-kib", s.work_kib)) {
    std::fprintf(stderr, "usage: %s %s\n", argv[0], usage_line);
    return 2;
  }
  s.waves = args->waves;
  s.repeats = args->repeats;

  std::printf(
      "barriers: %zu independent compute nodes per wave, each write_pattern over its own %llu KiB (no\n"
      "hazard between them); derived barriers against one before every node (every_node) and a bare\n"
      "loop without a scheduler (floor); 1 lane, 1 wave in flight; %zu waves after %zu warm-up,\n"
      "median of %d runs (ways alternating); per wave: GPU time from the first node's begin to the\n"
      "last node's end, wall and CPU time (every thread), with GPU timestamps and without\n\n",
      s.nodes, static_cast<unsigned long long>(s.work_kib), s.waves, warm_up_waves, s.repeats);

  if (!s.vulkan) {
    auto device = ferrum::gpu::null_device::create({}).value();
    table(*device, s);
    std::printf(
        "\nnull device: its worker thread runs a queue's commands one after another (a barrier costs\n"
        "nothing there), so every_node/derived is ~1 by construction; the figure that matters needs\n"
        "a GPU that overlaps independent dispatches (scripts/gpu-check.sh, --device vulkan)\n");
  } else {
    auto device = ferrum::gpu::create_vulkan_device(ferrum::gpu::vulkan_device_options{});
    if (!device) {
      std::fprintf(stderr, "vulkan: no device (%s)\n", device.error().what().c_str());
      return 1;
    }
    table(**device, s);
    if ((*device)->name().find("llvmpipe") != std::string::npos)
      std::printf(
          "\nlavapipe: the CPU runs a queue's commands in order, one after another (a barrier costs\n"
          "nothing there), so every_node/derived is ~1; the figure that matters needs a real GPU\n"
          "(scripts/gpu-check.sh)\n");
    else
      std::printf(
          "\na GPU: every_node/derived above 1 is what leaving out the barriers between independent\n"
          "nodes buys (read the untimed wall ratio too: timestamps may order nodes themselves)\n");
  }
  return 0;
}
