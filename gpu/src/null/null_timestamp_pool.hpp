// null_timestamp_pool.hpp (private) — a timestamp pool on the null device:
// the ticks of the worker's steady_clock.
#pragma once

#include "ferrum/gpu/timestamp_pool.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ferrum::gpu::null_detail {

// The worker's clock is the GPU's: a slot holds the steady_clock ticks at
// which the worker reached its timestamp command (0: never written). The
// worker writes a slot before it advances the timeline; a reader reads it
// after seeing that value reached, which orders the two.
class null_timestamp_pool final : public timestamp_pool {
 public:
  null_timestamp_pool(const gpu::device& owner, std::uint32_t size) : timestamp_pool(owner, size), ticks_(size, 0) {}

  void write(std::uint32_t slot) const noexcept {
    ticks_[slot] = std::chrono::steady_clock::now().time_since_epoch().count();
  }

 protected:
  result<void> do_read(std::uint32_t first, std::span<time_point> out) const override {
    for (std::size_t i = 0; i < out.size(); ++i) {
      const std::chrono::steady_clock::rep ticks = ticks_[first + i];
      if (ticks == 0)
        return make_error(errc::timestamp_unavailable, "slot " + std::to_string(first + i) + " was never written");
      out[i] = time_point(std::chrono::steady_clock::duration(ticks));
    }
    return {};
  }

 private:
  // Written by the worker through a const pool: the GPU writes what lists
  // name, as it writes arenas.
  mutable std::vector<std::chrono::steady_clock::rep> ticks_;
};

}  // namespace ferrum::gpu::null_detail
