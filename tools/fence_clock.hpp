// tools/fence_clock.hpp — when the (null) device finished each wave's
// submission, read from steady_clock by a host function at the end of the
// submission, kept per wave id in a ring.
//
//   ferrum::tools::fence_clock completion_times(4096);
//   list.host(completion_times.arm(wave));  // recorded last in the wave
//   ... once the wave's fence is reached:
//   if (auto at = completion_times.finished_at(wave)) wake = fence_seen - *at;
//
// Per wave id, not per lane: a wave whose fence timed out leaves its lane in
// quarantine, but its submission still runs later and records its time then;
// keyed by lane, that late time would land on the lane's next wave. A ring
// entry is reused only `capacity` waves later, and each entry remembers which
// wave recorded it, so a time is never read as another wave's.
//
// Thread safety: arm and finished_at from any thread; the host functions run
// on the device's worker.
#pragma once

#include "ferrum/gpu/command_list.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace ferrum::tools {

class fence_clock {
 public:
  // A ring of at least `capacity` entries (a power of two).
  explicit fence_clock(std::size_t capacity);

  // The host function that records when wave `wave`'s submission finished;
  // record it last in the wave's last command list. The ring must outlive
  // the device's work.
  [[nodiscard]] gpu::host_function arm(std::uint64_t wave) noexcept;

  // When wave `wave`'s host function ran; none when it has not run (or its
  // entry went to a later wave).
  [[nodiscard]] std::optional<std::chrono::steady_clock::time_point> finished_at(std::uint64_t wave) const noexcept;

 private:
  struct entry {
    std::atomic<std::uint64_t> armed{0};
    std::atomic<std::uint64_t> recorded{0};
    std::atomic<std::chrono::steady_clock::rep> at{0};
    void operator()() noexcept;
  };

  std::unique_ptr<entry[]> entries_;
  std::size_t mask_;
};

}  // namespace ferrum::tools
