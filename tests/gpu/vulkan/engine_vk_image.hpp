// An engine's VkImage for the tests of gpu::import_vulkan_image
// (vulkan_import_test.cpp, vulkan_raster_test.cpp).
#pragma once

#include "vulkan_test_support.hpp"

#include <vulkan/vulkan_core.h>

#include <cstdint>

namespace vulkan_test {

// The first memory type of `h`'s physical device among `types` (a
// VkMemoryRequirements::memoryTypeBits) that has every flag of `wanted`.
inline std::uint32_t engine_memory_type(const ferrum::gpu::vulkan_native_handles& h, std::uint32_t types,
                                        VkMemoryPropertyFlags wanted) {
  VkPhysicalDeviceMemoryProperties memory{};
  vkGetPhysicalDeviceMemoryProperties(h.physical_device, &memory);
  std::uint32_t type = 0;
  while (type < memory.memoryTypeCount &&
         ((types & (1u << type)) == 0 || (memory.memoryTypes[type].propertyFlags & wanted) != wanted))
    ++type;
  REQUIRE(type < memory.memoryTypeCount);
  return type;
}

// An image as an engine makes one (vkCreateImage, its own device-local
// memory), with its own view of the whole image when asked; destroyed after
// the device's work with it.
struct engine_vk_image {
  engine_vk_image(const ferrum::gpu::vulkan_native_handles& h, VkFormat format, VkImageUsageFlags usage,
                  VkExtent3D extent, bool with_view)
      : device(h.device) {
    info.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
    info.imageType = VK_IMAGE_TYPE_2D;
    info.format = format;
    info.extent = extent;
    info.mipLevels = 1;
    info.arrayLayers = 1;
    info.samples = VK_SAMPLE_COUNT_1_BIT;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;
    info.usage = usage;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    REQUIRE(vkCreateImage(device, &info, nullptr, &image) == VK_SUCCESS);
    VkMemoryRequirements needs{};
    vkGetImageMemoryRequirements(device, image, &needs);
    VkMemoryAllocateInfo allocate{};
    allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    allocate.allocationSize = needs.size;
    allocate.memoryTypeIndex = engine_memory_type(h, needs.memoryTypeBits, 0);
    REQUIRE(vkAllocateMemory(device, &allocate, nullptr, &memory_) == VK_SUCCESS);
    REQUIRE(vkBindImageMemory(device, image, memory_, 0) == VK_SUCCESS);
    if (!with_view) return;
    VkImageViewCreateInfo view_info{};
    view_info.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO;
    view_info.image = image;
    view_info.viewType = VK_IMAGE_VIEW_TYPE_2D;
    view_info.format = format;
    view_info.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    REQUIRE(vkCreateImageView(device, &view_info, nullptr, &view) == VK_SUCCESS);
  }
  engine_vk_image(const engine_vk_image&) = delete;
  engine_vk_image& operator=(const engine_vk_image&) = delete;
  // The engine's: a view ferrum destroyed too would be reported by the
  // validation layers here.
  ~engine_vk_image() {
    if (view != VK_NULL_HANDLE) vkDestroyImageView(device, view, nullptr);
    vkDestroyImage(device, image, nullptr);
    vkFreeMemory(device, memory_, nullptr);
  }

  VkDevice device;
  VkImageCreateInfo info{};
  VkImage image = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
};

}  // namespace vulkan_test
