// ferrum/gpu/timestamp_pool.hpp — slots the GPU writes its clock into, read
// back as the CPU's std::chrono::steady_clock time points.
//
// A pool is made once, on the cold path (device::create_timestamp_pool), with
// a fixed number of slots. A command list records `timestamp(pool, slot)`,
// which writes the GPU's time into the slot once every command before it in
// submission order has completed; once that submission's timeline value is
// reached, `read` converts the slots to steady_clock, so GPU times line up
// with the CPU's own readings of steady_clock.
//
//   auto timestamps = device.create_timestamp_pool(2).value();
//   list.begin();
//   list.timestamp(*timestamps, 0);
//   list.dispatch(kernel, range, {}, {});
//   list.timestamp(*timestamps, 1);
//   list.end();
//   ... submit, await the value ...
//   std::array<std::chrono::steady_clock::time_point, 2> t;
//   timestamps->read(0, t).value();  // t[1] - t[0]: the dispatch's GPU time
//
// How GPU times become steady_clock times is the device's (timestamp_clock):
// the null device writes steady_clock itself; the Vulkan device
// converts its ticks with a calibration, VK_EXT_calibrated_timestamps where
// the device has it (CLOCK_MONOTONIC, steady_clock's clock on Linux), else a
// one-time calibration around a submission of one timestamp.
//
// Thread safety: one thread at a time reads a pool (a scheduler lane's belongs
// to the wave holding the lane); lists may record into different slots of it
// concurrently.
#pragma once

#include "ferrum/error.hpp"

#include <chrono>
#include <cstdint>
#include <span>
#include <string_view>

namespace ferrum::gpu {

class device;

// How a device's GPU times reach steady_clock.
struct timestamp_clock {
  // Whether the device writes timestamps on its queue at all; when not,
  // `calibration` says why.
  bool supported = false;
  // "steady_clock" (the null device), "VK_EXT_calibrated_timestamps" or
  // "one-time calibration" (Vulkan).
  std::string_view calibration;
  // How far a converted time may lie from the moment the GPU wrote it: the
  // calibration's own uncertainty (0 for the null device; the maximum
  // deviation Vulkan reports; half the round trip of a one-time
  // calibration). Known once the first pool has been made.
  std::chrono::nanoseconds uncertainty{0};
};

class timestamp_pool {
 public:
  using time_point = std::chrono::steady_clock::time_point;

  timestamp_pool(const timestamp_pool&) = delete;
  timestamp_pool& operator=(const timestamp_pool&) = delete;
  // The owner destroys a pool only once the submissions that write it are
  // complete.
  virtual ~timestamp_pool() = default;

  [[nodiscard]] std::uint32_t size() const noexcept { return size_; }
  [[nodiscard]] const gpu::device& device() const noexcept { return *device_; }

  // Reads slots [first, first + out.size()) into `out`. Each must have been
  // written by a submission whose timeline value is reached. Errors:
  // range_out_of_bounds, timestamp_unavailable (a slot no such submission
  // wrote), device_lost, vulkan_error.
  [[nodiscard]] result<void> read(std::uint32_t first, std::span<time_point> out) const;

 protected:
  timestamp_pool(const gpu::device& owner, std::uint32_t size) noexcept : device_(&owner), size_(size) {}

  // The device part, called once the range was checked.
  virtual result<void> do_read(std::uint32_t first, std::span<time_point> out) const = 0;

 private:
  const gpu::device* device_;
  std::uint32_t size_;
};

}  // namespace ferrum::gpu
