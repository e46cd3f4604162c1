#include "fence_clock.hpp"

#include <bit>

namespace ferrum::tools {

fence_clock::fence_clock(std::size_t capacity)
    : entries_(std::make_unique<entry[]>(std::bit_ceil(std::max<std::size_t>(capacity, 1)))),
      mask_(std::bit_ceil(std::max<std::size_t>(capacity, 1)) - 1) {}

void fence_clock::entry::operator()() noexcept {
  at.store(std::chrono::steady_clock::now().time_since_epoch().count(), std::memory_order_relaxed);
  // Release: a reader that sees its wave here sees the time stored above.
  recorded.store(armed.load(std::memory_order_relaxed), std::memory_order_release);
}

gpu::host_function fence_clock::arm(std::uint64_t wave) noexcept {
  entry& e = entries_[wave & mask_];
  // Relaxed: the submission that carries the host function orders it (the
  // queue's lock) before the worker runs it.
  e.armed.store(wave, std::memory_order_relaxed);
  return gpu::host_call(e);
}

std::optional<std::chrono::steady_clock::time_point> fence_clock::finished_at(std::uint64_t wave) const noexcept {
  const entry& e = entries_[wave & mask_];
  if (e.recorded.load(std::memory_order_acquire) != wave) return std::nullopt;
  return std::chrono::steady_clock::time_point(
      std::chrono::steady_clock::duration(e.at.load(std::memory_order_relaxed)));
}

}  // namespace ferrum::tools
