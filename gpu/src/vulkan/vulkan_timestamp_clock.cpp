#include "vulkan/vulkan_timestamp_clock.hpp"

#include "vulkan/vk_result.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

namespace ferrum::gpu {
namespace {

constexpr auto recalibration_interval = std::chrono::seconds(1);

bool has_extension(VkPhysicalDevice physical, const char* name) {
  std::uint32_t count = 0;
  if (vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> extensions(count);
  if (vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, extensions.data()) != VK_SUCCESS) return false;
  extensions.resize(count);
  return std::any_of(extensions.begin(), extensions.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

}  // namespace

bool calibrates_monotonic(VkInstance instance, VkPhysicalDevice physical) {
  if (!has_extension(physical, calibrated_timestamps_extension)) return false;
  // A physical-device command of a device extension: reached through the
  // instance.
  const auto domains_of = reinterpret_cast<PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT>(
      vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT"));
  if (domains_of == nullptr) return false;
  std::uint32_t count = 0;
  if (domains_of(physical, &count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkTimeDomainEXT> domains(count);
  if (domains_of(physical, &count, domains.data()) != VK_SUCCESS) return false;
  domains.resize(count);
  const auto offers = [&](VkTimeDomainEXT d) { return std::find(domains.begin(), domains.end(), d) != domains.end(); };
  return offers(VK_TIME_DOMAIN_DEVICE_EXT) && offers(VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT);
}

vulkan_timestamp_clock::vulkan_timestamp_clock(VkDevice device, std::uint32_t valid_bits, float period_ns,
                                               bool calibrated) noexcept
    : device_(device),
      mask_(valid_bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << valid_bits) - 1),
      period_ns_(period_ns) {
  if (calibrated)
    calibrate_ =
        reinterpret_cast<PFN_vkGetCalibratedTimestampsEXT>(vkGetDeviceProcAddr(device, "vkGetCalibratedTimestampsEXT"));
}

result<std::chrono::nanoseconds> vulkan_timestamp_clock::recalibrate() {
  const std::lock_guard lock(mutex_);
  return recalibrate_locked();
}

result<std::chrono::nanoseconds> vulkan_timestamp_clock::recalibrate_locked() {
  std::array<VkCalibratedTimestampInfoEXT, 2> infos{};
  for (auto& info : infos) info.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT;
  infos[0].timeDomain = VK_TIME_DOMAIN_DEVICE_EXT;
  infos[1].timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
  std::array<std::uint64_t, 2> values{};
  std::uint64_t deviation = 0;
  if (VkResult r =
          calibrate_(device_, static_cast<std::uint32_t>(infos.size()), infos.data(), values.data(), &deviation);
      r != VK_SUCCESS)
    return make_vk_error(r, "vkGetCalibratedTimestampsEXT");
  // CLOCK_MONOTONIC values are nanoseconds, as steady_clock's ticks are.
  anchor_locked(values[0], time_point(std::chrono::nanoseconds(values[1])));
  return std::chrono::nanoseconds(deviation);
}

void vulkan_timestamp_clock::anchor(std::uint64_t ticks, time_point at) noexcept {
  const std::lock_guard lock(mutex_);
  anchor_locked(ticks, at);
}

void vulkan_timestamp_clock::anchor_locked(std::uint64_t ticks, time_point at) noexcept {
  anchor_ticks_ = ticks & mask_;
  anchor_at_ = at;
  anchored_ = std::chrono::steady_clock::now();
}

void vulkan_timestamp_clock::convert(std::span<const std::uint64_t> ticks, std::span<time_point> out) {
  const std::lock_guard lock(mutex_);
  if (calibrate_ != nullptr && std::chrono::steady_clock::now() - anchored_ > recalibration_interval)
    (void)recalibrate_locked();  // on failure the previous anchor still converts
  const bool wraps = mask_ != ~std::uint64_t{0};
  for (std::size_t i = 0; i < ticks.size(); ++i) {
    // The difference modulo 2^valid_bits, read as signed: timestamps written
    // before the anchor convert to times before it.
    const std::uint64_t delta = ((ticks[i] & mask_) - anchor_ticks_) & mask_;
    double signed_delta = static_cast<double>(static_cast<std::int64_t>(delta));
    if (wraps) signed_delta = delta > mask_ / 2 ? -static_cast<double>(mask_ - delta + 1) : static_cast<double>(delta);
    const auto offset = std::chrono::nanoseconds(std::llround(signed_delta * period_ns_));
    out[i] = anchor_at_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(offset);
  }
}

}  // namespace ferrum::gpu
