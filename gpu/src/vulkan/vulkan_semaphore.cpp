#include "vulkan/vulkan_semaphore.hpp"

#include "vulkan/vk_result.hpp"

#include <string>

namespace ferrum::gpu {

result<VkSemaphore> create_timeline_semaphore(VkDevice device, std::string_view role) {
  VkSemaphoreTypeCreateInfo type{};
  type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type.initialValue = 0;
  VkSemaphoreCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  info.pNext = &type;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  if (VkResult r = vkCreateSemaphore(device, &info, nullptr, &semaphore); r != VK_SUCCESS)
    return make_vk_error(r, std::string(role) + " semaphore: vkCreateSemaphore");
  return semaphore;
}

VkResult wait_timeline_semaphore(VkDevice device, VkSemaphore semaphore, std::uint64_t value,
                                 std::uint64_t timeout_ns) noexcept {
  VkSemaphoreWaitInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
  info.semaphoreCount = 1;
  info.pSemaphores = &semaphore;
  info.pValues = &value;
  return vkWaitSemaphores(device, &info, timeout_ns);
}

}  // namespace ferrum::gpu
