#include "vulkan/vulkan_queue.hpp"

#include "vulkan/vk_result.hpp"
#include "vulkan/vulkan_command_list.hpp"
#include "vulkan/vulkan_semaphore.hpp"

#include <optional>
#include <string>

namespace ferrum::gpu {

result<void> vulkan_queue::do_submit(std::span<command_list* const> lists, std::uint64_t signal_value,
                                     std::span<const queue_wait> waits, const external_sync& external) {
  buffers_.clear();
  // The base class checked that every list is this device's, hence a
  // vulkan_command_list, made for this queue's family, ended and not in
  // flight.
  for (command_list* list : lists) buffers_.push_back(static_cast<vulkan_command_list*>(list)->command_buffer());

  wait_semaphores_.clear();
  wait_values_.clear();
  wait_stages_.clear();
  for (const queue_wait& w : waits) {
    // The base class checked that each waited queue is this device's (a
    // vulkan_queue), at most once, on a value already submitted there: a
    // timeline wait needs its signal submitted for the batch to make
    // progress, and it is.
    wait_semaphores_.push_back(static_cast<const vulkan_queue*>(w.on)->semaphore());
    wait_values_.push_back(w.value);
    // ALL_COMMANDS: no command of the batch starts before the value is
    // reached. The wait's memory dependency makes every device write before
    // the other queue's signal visible to the batch's commands (the signal's
    // first access scope is all device accesses, the wait's second one too).
    // The stage is supported on every queue family, transfer-only ones too.
    wait_stages_.push_back(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
  }
  // The base class checked that each semaphore is this device's (a
  // vulkan_semaphore). A binary semaphore's value is ignored.
  for (const semaphore_op& w : external.waits) {
    wait_semaphores_.push_back(static_cast<const vulkan_semaphore*>(w.on)->handle());
    wait_values_.push_back(w.value);
    wait_stages_.push_back(wait_stage_mask(w.stage));
  }
  signal_semaphores_.assign(1, context_.timeline_semaphore);
  signal_values_.assign(1, signal_value);
  for (const semaphore_op& signal : external.signals) {
    signal_semaphores_.push_back(static_cast<const vulkan_semaphore*>(signal.on)->handle());
    signal_values_.push_back(signal.value);
  }

  VkTimelineSemaphoreSubmitInfo values{};
  values.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  // One value per wait semaphore, all timeline semaphores.
  values.waitSemaphoreValueCount = static_cast<std::uint32_t>(wait_values_.size());
  values.pWaitSemaphoreValues = wait_values_.data();
  values.signalSemaphoreValueCount = static_cast<std::uint32_t>(signal_values_.size());
  values.pSignalSemaphoreValues = signal_values_.data();
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.pNext = &values;
  submit.waitSemaphoreCount = static_cast<std::uint32_t>(wait_semaphores_.size());
  submit.pWaitSemaphores = wait_semaphores_.data();
  submit.pWaitDstStageMask = wait_stages_.data();
  // Command buffers of one batch start in order; the barriers recorded in
  // each list order their memory accesses.
  submit.commandBufferCount = static_cast<std::uint32_t>(buffers_.size());
  submit.pCommandBuffers = buffers_.data();
  // The signal operations' first scope is every command of the batch (and
  // every earlier one on the queue), so the values are reached only when
  // all of them completed.
  submit.signalSemaphoreCount = static_cast<std::uint32_t>(signal_semaphores_.size());
  submit.pSignalSemaphores = signal_semaphores_.data();

  VkFence fence = VK_NULL_HANDLE;
  if (context_.host_waits != nullptr) {
    auto made = context_.host_waits->next(signal_value);
    if (!made) return made.error();
    fence = *made;
  }
  VkResult r = VK_SUCCESS;
  {
    // A queue is externally synchronized: the base class's lock covers
    // ferrum's submissions, the engine's mutex its own.
    std::optional<std::lock_guard<std::mutex>> engine_lock;
    if (context_.queue_mutex != nullptr) engine_lock.emplace(*context_.queue_mutex);
    r = vkQueueSubmit(context_.queue, 1, &submit, fence);
  }
  if (r != VK_SUCCESS) {
    if (context_.host_waits != nullptr) context_.host_waits->cancel(signal_value);
    // On loss nothing more will run on any queue: every pending and later
    // wait fails.
    if (r == VK_ERROR_DEVICE_LOST) context_.waiter->fail_all(make_error_code(errc::device_lost));
    return make_vk_error(r, "vkQueueSubmit of value " + std::to_string(signal_value));
  }
  if (context_.host_waits != nullptr) context_.host_waits->submitted(signal_value);
  context_.waiter->submitted(context_.waiter_index, signal_value);
  return {};
}

VkResult vulkan_queue::present(const VkPresentInfoKHR& info, std::uint64_t* submitted) noexcept {
  VkResult r = VK_SUCCESS;
  {
    const std::lock_guard lock(submission_mutex());
    std::optional<std::lock_guard<std::mutex>> engine_lock;
    if (context_.queue_mutex != nullptr) engine_lock.emplace(*context_.queue_mutex);
    *submitted = last_submitted();
    r = vkQueuePresentKHR(context_.queue, &info);
  }
  if (r == VK_ERROR_DEVICE_LOST) context_.waiter->fail_all(make_error_code(errc::device_lost));
  return r;
}

VkResult vulkan_queue::host_wait(std::uint64_t value, std::uint64_t timeout_ns) noexcept {
  const VkResult r = wait_timeline_semaphore(context_.device, context_.timeline_semaphore, value, timeout_ns);
  if (r == VK_SUCCESS && context_.host_waits != nullptr) context_.host_waits->reached(value);
  return r;
}

VkResult vulkan_queue::wait_idle() noexcept {
  const std::lock_guard lock(submission_mutex());
  std::optional<std::lock_guard<std::mutex>> engine_lock;
  if (context_.queue_mutex != nullptr) engine_lock.emplace(*context_.queue_mutex);
  return vkQueueWaitIdle(context_.queue);
}

}  // namespace ferrum::gpu
