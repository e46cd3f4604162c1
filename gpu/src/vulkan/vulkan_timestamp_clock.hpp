// vulkan_timestamp_clock.hpp — converting a Vulkan device's timestamp ticks
// to std::chrono::steady_clock.
//
// An anchor pairs a tick count with the steady_clock time it was read at; a
// later tick count converts as anchor time + (ticks - anchor ticks) *
// timestampPeriod, the tick difference taken modulo 2^timestampValidBits
// (counters wrap). Two ways to anchor:
// * VK_EXT_calibrated_timestamps: vkGetCalibratedTimestampsEXT reads the
//   device's clock and CLOCK_MONOTONIC together — steady_clock's clock on
//   Linux (libstdc++ and libc++ read it for steady_clock::now()). The anchor is
//   taken again when it is over a second old, so the two clocks' drift stays
//   within what they drift in a second.
// * one-time: the device anchors once from a submission of one timestamp,
//   bracketed by the CPU's clock (vulkan_device.cpp); drift is not corrected.
//
//   vulkan_timestamp_clock clock(device, 64, 1.0f, calibrated_timestamps);
//   clock.recalibrate().value();
//   clock.convert(ticks, times);   // spans of raw ticks and of steady_clock time points
#pragma once

#include "ferrum/error.hpp"

#include <vulkan/vulkan_core.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <span>

namespace ferrum::gpu {

// Whether `physical` offers VK_EXT_calibrated_timestamps with both the device
// and the CLOCK_MONOTONIC time domains.
[[nodiscard]] bool calibrates_monotonic(VkInstance instance, VkPhysicalDevice physical);

// The device extension's name, for vkCreateDevice.
inline constexpr const char* calibrated_timestamps_extension = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;

class vulkan_timestamp_clock {
 public:
  using time_point = std::chrono::steady_clock::time_point;

  // `calibrated`: the extension is enabled on `device` (its entry point is
  // looked up here; none found counts as not enabled).
  vulkan_timestamp_clock(VkDevice device, std::uint32_t valid_bits, float period_ns, bool calibrated) noexcept;

  [[nodiscard]] bool calibrated() const noexcept { return calibrate_ != nullptr; }

  // Anchors from vkGetCalibratedTimestampsEXT (calibrated() only); returns
  // the maximum deviation it reports. Errors: vulkan_error, device_lost.
  [[nodiscard]] result<std::chrono::nanoseconds> recalibrate();

  // Sets the anchor: the device's clock read `ticks` at `at` (one-time).
  void anchor(std::uint64_t ticks, time_point at) noexcept;

  // `ticks[i]` on steady_clock into `out[i]` (same sizes), under one lock;
  // with calibrated(), recalibrates first when the anchor is over a second
  // old (a failure keeps the old anchor).
  void convert(std::span<const std::uint64_t> ticks, std::span<time_point> out);

 private:
  void anchor_locked(std::uint64_t ticks, time_point at) noexcept;
  [[nodiscard]] result<std::chrono::nanoseconds> recalibrate_locked();

  VkDevice device_;
  std::uint64_t mask_;
  double period_ns_;
  PFN_vkGetCalibratedTimestampsEXT calibrate_ = nullptr;

  std::mutex mutex_;
  std::uint64_t anchor_ticks_ = 0;
  time_point anchor_at_{};
  time_point anchored_{};  // when the anchor was taken (steady_clock)
};

}  // namespace ferrum::gpu
