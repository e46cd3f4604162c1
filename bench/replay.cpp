// replay — a wave's cost with its command lists recorded afresh every wave,
// and with replay (scheduler_options::replay: each lane's lists recorded once
// and submitted again), as the commands per node grow. Same run, same plan.
//
// Per wave: 16 nodes on the null device (no latency), each owning a slot of
// `commands` x 16 bytes. Recording, a node's encoder records `commands`
// fills of 16 bytes each; replaying, it records nothing. Either way it
// writes the wave's id into the first word of its slot (its binding bytes),
// and the device runs every fill of every wave. 2 lanes, 4 waves in flight,
// a thread_pool of 2, encoder_tasks 2.
//
//   ferrum_bench_replay [waves] [repeats]     # defaults 2000 5
#include "bench_driver.hpp"
#include "bench_plan.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/gpu/null_device.hpp"
#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/thread_pool.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace {

namespace asio = boost::asio;

constexpr std::size_t nodes = 16;
constexpr std::uint32_t lanes = 2;

struct fill_encoder {
  std::size_t commands;

  void operator()(const ferrum::encode_context& c) const {
    const auto wave = static_cast<std::uint32_t>(c.wave);
    std::memcpy(c.binding->bytes().data(), &wave, sizeof wave);
    if (c.replay) return;
    for (std::size_t i = 0; i < commands; ++i)
      c.commands.fill(c.slot.arena->range(c.slot.offset + 16 * i, 16), wave).value();
  }
};

// µs per wave over `waves` waves after a warm-up; failures counted.
double per_wave(std::size_t commands, bool replay, std::size_t waves, std::size_t& failures) {
  const ferrum::plan p = ferrum::bench::binding_plan(nodes, lanes, 16 * commands);
  auto program = std::make_shared<const ferrum::compiled_program>(ferrum::compile(p).value());
  auto device = ferrum::gpu::null_device::create({}).value();
  asio::thread_pool pool(2);
  double us = 0;
  {
    auto s = ferrum::scheduler::create(program, *device, pool.get_executor(), {.encoder_tasks = 2, .replay = replay})
                 .value();
    fill_encoder encoder{commands};
    ferrum::bench::wave_driver driver(*s, pool, encoder);
    driver.run(200, 2 * lanes);
    us = driver.run(waves, 2 * lanes) / static_cast<double>(waves);
    failures += driver.failures();
  }
  pool.join();
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  const auto args = ferrum::bench::parse_args(argc, argv, {2000, 5});
  if (!args) return 2;
  const std::size_t waves = args->waves;
  const int repeats = args->repeats;
  std::printf("replay: %zu nodes, null device, %zu waves after 200 warm-up, best of %d (runs alternating)\n\n", nodes,
              waves, repeats);
  std::printf("%14s | %14s %14s | %8s\n", "commands/node", "record us/w", "replay us/w", "replay/record");
  std::size_t failures = 0;
  for (const std::size_t commands : {std::size_t{1}, std::size_t{16}, std::size_t{128}}) {
    std::vector<double> record;
    std::vector<double> replay;
    for (int r = 0; r < repeats; ++r) {
      record.push_back(per_wave(commands, false, waves, failures));
      replay.push_back(per_wave(commands, true, waves, failures));
    }
    const double a = *std::min_element(record.begin(), record.end());
    const double b = *std::min_element(replay.begin(), replay.end());
    std::printf("%14zu | %14.2f %14.2f | %8.2f\n", commands, a, b, b / a);
    std::fflush(stdout);
  }
  if (failures != 0) std::printf("\n%zu waves failed (figures above include them)\n", failures);
  return 0;
}
