// vulkan_physical_device.hpp — choosing the physical device (GPU) a Vulkan
// device runs on, and what ferrum needs to know about it.
//
// A device is suitable when it supports Vulkan 1.2 with the timelineSemaphore
// feature, has a queue family with compute, and a HOST_VISIBLE|HOST_COHERENT
// memory type (arenas are mapped for their whole life).
//
// Transfer work gets a queue of its own where the device offers one: the
// first queue of a family with TRANSFER and neither GRAPHICS nor COMPUTE (a
// DMA engine), else the compute family's second queue; otherwise it shares
// the compute queue (Mesa's lavapipe has one queue).
//
//   auto gpu = pick_physical_device(instance, "llvmpipe");
//   if (gpu) use(gpu->handle, gpu->queue_family);
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/device.hpp"

#include <vulkan/vulkan_core.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ferrum::gpu {

struct vulkan_physical_device {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  std::string name;
  // The compute queue: queue 0 of this family.
  std::uint32_t queue_family = 0;
  // The transfer queue: queue `transfer_queue_index` of `transfer_family`;
  // (queue_family, 0) when it is the compute queue.
  std::uint32_t transfer_family = 0;
  std::uint32_t transfer_queue_index = 0;
  // The async compute queue: queue `async_queue_index` of `async_family`; a
  // compute family other than queue_family where the device has one (one
  // without graphics first), else queue_family's next free queue, else
  // (queue_family, 0): the compute queue itself.
  std::uint32_t async_family = 0;
  std::uint32_t async_queue_index = 0;
  std::uint32_t async_timestamp_valid_bits = 0;
  // transfer_family has neither graphics nor compute.
  bool transfer_only_family = false;
  // queue_family has graphics (its barriers may name graphics stages).
  bool graphics_family = false;
  // The device has Vulkan 1.3's dynamicRendering feature.
  bool dynamic_rendering = false;
  // The device has Vulkan 1.3's synchronization2 feature.
  bool synchronization2 = false;
  std::uint32_t transfer_timestamp_valid_bits = 0;
  VkPhysicalDeviceMemoryProperties memory{};
  device_limits limits;
  // minStorageBufferOffsetAlignment: where a storage buffer descriptor may start.
  VkDeviceSize storage_offset_alignment = 1;
  // The compute queue family's timestampValidBits (0: it writes no
  // timestamps) and the device's timestampPeriod (nanoseconds per tick).
  std::uint32_t timestamp_valid_bits = 0;
  float timestamp_period = 0;
  // It offers VK_KHR_swapchain (vulkan_device_options::presentation).
  bool offers_swapchain = false;

  // Whether transfer work has a queue of its own.
  [[nodiscard]] bool separate_transfer_queue() const noexcept {
    return transfer_family != queue_family || transfer_queue_index != 0;
  }
  // Whether async compute work has a queue of its own.
  [[nodiscard]] bool separate_async_queue() const noexcept {
    return async_family != queue_family || async_queue_index != 0;
  }
};

// Sets d.async_family and d.async_queue_index from the device's queue
// families, once d.queue_family and the transfer queue are chosen: a family
// other than queue_family with compute (one without graphics first, in
// family order), queue 0; else queue_family's queue after those the compute
// and transfer queues take, where it has one; else the compute queue.
void choose_async_queue(vulkan_physical_device& d, std::span<const VkQueueFamilyProperties> families) noexcept;

// The suitable physical device whose name contains `name` (any suitable one
// when empty), discrete GPUs first, then integrated, then any other kind, in
// enumeration order within a kind. Errors: vulkan_unavailable (no suitable
// device at all), vulkan_device_not_found (no device's name contains `name`),
// vulkan_feature_missing (the named device lacks something ferrum needs),
// out_of_*_memory, vulkan_error.
[[nodiscard]] result<vulkan_physical_device> pick_physical_device(VkInstance instance, std::string_view name);

// Describes an engine's physical device, checking it as pick_physical_device
// does, with the engine's queue family (which runs both kinds of work). The instance must have been created
// for Vulkan 1.1 or later. Errors: invalid_device_option (the queue family
// does not exist or lacks compute), vulkan_feature_missing.
[[nodiscard]] result<vulkan_physical_device> describe_physical_device(VkPhysicalDevice handle,
                                                                      std::uint32_t queue_family);

// The index of the first memory type among `allowed` (a bit per type) that has
// all of `flags`, or -1.
[[nodiscard]] int find_memory_type(const VkPhysicalDeviceMemoryProperties& memory, std::uint32_t allowed,
                                   VkMemoryPropertyFlags flags) noexcept;

// What arenas need of their memory.
inline constexpr VkMemoryPropertyFlags arena_memory_flags =
    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

}  // namespace ferrum::gpu
