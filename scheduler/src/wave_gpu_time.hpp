// wave_gpu_time.hpp (private) — a wave's GPU time per node
// (scheduler_options::gpu_timestamps): each node's list writes a timestamp
// before and after its commands into its lane's timestamp pool, which the
// wave reads once its fence was reached (docs/design.md, "GPU time").
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/scheduler/held_lane.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <vector>

namespace ferrum::detail {

class wave_gpu_time {
 public:
  // Room for `nodes` nodes' times; 0 when the scheduler has no GPU timestamps.
  explicit wave_gpu_time(std::size_t nodes) : timestamps_(2 * nodes), nodes_(nodes) {}

  // Room for `nodes` nodes (a new program; 0: none).
  void resize(std::size_t nodes) {
    timestamps_.resize(2 * nodes);
    nodes_.resize(nodes);
  }

  // For a new wave: no times read.
  void reset() noexcept { read_.store(false, std::memory_order_relaxed); }
  // Node `node`'s timestamp before (slot 2n) or after (2n + 1) its commands,
  // into its list; nothing when the lane has no timestamp pool.
  [[nodiscard]] static result<void> write(const lane_contents& l, gpu::command_list& list, std::size_t node,
                                          bool after) {
    if (l.timestamps() == nullptr) return {};
    return list.timestamp(*l.timestamps(), static_cast<std::uint32_t>(2 * node + (after ? 1 : 0)));
  }
  // Once the fence was reached: the nodes' times from `l`'s timestamp pool.
  // A failed read (the device lost since the fence) leaves the wave without
  // GPU times rather than with wrong ones.
  void read(const lane_contents& l) noexcept;
  // The times read, into `r` (gpu_nodes, gpu); nothing when none were.
  // Any thread: a completion posted early by a cancellation reads them
  // while the wave may still be reading.
  void report(wave_report& r) const noexcept;

 private:
  // Node n's begin and end at 2n, 2n + 1; the same as intervals.
  std::vector<std::chrono::steady_clock::time_point> timestamps_;
  std::vector<gpu_interval> nodes_;
  // Released once the intervals are written.
  std::atomic<bool> read_{false};
};

}  // namespace ferrum::detail
