#include "vulkan/vulkan_physical_device.hpp"

#include "vulkan/vk_result.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

namespace ferrum::gpu {
namespace {

// Whether `handle` offers the device extension `name` (false when the
// enumeration itself fails: the extension cannot be enabled then either).
// The Vulkan 1.3 features of a device of Vulkan 1.3 (which chaining them
// needs): dynamicRendering, synchronization2.
VkPhysicalDeviceVulkan13Features features13_of(VkPhysicalDevice handle) {
  VkPhysicalDeviceVulkan13Features features13{};
  features13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.pNext = &features13;
  vkGetPhysicalDeviceFeatures2(handle, &features);
  return features13;
}

bool offers_extension(VkPhysicalDevice handle, const char* name) {
  std::vector<VkExtensionProperties> extensions;
  for (;;) {
    std::uint32_t count = 0;
    if (vkEnumerateDeviceExtensionProperties(handle, nullptr, &count, nullptr) != VK_SUCCESS) return false;
    extensions.resize(count);
    const VkResult r = vkEnumerateDeviceExtensionProperties(handle, nullptr, &count, extensions.data());
    if (r == VK_INCOMPLETE) continue;
    if (r != VK_SUCCESS) return false;
    extensions.resize(count);
    break;
  }
  for (const VkExtensionProperties& e : extensions)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

// A device's suitability: the description, or what it lacks.
struct inspection {
  vulkan_physical_device device;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  std::string problem;  // empty when suitable
  errc problem_code = errc::ok;
};

// Checks one device. `family`, when given, is the queue family to use (an
// engine's); otherwise the first family with compute is chosen.
inspection inspect(VkPhysicalDevice handle, std::optional<std::uint32_t> family) {
  inspection out;
  out.device.handle = handle;

  VkPhysicalDeviceProperties basic{};
  vkGetPhysicalDeviceProperties(handle, &basic);
  out.device.name = basic.deviceName;
  out.type = basic.deviceType;
  const auto lacks = [&](errc code, std::string what) {
    out.problem = "device " + quote_text(out.device.name) + " " + std::move(what);
    out.problem_code = code;
    return out;
  };
  // Structures of a newer version may only be chained for devices that
  // support that version (valid usage of vkGetPhysicalDeviceProperties2).
  if (basic.apiVersion < VK_API_VERSION_1_2)
    return lacks(errc::vulkan_feature_missing, "supports Vulkan " + vk_version_text(basic.apiVersion) + ", not 1.2");

  VkPhysicalDeviceVulkan11Properties properties11{};
  properties11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES;
  VkPhysicalDeviceProperties2 properties{};
  properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  properties.pNext = &properties11;
  vkGetPhysicalDeviceProperties2(handle, &properties);

  VkPhysicalDeviceVulkan12Features features12{};
  features12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.pNext = &features12;
  vkGetPhysicalDeviceFeatures2(handle, &features);
  if (features12.timelineSemaphore != VK_TRUE)
    return lacks(errc::vulkan_feature_missing, "lacks the timelineSemaphore feature");

  std::uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(handle, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(handle, &family_count, families.data());
  families.resize(family_count);
  const auto computes = [&](std::uint32_t i) {
    return (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0 && families[i].queueCount > 0;
  };
  if (family) {
    if (*family >= family_count || !computes(*family))
      return lacks(errc::invalid_device_option, "has no compute queue family " + std::to_string(*family) + " (it has " +
                                                    std::to_string(family_count) + " families)");
    out.device.queue_family = *family;
    out.device.transfer_family = *family;
    out.device.async_family = *family;
  } else {
    std::uint32_t i = 0;
    while (i < family_count && !computes(i)) ++i;
    if (i == family_count) return lacks(errc::vulkan_feature_missing, "has no queue family with compute");
    out.device.queue_family = i;
    out.device.transfer_family = i;
    // A family of its own for transfer work: the spec lets families with
    // graphics or compute leave TRANSFER unreported (they run transfers
    // anyway), so a family that reports TRANSFER without either is the
    // dedicated copy engine.
    constexpr VkQueueFlags general = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
    std::uint32_t t = 0;
    while (t < family_count && !((families[t].queueFlags & VK_QUEUE_TRANSFER_BIT) != 0 &&
                                 (families[t].queueFlags & general) == 0 && families[t].queueCount > 0))
      ++t;
    if (t < family_count) {
      out.device.transfer_family = t;
      out.device.transfer_queue_index = 0;
      out.device.transfer_only_family = true;
    } else if (families[i].queueCount >= 2) {
      out.device.transfer_family = i;
      out.device.transfer_queue_index = 1;
    }
    choose_async_queue(out.device, families);
  }

  vkGetPhysicalDeviceMemoryProperties(handle, &out.device.memory);
  const int type = find_memory_type(out.device.memory, ~std::uint32_t{0}, arena_memory_flags);
  if (type < 0) return lacks(errc::vulkan_feature_missing, "has no host-visible coherent memory");

  // An arena is one buffer in one allocation, bound whole to a storage
  // descriptor: it is limited by the descriptor range, the largest
  // allocation and the heap; its size is a multiple of the 4-byte word.
  const VkMemoryType& memory_type = out.device.memory.memoryTypes[type];
  VkDeviceSize largest = properties.properties.limits.maxStorageBufferRange;
  largest = std::min(largest, properties11.maxMemoryAllocationSize);
  largest = std::min(largest, out.device.memory.memoryHeaps[memory_type.heapIndex].size);
  largest -= largest % 4;
  out.device.limits.max_arena_bytes = static_cast<std::size_t>(largest);
  out.device.limits.max_workgroups = properties.properties.limits.maxComputeWorkGroupCount[0];
  out.device.storage_offset_alignment = properties.properties.limits.minStorageBufferOffsetAlignment;
  out.device.limits.max_image_extent = std::min(max_image_extent, properties.properties.limits.maxImageDimension2D);
  out.device.graphics_family = (families[out.device.queue_family].queueFlags & VK_QUEUE_GRAPHICS_BIT) != 0;
  if (basic.apiVersion >= VK_API_VERSION_1_3) {
    const VkPhysicalDeviceVulkan13Features features13 = features13_of(handle);
    out.device.dynamic_rendering = features13.dynamicRendering == VK_TRUE;
    out.device.synchronization2 = features13.synchronization2 == VK_TRUE;
  }
  out.device.timestamp_valid_bits = families[out.device.queue_family].timestampValidBits;
  out.device.transfer_timestamp_valid_bits = families[out.device.transfer_family].timestampValidBits;
  out.device.async_timestamp_valid_bits = families[out.device.async_family].timestampValidBits;
  out.device.timestamp_period = properties.properties.limits.timestampPeriod;
  out.device.offers_swapchain = offers_extension(handle, VK_KHR_SWAPCHAIN_EXTENSION_NAME);
  return out;
}

int kind_rank(VkPhysicalDeviceType type) noexcept {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 1;
    default:
      return 2;
  }
}

}  // namespace

void choose_async_queue(vulkan_physical_device& d, std::span<const VkQueueFamilyProperties> families) noexcept {
  d.async_family = d.queue_family;
  d.async_queue_index = 0;
  const auto family_count = static_cast<std::uint32_t>(families.size());
  const auto other_compute = [&](bool without_graphics) -> std::optional<std::uint32_t> {
    for (std::uint32_t f = 0; f < family_count; ++f)
      if (f != d.queue_family && (families[f].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0 && families[f].queueCount > 0 &&
          (!without_graphics || (families[f].queueFlags & VK_QUEUE_GRAPHICS_BIT) == 0))
        return f;
    return std::nullopt;
  };
  std::optional<std::uint32_t> f = other_compute(true);
  if (!f) f = other_compute(false);
  if (f) {
    // Never the transfer queue's: that is a family without compute, or
    // queue_family.
    d.async_family = *f;
    return;
  }
  if (d.queue_family >= family_count) return;
  const std::uint32_t next = d.transfer_family == d.queue_family ? d.transfer_queue_index + 1 : 1;
  if (families[d.queue_family].queueCount > next) d.async_queue_index = next;
}

int find_memory_type(const VkPhysicalDeviceMemoryProperties& memory, std::uint32_t allowed,
                     VkMemoryPropertyFlags flags) noexcept {
  // Vulkan orders memory types so that, among types with the same
  // properties, the first is the one to prefer.
  for (std::uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    if ((allowed & (1u << i)) != 0 && (memory.memoryTypes[i].propertyFlags & flags) == flags)
      return static_cast<int>(i);
  }
  return -1;
}

result<vulkan_physical_device> pick_physical_device(VkInstance instance, std::string_view name) {
  std::vector<VkPhysicalDevice> handles;
  for (;;) {
    std::uint32_t count = 0;
    if (VkResult r = vkEnumeratePhysicalDevices(instance, &count, nullptr); r != VK_SUCCESS)
      return make_vk_error(r, "vkEnumeratePhysicalDevices");
    handles.resize(count);
    const VkResult r = vkEnumeratePhysicalDevices(instance, &count, handles.data());
    if (r == VK_INCOMPLETE) continue;
    if (r != VK_SUCCESS) return make_vk_error(r, "vkEnumeratePhysicalDevices");
    handles.resize(count);
    break;
  }
  if (handles.empty()) return make_error(errc::vulkan_unavailable, "the Vulkan driver reports no device");

  std::vector<inspection> inspected;
  inspected.reserve(handles.size());
  std::string names;
  for (VkPhysicalDevice handle : handles) {
    inspection i = inspect(handle, std::nullopt);
    if (!name.empty() && i.device.name.find(name) == std::string::npos) {
      names += (names.empty() ? "" : ", ") + quote_text(i.device.name);
      continue;
    }
    inspected.push_back(std::move(i));
  }
  if (inspected.empty())
    return make_error(errc::vulkan_device_not_found,
                      "no device's name contains " + quote_text(name) + " (devices: " + names + ")");

  // Stable: devices of one kind keep the driver's order.
  std::stable_sort(inspected.begin(), inspected.end(),
                   [](const inspection& a, const inspection& b) { return kind_rank(a.type) < kind_rank(b.type); });
  for (inspection& i : inspected) {
    if (i.problem.empty()) return std::move(i.device);
  }
  // Nothing suitable: name the first device's problem. A device asked for by
  // name that lacks something is a missing feature; with no name, Vulkan is
  // unavailable to ferrum on this machine.
  const inspection& first = inspected.front();
  return make_error(name.empty() ? errc::vulkan_unavailable : errc::vulkan_feature_missing, first.problem);
}

result<vulkan_physical_device> describe_physical_device(VkPhysicalDevice handle, std::uint32_t queue_family) {
  inspection i = inspect(handle, queue_family);
  if (!i.problem.empty()) return make_error(i.problem_code, i.problem);
  return std::move(i.device);
}

}  // namespace ferrum::gpu
