// engine_buffer.hpp — a buffer as an engine makes one, for the Vulkan tests
// of imported buffers (vulkan_import_test.cpp, vulkan_raster_test.cpp).
#pragma once

#include "engine_vk_image.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace vulkan_test {

// A buffer as an engine makes one: its own VkBuffer and memory (the first
// host-visible type, mapped), destroyed after the device's work with it.
struct engine_buffer {
  engine_buffer(const ferrum::gpu::vulkan_native_handles& h, VkDeviceSize bytes, VkBufferUsageFlags usage)
      : device(h.device), size(bytes) {
    VkBufferCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.size = bytes;
    info.usage = usage;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    REQUIRE(vkCreateBuffer(device, &info, nullptr, &buffer) == VK_SUCCESS);
    VkMemoryRequirements needs{};
    vkGetBufferMemoryRequirements(device, buffer, &needs);
    VkMemoryAllocateFlagsInfo flags{};
    flags.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO;
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo allocate{};
    allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    allocate.pNext = (usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT) != 0 ? &flags : nullptr;
    allocate.allocationSize = needs.size;
    allocate.memoryTypeIndex = engine_memory_type(h, needs.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
    REQUIRE(vkAllocateMemory(device, &allocate, nullptr, &memory_) == VK_SUCCESS);
    REQUIRE(vkBindBufferMemory(device, buffer, memory_, 0) == VK_SUCCESS);
    REQUIRE(vkMapMemory(device, memory_, 0, VK_WHOLE_SIZE, 0, &mapped) == VK_SUCCESS);
    std::memset(mapped, 0, static_cast<std::size_t>(bytes));
  }
  engine_buffer(const engine_buffer&) = delete;
  engine_buffer& operator=(const engine_buffer&) = delete;
  ~engine_buffer() {
    vkUnmapMemory(device, memory_);
    vkDestroyBuffer(device, buffer, nullptr);
    vkFreeMemory(device, memory_, nullptr);
  }
  [[nodiscard]] std::uint32_t word(std::size_t offset) const {
    std::uint32_t w = 0;
    std::memcpy(&w, static_cast<const std::byte*>(mapped) + offset, 4);
    return w;
  }

  VkDevice device;
  VkDeviceSize size;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  void* mapped = nullptr;
};

}  // namespace vulkan_test
