// queues — what a second queue buys, and what a second device buys: waves
// per second of a ferrum.plan.v2 plan with a compute node and an independent
// transfer node per wave, run with the device's two queues (the nodes
// overlap) against one queue (they take turns); then one scheduler over two
// such devices against one. All in the same run, with wall and CPU time per
// wave.
//
// Per wave: node/compute writes a pattern over `work_kib` KiB with the
// write_pattern kernel; node/upload copies `work_kib` KiB between two
// resources of its own. Each node's list first holds its queue for
// `pass_us` (a host function that sleeps: the device busy with the pass,
// without taking a CPU core from the encoders, as a GPU would). Neither node
// runs after the other, so with two queues a wave's segments run at once and
// the wave ends with a join on the compute queue; with one queue the wave is
// one submission and the passes take turns. Two lanes per device, four waves
// submitted per device; a thread_pool of 2 threads runs the encoders.
//
// Device: the null device, one worker thread per queue (or one for both),
// no latency of its own. With two devices, each has two lanes and two
// queues, and waves go to whichever device's lane frees first.
//
//   ferrum_bench_queues [waves] [repeats]     # defaults 200 3
#include "bench_driver.hpp"
#include "bench_plan.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/gpu/builtin_kernels.hpp"
#include "ferrum/gpu/null_device.hpp"
#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/thread_pool.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
using ferrum::bench::process_cpu_us;

constexpr std::uint64_t work_kib = 256;
constexpr auto pass = std::chrono::microseconds(1000);

// Node 0 on the compute queue, node 1 on the transfer queue, independent;
// node 0 lists "res/image", node 1 "res/source" and "res/target".
ferrum::plan queue_plan() {
  using ferrum::bench::make_id;
  ferrum::plan p = ferrum::bench::binding_plan(2, 2, 64);
  p.format = ferrum::plan_format::v2;
  p.nodes[0].id = make_id<ferrum::node_id>("node/compute");
  p.nodes[1].id = make_id<ferrum::node_id>("node/upload");
  p.nodes[1].queue = ferrum::queue_kind::transfer;
  p.resources[0].node = p.nodes[0].id;
  p.resources[1].node = p.nodes[1].id;
  const auto pool = make_id<ferrum::pool_id>("pool/work");
  for (const char* name : {"res/image", "res/source", "res/target"}) {
    ferrum::resource_descriptor r = p.resources[0];
    r.id = make_id<ferrum::resource_id>(name);
    r.pool = pool;
    r.kind = ferrum::allocation_kind::workspace;
    r.node.reset();
    r.demand = ferrum::resource_demand::fixed(work_kib << 10);
    r.alignment = 256;
    r.usage = ferrum::buffer_usage::storage;
    r.element = ferrum::element_type::u32;
    p.resources.push_back(r);
  }
  p.nodes[0].resources.push_back(make_id<ferrum::resource_id>("res/image"));
  p.nodes[1].resources.push_back(make_id<ferrum::resource_id>("res/source"));
  p.nodes[1].resources.push_back(make_id<ferrum::resource_id>("res/target"));
  p.buckets[0].budgets.push_back({pool, 0, std::uint64_t{1} << 30});
  return p;
}

struct queue_encoder {
  const std::vector<std::unique_ptr<ferrum::gpu::null_device>>* devices;
  const std::vector<std::unique_ptr<ferrum::gpu::kernel>>* writers;

  // The kernel made on the device whose lane the wave holds.
  [[nodiscard]] const ferrum::gpu::kernel& writer(const ferrum::gpu::device& on) const {
    for (std::size_t d = 0; d < devices->size(); ++d)
      if ((*devices)[d].get() == &on) return *(*writers)[d];
    throw std::logic_error("a list of an unknown device");
  }

  static void busy(void*) noexcept { std::this_thread::sleep_for(pass); }

  void operator()(const ferrum::encode_context& c) const {
    c.commands.host({&busy, nullptr}).value();
    if (c.node_index == 0) {
      const std::array<std::uint32_t, 1> seed{static_cast<std::uint32_t>(c.wave)};
      c.commands.dispatch(writer(c.commands.device()), c.resource("res/image")->range, {}, seed).value();
    } else {
      c.commands.copy(c.resource("res/source")->range, c.resource("res/target")->range).value();
    }
  }
};

struct run_result {
  double wall_us_per_wave = 0;
  double cpu_us_per_wave = 0;
  std::size_t failed = 0;
  std::uint64_t submissions = 0;
};

// Every queue's submissions on every device.
std::uint64_t submissions(const std::vector<std::unique_ptr<ferrum::gpu::null_device>>& devices) {
  std::uint64_t total = 0;
  for (const auto& d : devices)
    for (std::size_t q = 0; q < d->queue_count(); ++q) total += d->queue_at(q).last_submitted();
  return total;
}

run_result run(std::size_t queues, std::size_t device_count, std::size_t waves) {
  ferrum::gpu::null_device_options options;
  options.queues = queues;
  std::vector<std::unique_ptr<ferrum::gpu::null_device>> devices;
  std::vector<ferrum::gpu::device*> raw;
  for (std::size_t d = 0; d < device_count; ++d) {
    devices.push_back(ferrum::gpu::null_device::create(options).value());
    raw.push_back(devices.back().get());
  }
  const ferrum::plan p = queue_plan();
  auto program = std::make_shared<const ferrum::compiled_program>(ferrum::compile(p).value());
  // A kernel per device: each node's list runs on its lane's device.
  std::vector<std::unique_ptr<ferrum::gpu::kernel>> writers;
  for (const auto& d : devices) writers.push_back(d->create_kernel(ferrum::gpu::builtin::write_pattern()).value());
  queue_encoder encode{&devices, &writers};
  asio::thread_pool pool(2);
  run_result result;
  {
    auto s = ferrum::scheduler::create(program, raw, pool.get_executor(), {.encoder_tasks = 2}).value();
    ferrum::bench::wave_driver driver(*s, pool, encode);
    const std::size_t window = 4 * device_count;
    driver.run(8 * device_count, window);
    const std::uint64_t before = submissions(devices);
    const double cpu = process_cpu_us();
    const double us = driver.run(waves, window);
    result.cpu_us_per_wave = (process_cpu_us() - cpu) / static_cast<double>(waves);
    result.wall_us_per_wave = us / static_cast<double>(waves);
    result.failed = driver.failures();
    result.submissions = submissions(devices) - before;
  }
  pool.join();
  return result;
}

// The best of `repeats` runs, and the failures over all of them.
run_result best_of(int repeats, std::size_t queues, std::size_t devices, std::size_t waves, std::size_t& failed) {
  run_result best;
  for (int r = 0; r < repeats; ++r) {
    const run_result got = run(queues, devices, waves);
    failed += got.failed;
    if (best.wall_us_per_wave == 0 || got.wall_us_per_wave < best.wall_us_per_wave) best = got;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const auto args = ferrum::bench::parse_args(argc, argv, {200, 3});
  if (!args) return 2;
  std::printf(
      "queues: per wave a compute node (a %lld us pass, then write_pattern over %llu KiB) and an\n"
      "independent transfer node (a %lld us pass, then a copy of %llu KiB); null device; 2 lanes\n"
      "and 4 waves submitted per device; %zu waves after warm-up, best of %d (gain: over 1 queue,\n"
      "then over 1 device)\n\n",
      static_cast<long long>(pass.count()), static_cast<unsigned long long>(work_kib),
      static_cast<long long>(pass.count()), static_cast<unsigned long long>(work_kib), args->waves, args->repeats);
  std::printf("%7s | %12s | %11s | %7s | %12s | %s\n", "queues", "wall us/wave", "cpu us/wave", "gain", "submissions",
              "failed");
  const auto row = [&](std::size_t count, const run_result& best, double baseline, std::size_t failed) {
    std::printf("%7zu | %12.1f | %11.1f | %6.2fx | %12.2f | %zu\n", count, best.wall_us_per_wave, best.cpu_us_per_wave,
                baseline / best.wall_us_per_wave,
                static_cast<double>(best.submissions) / static_cast<double>(args->waves), failed);
    std::fflush(stdout);
  };
  double one_queue = 0;
  for (const std::size_t queues : {std::size_t{1}, std::size_t{2}}) {
    std::size_t failed = 0;
    const run_result best = best_of(args->repeats, queues, 1, args->waves, failed);
    if (queues == 1) one_queue = best.wall_us_per_wave;
    row(queues, best, one_queue, failed);
  }
  std::printf("\n%7s | %12s | %11s | %7s | %12s | %s\n", "devices", "wall us/wave", "cpu us/wave", "gain",
              "submissions", "failed");
  double one_device = 0;
  for (const std::size_t devices : {std::size_t{1}, std::size_t{2}}) {
    std::size_t failed = 0;
    const run_result best = best_of(args->repeats, 2, devices, args->waves, failed);
    if (devices == 1) one_device = best.wall_us_per_wave;
    row(devices, best, one_device, failed);
  }
  return 0;
}
