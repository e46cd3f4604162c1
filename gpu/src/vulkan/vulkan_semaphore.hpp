// vulkan_semaphore.hpp — Vulkan 1.2 timeline semaphores: creating one, and the
// host operations on it that the device uses.
//
//   auto semaphore = create_timeline_semaphore(device, "timeline");
//   VkResult r = wait_timeline_semaphore(device, *semaphore, 42, 100'000'000);
#pragma once

#include "ferrum/error.hpp"

#include <vulkan/vulkan_core.h>

#include <cstdint>
#include <string_view>

namespace ferrum::gpu {

// A timeline semaphore whose counter starts at 0; `role` names it in errors.
// Errors: out_of_device_memory, out_of_host_memory, vulkan_error.
[[nodiscard]] result<VkSemaphore> create_timeline_semaphore(VkDevice device, std::string_view role);

// Waits until `semaphore` reaches `value` or `timeout_ns` passes: VK_SUCCESS,
// VK_TIMEOUT, VK_ERROR_DEVICE_LOST or an out-of-memory error.
[[nodiscard]] VkResult wait_timeline_semaphore(VkDevice device, VkSemaphore semaphore, std::uint64_t value,
                                               std::uint64_t timeout_ns) noexcept;

}  // namespace ferrum::gpu
