// null_kernel.hpp (private) — a kernel on the null device: its C++ (CPU)
// form, which the queue's worker runs over the arena bytes.
#pragma once

#include "ferrum/gpu/kernel.hpp"

namespace ferrum::gpu::null_detail {

class null_kernel final : public kernel {
 public:
  null_kernel(const gpu::device& owner, const kernel_source& source) : kernel(owner, source), cpu_(source.cpu) {}
  [[nodiscard]] cpu_kernel cpu() const noexcept { return cpu_; }

 private:
  cpu_kernel cpu_;
};

}  // namespace ferrum::gpu::null_detail
