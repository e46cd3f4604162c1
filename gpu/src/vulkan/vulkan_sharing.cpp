// vulkan_sharing.cpp — the queues an engine's resource may be used on
// (vulkan_sharing.hpp).
#include "vulkan/vulkan_sharing.hpp"

#include <bit>
#include <string>

namespace ferrum::gpu {

result<std::uint32_t> shared_queue_kinds(const vulkan_sharing& sharing, const queue_families& families,
                                         std::string_view what) {
  const auto refuse = [&](const std::string& why) {
    return make_error(errc::invalid_device_option, std::string(what) + why);
  };
  const std::string has = "; the device has " + std::to_string(families.count) + " queue families";
  std::uint64_t covered = 0;
  if (sharing.mode == VK_SHARING_MODE_CONCURRENT) {
    const std::uint64_t known = families.count >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << families.count) - 1;
    if (const std::uint64_t unknown = sharing.families & ~known; unknown != 0) {
      const int first = std::countr_zero(unknown);  // 63: that or more (vulkan_sharing::of)
      return refuse("VK_SHARING_MODE_CONCURRENT over queue family " + std::to_string(first) +
                    (first == 63 ? " or more" : "") + has);
    }
    if (std::popcount(sharing.families) < 2)
      return refuse("VK_SHARING_MODE_CONCURRENT over " + std::to_string(std::popcount(sharing.families)) +
                    " queue families; Vulkan takes two or more");
    covered = sharing.families;
  } else if (sharing.mode == VK_SHARING_MODE_EXCLUSIVE) {
    const std::uint32_t owner =
        sharing.owner == VK_QUEUE_FAMILY_IGNORED ? families.of_kind[index_of(queue_kind::compute)] : sharing.owner;
    if (owner >= families.count) return refuse("owned by queue family " + std::to_string(owner) + has);
    covered = std::uint64_t{1} << owner;
  } else {
    return refuse("VkSharingMode " + std::to_string(static_cast<int>(sharing.mode)) +
                  " is neither EXCLUSIVE nor CONCURRENT");
  }
  std::uint32_t kinds = 0;
  for (queue_kind kind : queue_kinds) {
    const std::uint32_t family = families.of_kind[index_of(kind)];
    if (family < 64 && (covered & (std::uint64_t{1} << family)) != 0) kinds |= queue_bit(kind);
  }
  return kinds;
}

queue_families queue_families_of(const vulkan_native_handles& d) {
  queue_families out;
  out.of_kind[index_of(queue_kind::compute)] = d.queue_family;
  out.of_kind[index_of(queue_kind::transfer)] = d.transfer_queue_family;
  out.of_kind[index_of(queue_kind::async_compute)] = d.async_queue_family;
  vkGetPhysicalDeviceQueueFamilyProperties(d.physical_device, &out.count, nullptr);
  return out;
}

}  // namespace ferrum::gpu
