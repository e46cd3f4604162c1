#include "vulkan/vulkan_semaphore.hpp"

#include "vulkan/vk_result.hpp"

#include <algorithm>
#include <string>

namespace ferrum::gpu {

vulkan_semaphore::vulkan_semaphore(const gpu::device& owner, VkDevice device, VkSemaphore handle, semaphore_kind kind,
                                   bool owned) noexcept
    : semaphore(owner, kind, reinterpret_cast<std::uint64_t>(handle)),
      device_(device),
      handle_(handle),
      owned_(owned) {}

vulkan_semaphore::~vulkan_semaphore() {
  if (owned_) vkDestroySemaphore(device_, handle_, nullptr);
}

result<void> vulkan_semaphore::do_signal_from_host(std::uint64_t value) {
  if (kind() == semaphore_kind::binary)
    return make_error(errc::unsupported_command, "a host signal of a binary Vulkan semaphore");
  // Vulkan requires the value above the current one (VkSemaphoreSignalInfo);
  // refused here as on the null device instead of reaching the driver.
  std::uint64_t current = 0;
  if (VkResult r = vkGetSemaphoreCounterValue(device_, handle_, &current); r != VK_SUCCESS)
    return make_vk_error(r, "vkGetSemaphoreCounterValue");
  if (value <= current)
    return make_error(errc::invalid_semaphore_op, "host signal: value " + std::to_string(value) +
                                                      " is not above the current " + std::to_string(current));
  VkSemaphoreSignalInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO;
  info.semaphore = handle_;
  info.value = value;
  if (VkResult r = vkSignalSemaphore(device_, &info); r != VK_SUCCESS)
    return make_vk_error(r, "vkSignalSemaphore of value " + std::to_string(value));
  return {};
}

result<std::uint64_t> vulkan_semaphore::do_value() const {
  if (kind() == semaphore_kind::binary)
    return make_error(errc::unsupported_command, "the value of a binary Vulkan semaphore");
  std::uint64_t value = 0;
  if (VkResult r = vkGetSemaphoreCounterValue(device_, handle_, &value); r != VK_SUCCESS)
    return make_vk_error(r, "vkGetSemaphoreCounterValue");
  return value;
}

result<bool> vulkan_semaphore::do_wait_from_host(std::uint64_t value, std::chrono::nanoseconds timeout) const {
  if (kind() == semaphore_kind::binary)
    return make_error(errc::unsupported_command, "a host wait on a binary Vulkan semaphore");
  const VkResult r = wait_timeline_semaphore(device_, handle_, value,
                                             static_cast<std::uint64_t>(std::max<std::int64_t>(0, timeout.count())));
  if (r == VK_TIMEOUT) return false;
  if (r != VK_SUCCESS) return make_vk_error(r, "vkWaitSemaphores for value " + std::to_string(value));
  return true;
}

result<VkSemaphore> create_binary_semaphore(VkDevice device, std::string_view role) {
  VkSemaphoreCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  if (VkResult r = vkCreateSemaphore(device, &info, nullptr, &semaphore); r != VK_SUCCESS)
    return make_vk_error(r, std::string(role) + " semaphore: vkCreateSemaphore");
  return semaphore;
}

VkPipelineStageFlags wait_stage_mask(sync_stage stage) noexcept {
  switch (stage) {
    case sync_stage::compute:
      return VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    case sync_stage::transfer:
      return VK_PIPELINE_STAGE_TRANSFER_BIT;
    case sync_stage::color_attachment_output:
      return VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    case sync_stage::all:
      break;
  }
  return VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
}

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
