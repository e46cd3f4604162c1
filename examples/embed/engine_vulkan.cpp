// examples/embed/engine_vulkan.cpp — the engine's instance, device and queue,
// made with plain Vulkan calls (engine_vulkan.hpp).
#include "engine_vulkan.hpp"

#include <optional>
#include <string>
#include <vector>

namespace {

ferrum::error vk_failed(VkResult r, const char* call) {
  return ferrum::make_error(ferrum::gpu::errc_from_vk(r),
                            std::string("the engine's ") + call + " returned " + std::to_string(static_cast<int>(r)));
}

// The first queue family of `device` with compute, if it qualifies at all:
// Vulkan 1.2 and the timeline semaphores that ferrum's fences are.
std::optional<std::uint32_t> compute_family(VkPhysicalDevice device) {
  VkPhysicalDeviceProperties properties{};
  vkGetPhysicalDeviceProperties(device, &properties);
  if (properties.apiVersion < VK_API_VERSION_1_2) return std::nullopt;
  VkPhysicalDeviceVulkan12Features features12{};
  features12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.pNext = &features12;
  vkGetPhysicalDeviceFeatures2(device, &features);
  if (features12.timelineSemaphore != VK_TRUE) return std::nullopt;

  std::uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, families.data());
  for (std::uint32_t family = 0; family < count; ++family)
    if ((families[family].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0) return family;
  return std::nullopt;
}

}  // namespace

ferrum::result<std::unique_ptr<engine_vulkan>> engine_vulkan::create() {
  std::unique_ptr<engine_vulkan> vk(new engine_vulkan());

  VkApplicationInfo application{};
  application.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  application.pApplicationName = "ferrum embed example";
  application.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo instance_info{};
  instance_info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  instance_info.pApplicationInfo = &application;
  // Without a driver the loader answers VK_ERROR_INCOMPATIBLE_DRIVER, which
  // errc_from_vk maps to vulkan_unavailable.
  if (VkResult r = vkCreateInstance(&instance_info, nullptr, &vk->instance_); r != VK_SUCCESS) {
    vk->instance_ = VK_NULL_HANDLE;
    return vk_failed(r, "vkCreateInstance");
  }

  std::uint32_t count = 0;
  if (VkResult r = vkEnumeratePhysicalDevices(vk->instance_, &count, nullptr); r != VK_SUCCESS)
    return vk_failed(r, "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> devices(count);
  if (VkResult r = vkEnumeratePhysicalDevices(vk->instance_, &count, devices.data()); r != VK_SUCCESS)
    return vk_failed(r, "vkEnumeratePhysicalDevices");
  for (VkPhysicalDevice candidate : devices) {
    if (const std::optional<std::uint32_t> family = compute_family(candidate)) {
      vk->physical_device_ = candidate;
      vk->queue_family_ = *family;
      break;
    }
  }
  if (vk->physical_device_ == VK_NULL_HANDLE)
    return ferrum::make_error(ferrum::errc::vulkan_unavailable,
                              "no physical device with Vulkan 1.2, timeline semaphores and a compute queue");
  vkGetPhysicalDeviceProperties(vk->physical_device_, &vk->properties_);

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{};
  queue_info.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queue_info.queueFamilyIndex = vk->queue_family_;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  // ferrum's fences are timeline semaphores: an adopted device must have the
  // feature enabled.
  VkPhysicalDeviceVulkan12Features features12{};
  features12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  features12.timelineSemaphore = VK_TRUE;
  VkDeviceCreateInfo device_info{};
  device_info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  device_info.pNext = &features12;
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info;
  if (VkResult r = vkCreateDevice(vk->physical_device_, &device_info, nullptr, &vk->device_); r != VK_SUCCESS) {
    vk->device_ = VK_NULL_HANDLE;
    return vk_failed(r, "vkCreateDevice");
  }
  vkGetDeviceQueue(vk->device_, vk->queue_family_, 0, &vk->queue_);
  return vk;
}

engine_vulkan::~engine_vulkan() {
  if (device_ != VK_NULL_HANDLE) {
    {
      // The queue is externally synchronized: the same mutex as for submits.
      // A lost device has nothing left to wait for; it is destroyed all the same.
      const std::lock_guard lock(queue_mutex_);
      (void)vkQueueWaitIdle(queue_);
    }
    vkDestroyDevice(device_, nullptr);
  }
  if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
}
