// wave_gpu_time.cpp — a wave's GPU time per node (scheduler_options::
// gpu_timestamps): each node's list stamped before and after its commands,
// the lane's timestamp pool read once the fence was reached (docs/design.md,
// "GPU time").
#include "wave.hpp"

#include <algorithm>

namespace ferrum::detail {

result<void> wave::stamp_node(gpu::command_list& list, std::size_t node, bool after) const {
  const gpu::timestamp_pool* stamps = held_->stamps.get();
  if (stamps == nullptr) return {};
  return list.timestamp(*stamps, static_cast<std::uint32_t>(2 * node + (after ? 1 : 0)));
}

void wave::read_gpu_times() noexcept {
  const gpu::timestamp_pool* stamps = held_->stamps.get();
  // A failed read (the device lost since the fence) leaves the wave without
  // GPU times rather than with wrong ones.
  if (stamps == nullptr || !stamps->read(0, gpu_stamps_)) return;
  for (std::size_t node = 0; node < gpu_nodes_.size(); ++node)
    gpu_nodes_[node] = {gpu_stamps_[2 * node], gpu_stamps_[2 * node + 1]};
  gpu_timed_.store(true, std::memory_order_release);
}

gpu_interval wave::gpu_span() const noexcept {
  gpu_interval whole = gpu_nodes_.front();
  for (const gpu_interval& n : gpu_nodes_) {
    whole.begin = std::min(whole.begin, n.begin);
    whole.end = std::max(whole.end, n.end);
  }
  return whole;
}

}  // namespace ferrum::detail
