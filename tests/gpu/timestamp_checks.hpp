// What every device's timestamps must show (ferrum/gpu/timestamp_pool.hpp),
// run on the null device and on Vulkan: stamps in submission order, each
// inside the CPU's view of its submission, and fresh ones when a recording is
// submitted again.
#pragma once

#include "test_namespace.hpp"

#include "gpu_test_support.hpp"

#include "ferrum/gpu/builtin_kernels.hpp"
#include "ferrum/gpu/device.hpp"

#include <array>
#include <chrono>
#include <string>

namespace ferrum::test {

inline std::string micros_text(std::chrono::steady_clock::duration d) {
  return std::to_string(std::chrono::duration<double, std::micro>(d).count()) + " us";
}

// Two lists of one submission, each stamped before and after its work (a
// kernel over 1 MiB, then a fill); then the first list submitted again.
inline void check_timed_submissions(ferrum::gpu::device& device) {
  using clock = std::chrono::steady_clock;
  auto arena = require(device.create_arena(1 << 20));
  auto kernel = require(device.create_kernel(ferrum::gpu::builtin::write_pattern()));
  auto stamps = require(device.create_timestamp_pool(4));
  CHECK(stamps->size() == 4);
  auto first = require(device.create_command_list());
  auto second = require(device.create_command_list());
  require(first->begin());
  require(first->timestamp(*stamps, 0));
  require(first->dispatch(*kernel, arena->whole(), {}, std::array<std::uint32_t, 1>{7}));
  require(first->timestamp(*stamps, 1));
  require(first->end());
  CHECK(first->size() == 1);  // a timestamp is not counted as work
  require(second->begin());
  require(second->timestamp(*stamps, 2));
  require(second->fill(arena->range(0, 4096), 5u));
  require(second->timestamp(*stamps, 3));
  require(second->end());

  // The clock's uncertainty is known once a pool exists.
  const auto tolerance = device.timestamps().uncertainty;
  INFO("calibration " << device.timestamps().calibration << ", uncertainty " << micros_text(tolerance));
  const clock::time_point before = clock::now();
  ferrum::gpu::command_list* lists[] = {first.get(), second.get()};
  const std::uint64_t value = device.queue().last_submitted() + 1;
  require(device.queue().submit(lists, value));
  require_reached(device.queue().timeline(), value);
  const clock::time_point after = clock::now();

  std::array<clock::time_point, 4> t{};
  require(stamps->read(0, t));
  for (std::size_t i = 0; i < t.size(); ++i) {
    INFO("stamp " << i << ": " << micros_text(t[i] - before) << " after submit; the fence seen after "
                  << micros_text(after - before));
    CHECK(t[i] >= before - tolerance);
    CHECK(t[i] <= after + tolerance);
    if (i > 0) CHECK(t[i - 1] <= t[i]);
  }

  // Submitted again as recorded: the stamps are written afresh, later.
  const clock::time_point again = clock::now();
  const std::uint64_t replayed = resubmit(device, *first);
  require_reached(device.queue().timeline(), replayed);
  std::array<clock::time_point, 2> u{};
  require(stamps->read(0, u));
  CHECK(u[0] >= again - tolerance);
  CHECK(u[0] >= t[3]);
  CHECK(u[0] <= u[1]);
}

}  // namespace ferrum::test
