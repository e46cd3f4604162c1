// wave_gpu_time.cpp — a wave's GPU time per node (wave_gpu_time.hpp).
#include "wave_gpu_time.hpp"

#include <algorithm>

namespace ferrum::detail {

void wave_gpu_time::read(const lane_contents& l) noexcept {
  if (l.timestamps() == nullptr || !l.timestamps()->read(0, timestamps_)) return;
  for (std::size_t node = 0; node < nodes_.size(); ++node)
    nodes_[node] = {timestamps_[2 * node], timestamps_[2 * node + 1]};
  read_.store(true, std::memory_order_release);
}

void wave_gpu_time::report(wave_report& r) const noexcept {
  if (!read_.load(std::memory_order_acquire)) return;
  r.gpu_nodes = nodes_;
  // From the first node's begin to the last one's end.
  gpu_interval whole = nodes_.front();
  for (const gpu_interval& n : nodes_) {
    whole.begin = std::min(whole.begin, n.begin);
    whole.end = std::max(whole.end, n.end);
  }
  r.gpu = whole;
}

}  // namespace ferrum::detail
