#include "vulkan/vulkan_queue.hpp"

#include "vulkan/vk_result.hpp"
#include "vulkan/vulkan_command_list.hpp"

#include <optional>
#include <string>

namespace ferrum::gpu {

result<void> vulkan_queue::do_submit(std::span<command_list* const> lists, std::uint64_t signal_value) {
  buffers_.clear();
  // The base class checked that every list is this device's, hence a
  // vulkan_command_list, ended and not in flight.
  for (command_list* list : lists) buffers_.push_back(static_cast<vulkan_command_list*>(list)->command_buffer());

  VkTimelineSemaphoreSubmitInfo values{};
  values.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  values.signalSemaphoreValueCount = 1;
  values.pSignalSemaphoreValues = &signal_value;
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.pNext = &values;
  // Command buffers of one batch start in order; the barriers recorded in
  // each list order their memory accesses.
  submit.commandBufferCount = static_cast<std::uint32_t>(buffers_.size());
  submit.pCommandBuffers = buffers_.data();
  // The signal operation's first scope is every command of the batch, so the
  // value is reached only when all of them completed.
  submit.signalSemaphoreCount = 1;
  submit.pSignalSemaphores = &context_.timeline_semaphore;

  VkResult r = VK_SUCCESS;
  {
    // A queue is externally synchronized: the base class's lock covers
    // ferrum's submissions, the engine's mutex its own.
    std::optional<std::lock_guard<std::mutex>> engine_lock;
    if (context_.queue_mutex != nullptr) engine_lock.emplace(*context_.queue_mutex);
    r = vkQueueSubmit(context_.queue, 1, &submit, VK_NULL_HANDLE);
  }
  if (r != VK_SUCCESS) {
    // On loss nothing more will run: every pending and later wait fails.
    if (r == VK_ERROR_DEVICE_LOST) timeline_.fail(make_error_code(errc::device_lost));
    return make_vk_error(r, "vkQueueSubmit of value " + std::to_string(signal_value));
  }
  context_.waiter->submitted(signal_value);
  return {};
}

}  // namespace ferrum::gpu
