// host_wait_fences.hpp — the host's waits for a queue's submissions, shown to
// the validation layers' submit-time synchronization validation.
//
// ferrum learns that a submission completed from its timeline semaphore
// (fence_waiter.hpp) and then reuses the memory it touched: a lane's next
// wave, a list recorded again. The layers of Debian 12 (1.3.239) check
// hazards between submissions (VK_LAYER_ENABLES=
// VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT) and track
// host waits on fences (vkWaitForFences), but not on timeline semaphores
// (vkWaitSemaphores, vkGetSemaphoreCounterValue): without this they report
// every such reuse as a hazard against the submission the host waited for.
// So where that check is on, each submission also signals a fence, and the
// fence waiter waits for it (it is signalled, or about to be) before it
// tells ferrum's timeline that the value was reached — what the layers see
// is then exactly the order ferrum relies on. Nothing is added where the
// check is off.
//
// The layers learn of a fence's submission when vkQueueSubmit returns, and
// ignore a wait for a fence they have not seen submitted; the driver may
// complete the submission before that. So a fence is waited for only once
// its submission is marked made (submitted()), which reached() waits for.
//
//   host_wait_fences fences(device);
//   VkFence f = fences.next(value).value();   // under the queue's submission lock
//   vkQueueSubmit(queue, 1, &submit, f);
//   fences.submitted(value);                   // or fences.cancel(value) if it failed
//   fences.reached(completed);                 // fence waiter, before advancing
#pragma once

#include "ferrum/error.hpp"

#include <vulkan/vulkan_core.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace ferrum::gpu {

// Whether the environment asks the validation layers for submit-time
// synchronization validation (VK_LAYER_ENABLES names it).
[[nodiscard]] bool submit_time_validation_requested() noexcept;

class host_wait_fences {
 public:
  explicit host_wait_fences(VkDevice device) noexcept : device_(device) {}
  host_wait_fences(const host_wait_fences&) = delete;
  host_wait_fences& operator=(const host_wait_fences&) = delete;
  // Destroys the fences; the device is idle (vulkan_device::drain).
  ~host_wait_fences();

  // The lock every submission to the queue takes (the queue's, set when it
  // is made): reached() holds it while it waits.
  void serialize_with(std::mutex& submission_lock) noexcept { submission_lock_ = &submission_lock; }

  // A fence for the submission that will signal `value` (values increase).
  // Errors: out_of_*_memory, vulkan_error (vkCreateFence).
  [[nodiscard]] result<VkFence> next(std::uint64_t value);
  // vkQueueSubmit of `value` returned: the layers know its fence.
  void submitted(std::uint64_t value) noexcept;
  // The submission of `value` was not made: its fence goes.
  void cancel(std::uint64_t value) noexcept;
  // The queue's timeline reached `value`: waits for the submissions up to
  // it to be marked made, then for their fences, and frees them. What does
  // not show within a second stays for the next call.
  void reached(std::uint64_t value) noexcept;

 private:
  struct pending {
    std::uint64_t value;
    VkFence fence;
    bool submitted;
  };

  VkDevice device_;
  std::mutex* submission_lock_ = nullptr;
  std::mutex reach_mutex_;  // one reached() at a time; taken before mutex_
  std::mutex mutex_;
  std::condition_variable marked_;
  std::deque<pending> pending_;  // in value order
  std::vector<VkFence> free_;
  std::vector<VkFence> waited_;  // reached()'s, kept to allocate once
};

}  // namespace ferrum::gpu
