// examples/embed/engine_vulkan.hpp — the engine's own Vulkan objects, made
// with plain Vulkan calls before ferrum is involved: an instance, a physical
// device, a logical device with timeline semaphores enabled, one queue, and
// the mutex the engine holds around every use of that queue.
//
//   auto vk = engine_vulkan::create();
//   if (!vk) ...;                                  // vulkan_unavailable: no driver
//   auto device = ferrum::gpu::adopt_vulkan_device(vk->adopt_info());
//
// The engine owns them: ferrum's adopted device must be destroyed before.
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include <vulkan/vulkan_core.h>

#include <cstdint>
#include <memory>
#include <mutex>

class engine_vulkan {
 public:
  // Makes the objects on the first physical device with Vulkan 1.2, timeline
  // semaphores and a compute queue. Errors: vulkan_unavailable (no driver,
  // or no such device), and the failing call's code (errc_from_vk).
  [[nodiscard]] static ferrum::result<std::unique_ptr<engine_vulkan>> create();

  engine_vulkan(const engine_vulkan&) = delete;
  engine_vulkan& operator=(const engine_vulkan&) = delete;
  // Waits for the queue to go idle, then destroys the device and instance.
  ~engine_vulkan();

  // What ferrum adopts. It takes `queue_mutex` around its vkQueueSubmit, as
  // Vulkan requires a queue's users to synchronize externally.
  [[nodiscard]] ferrum::gpu::vulkan_adopt_info adopt_info() noexcept {
    return {instance_, physical_device_, device_, queue_, queue_family_, &queue_mutex_};
  }

  [[nodiscard]] VkDevice device() const noexcept { return device_; }
  [[nodiscard]] VkPhysicalDevice physical_device() const noexcept { return physical_device_; }
  [[nodiscard]] std::uint32_t queue_family() const noexcept { return queue_family_; }

  // The engine's own submission to its queue, under the mutex ferrum takes too.
  [[nodiscard]] VkResult submit(const VkSubmitInfo& info) {
    const std::lock_guard lock(queue_mutex_);
    return vkQueueSubmit(queue_, 1, &info, VK_NULL_HANDLE);
  }
  // Waits for the queue to go idle, under the same mutex.
  VkResult wait_idle() {
    const std::lock_guard lock(queue_mutex_);
    return vkQueueWaitIdle(queue_);
  }
  // The physical device's name ("llvmpipe (LLVM 15.0.6, 256 bits)" on lavapipe).
  [[nodiscard]] const char* name() const noexcept { return properties_.deviceName; }

 private:
  engine_vulkan() = default;

  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device_ = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties properties_{};
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  std::uint32_t queue_family_ = 0;
  std::mutex queue_mutex_;
};
