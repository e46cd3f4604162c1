// vulkan_queue.hpp — the Vulkan device's queue: each submission is one
// vkQueueSubmit whose command buffers run in order and which then signals the
// device's timeline semaphore with the submission's value.
//
//   vulkan_queue q(owner, timeline, {vk_queue, semaphore, nullptr, &waiter});
//   q.submit(std::array{&list}, q.last_submitted() + 1);
#pragma once

#include "ferrum/gpu/queue.hpp"

#include "vulkan/fence_waiter.hpp"

#include <vulkan/vulkan_core.h>

#include <mutex>
#include <vector>

namespace ferrum::gpu {

class vulkan_queue final : public queue {
 public:
  struct context {
    VkQueue queue = VK_NULL_HANDLE;
    // The timeline semaphore each submission signals.
    VkSemaphore timeline_semaphore = VK_NULL_HANDLE;
    // An engine's lock around its own submissions to `queue` (adopt mode).
    std::mutex* queue_mutex = nullptr;
    // Told of each submission.
    fence_waiter* waiter = nullptr;
  };

  vulkan_queue(const gpu::device& owner, vulkan_timeline& t, const context& c) noexcept
      : queue(owner, t), timeline_(t), context_(c) {}

 protected:
  result<void> do_submit(std::span<command_list* const> lists, std::uint64_t signal_value) override;

 private:
  // The base class's timeline, as the device's own type: a loss at submit
  // fails it.
  vulkan_timeline& timeline_;
  context context_;
  // Reused under the base class's lock, so steady-state submissions do not
  // allocate.
  std::vector<VkCommandBuffer> buffers_;
};

}  // namespace ferrum::gpu
