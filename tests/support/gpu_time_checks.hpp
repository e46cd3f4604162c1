// What a scheduler's GPU times must show (scheduler_options::gpu_timestamps),
// on any device: waves submitted together and collected with their GPU
// times copied out, and the checks of those times.
//
//   auto waves = gpu_time::run_waves(scheduler, encode, 10);
//   gpu_time::check_gpu_times(waves, nodes, device.timestamps().uncertainty);
#pragma once

#include "eventually.hpp"

#include "ferrum/scheduler/scheduler.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <vector>

namespace gpu_time {

using ferrum::gpu_interval;
using ferrum::wave_phase;

// A wave's outcome with its GPU times copied out inside the handler: the
// report's span is the wave's memory, valid only until the handler returns.
struct timed_wave {
  boost::system::error_code ec;
  ferrum::wave_report report;
  std::vector<gpu_interval> nodes;
};

// Submits `count` waves at once (lanes bound them) and collects them, in
// completion order.
template <class Encoder>
inline std::vector<timed_wave> run_waves(ferrum::scheduler& s, Encoder& encode, std::size_t count,
                                         const std::function<void()>& drive = {}) {
  std::mutex mutex;
  std::vector<timed_wave> waves;
  std::atomic<std::size_t> done{0};
  for (std::size_t i = 0; i < count; ++i) {
    s.async_submit({"step", {1, 1, 1}}, encode, [&](boost::system::error_code ec, ferrum::wave_report report) {
      const std::lock_guard lock(mutex);
      waves.push_back({ec, report, {report.gpu_nodes.begin(), report.gpu_nodes.end()}});
      done.fetch_add(1);
    });
  }
  if (drive) drive();
  REQUIRE(test_support::eventually([&] { return done.load() == count; }, std::chrono::seconds(20)));
  // Taken once more: the last handler may still be releasing it.
  const std::lock_guard lock(mutex);
  return waves;
}

// Per wave: one span per node, each begin <= end, nodes in node order without
// overlap, all between the end of encoding (the submission started after)
// and the fence's observation (give or take the device clock's
// `tolerance`); `gpu` the whole of them. Over all waves: the
// queue's spans never overlap.
inline void check_gpu_times(const std::vector<timed_wave>& waves, std::size_t nodes,
                            std::chrono::nanoseconds tolerance = {}) {
  std::vector<gpu_interval> all;
  for (const timed_wave& w : waves) {
    INFO("wave " << w.report.wave);
    REQUIRE_FALSE(w.ec);
    REQUIRE(w.nodes.size() == nodes);
    const auto encoded = *w.report.ended[static_cast<std::size_t>(wave_phase::encode)];
    const auto fenced = *w.report.ended[static_cast<std::size_t>(wave_phase::fence)];
    for (std::size_t n = 0; n < nodes; ++n) {
      CHECK(w.nodes[n].begin <= w.nodes[n].end);
      CHECK(w.nodes[n].begin >= encoded - tolerance);
      CHECK(w.nodes[n].end <= fenced + tolerance);
      if (n > 0) CHECK(w.nodes[n - 1].end <= w.nodes[n].begin);
    }
    REQUIRE(w.report.gpu.has_value());
    CHECK(w.report.gpu->begin == w.nodes.front().begin);
    CHECK(w.report.gpu->end == w.nodes.back().end);
    all.insert(all.end(), w.nodes.begin(), w.nodes.end());
  }
  std::sort(all.begin(), all.end(), [](const gpu_interval& a, const gpu_interval& b) { return a.begin < b.begin; });
  for (std::size_t i = 1; i < all.size(); ++i) CHECK(all[i - 1].end <= all[i].begin);
}

}  // namespace gpu_time
