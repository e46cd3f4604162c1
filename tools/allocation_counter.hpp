// tools/allocation_counter.hpp — how many times the `ferrum` process has
// called the global operator new, counted by the replacement in
// allocation_counter.cpp (every thread, every library linked in).
//
//   const std::uint64_t before = ferrum::tools::allocations_so_far();
//   run_some_waves();
//   const std::uint64_t during = ferrum::tools::allocations_so_far() - before;
#pragma once

#include <cstdint>

namespace ferrum::tools {

// Calls of any form of operator new (and new[]) since the process started.
[[nodiscard]] std::uint64_t allocations_so_far() noexcept;

}  // namespace ferrum::tools
