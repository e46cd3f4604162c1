// vulkan_queue.hpp — one of the Vulkan device's queues: each submission is
// one vkQueueSubmit that first waits on the timeline semaphores of the queues
// it waits for, then runs its command buffers in order and signals this
// queue's timeline semaphore with the submission's value.
//
//   vulkan_queue q(owner, timeline, {vk_queue, family, semaphore, nullptr, &waiter, 0}, 0, queue_kind::compute);
//   q.submit(std::array{&list}, q.last_submitted() + 1);
#pragma once

#include "ferrum/gpu/queue.hpp"

#include "vulkan/fence_waiter.hpp"
#include "vulkan/host_wait_fences.hpp"

#include <vulkan/vulkan_core.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace ferrum::gpu {

class vulkan_queue final : public queue {
 public:
  struct context {
    VkQueue queue = VK_NULL_HANDLE;
    std::uint32_t family = 0;
    // The timeline semaphore each submission signals.
    VkSemaphore timeline_semaphore = VK_NULL_HANDLE;
    // An engine's lock around its own submissions to `queue` (adopt mode).
    std::mutex* queue_mutex = nullptr;
    // Told of each submission, as timeline `waiter_index`.
    fence_waiter* waiter = nullptr;
    std::size_t waiter_index = 0;
    // Where the validation layers check hazards between submissions: a
    // fence for each submission (host_wait_fences.hpp); null elsewhere.
    host_wait_fences* host_waits = nullptr;
    // The device, for host_wait().
    VkDevice device = VK_NULL_HANDLE;
  };

  vulkan_queue(const gpu::device& owner, vulkan_timeline& t, const context& c, std::size_t index,
               queue_kind kind) noexcept
      : queue(owner, t, index, kind), context_(c) {
    if (c.host_waits != nullptr) c.host_waits->serialize_with(submission_mutex());
  }

  [[nodiscard]] VkQueue handle() const noexcept { return context_.queue; }
  [[nodiscard]] std::uint32_t family() const noexcept { return context_.family; }
  [[nodiscard]] VkSemaphore semaphore() const noexcept { return context_.timeline_semaphore; }

  // vkQueuePresentKHR under the lock submissions take (and the engine's):
  // a queue is externally synchronized. `*submitted` is last_submitted()
  // then, the value whose reaching means every submission before the
  // presentation completed. A loss fails every wait, as a submission's does.
  [[nodiscard]] VkResult present(const VkPresentInfoKHR& info, std::uint64_t* submitted) noexcept;
  // Blocks until this queue's timeline semaphore reaches `value` (at most
  // `timeout_ns`), as the fence waiter does, for the device's own waits:
  // the host's wait shown to the validation layers (host_wait_fences.hpp).
  [[nodiscard]] VkResult host_wait(std::uint64_t value, std::uint64_t timeout_ns) noexcept;
  // vkQueueWaitIdle under the same locks: the presentations queued so far
  // are done (nothing else tells when their semaphore waits happened).
  [[nodiscard]] VkResult wait_idle() noexcept;

 protected:
  result<void> do_submit(std::span<command_list* const> lists, std::uint64_t signal_value,
                         std::span<const queue_wait> waits, const external_sync& external) override;

 private:
  context context_;
  // Reused under the base class's lock, so steady-state submissions do not
  // allocate.
  std::vector<VkCommandBuffer> buffers_;
  std::vector<VkSemaphore> wait_semaphores_;
  std::vector<std::uint64_t> wait_values_;
  std::vector<VkPipelineStageFlags> wait_stages_;
  std::vector<VkSemaphore> signal_semaphores_;
  std::vector<std::uint64_t> signal_values_;
};

}  // namespace ferrum::gpu
