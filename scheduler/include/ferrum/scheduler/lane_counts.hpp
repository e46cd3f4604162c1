// ferrum/scheduler/lane_counts.hpp — a lane pool's lanes by state
// (lane_pool::counts).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ferrum {

// A lane pool's lanes by state, and its waiters.
struct lane_counts {
  // The lanes the pool may have (the program's lanes), and those that exist
  // (made, not trimmed); `bytes`: their memory (buffers and image memory).
  std::uint32_t capacity = 0;
  std::uint32_t lanes = 0;
  std::uint32_t making = 0;  // being made for a waiter
  std::uint64_t bytes = 0;
  std::uint32_t free = 0;
  std::uint32_t in_flight = 0;
  std::uint32_t quarantined = 0;
  std::size_t waiting = 0;
};

}  // namespace ferrum
