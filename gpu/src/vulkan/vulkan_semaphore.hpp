// vulkan_semaphore.hpp — Vulkan 1.2 timeline semaphores: creating one, and the
// host operations on it that the device uses.
//
//   auto semaphore = create_timeline_semaphore(device, "timeline");
//   VkResult r = wait_timeline_semaphore(device, *semaphore, 42, 100'000'000);
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/semaphore.hpp"

#include <vulkan/vulkan_core.h>

#include <cstdint>
#include <string_view>

namespace ferrum::gpu {

// A semaphore (ferrum/gpu/semaphore.hpp) over a VkSemaphore: made by the
// device, which then destroys it with this object, or an engine's
// (import_vulkan_semaphore), which stays the engine's.
class vulkan_semaphore final : public semaphore {
 public:
  vulkan_semaphore(const gpu::device& owner, VkDevice device, VkSemaphore handle, semaphore_kind kind,
                   bool owned) noexcept;
  ~vulkan_semaphore() override;

  [[nodiscard]] VkSemaphore handle() const noexcept { return handle_; }

 protected:
  result<void> do_signal_from_host(std::uint64_t value) override;
  result<std::uint64_t> do_value() const override;
  result<bool> do_wait_from_host(std::uint64_t value, std::chrono::nanoseconds timeout) const override;

 private:
  VkDevice device_;
  VkSemaphore handle_;
  bool owned_;
};

// A binary semaphore; `role` names it in errors. Errors: as below.
[[nodiscard]] result<VkSemaphore> create_binary_semaphore(VkDevice device, std::string_view role);

// The pipeline stages a wait of `stage` holds back.
[[nodiscard]] VkPipelineStageFlags wait_stage_mask(sync_stage stage) noexcept;

// A timeline semaphore whose counter starts at 0; `role` names it in errors.
// Errors: out_of_device_memory, out_of_host_memory, vulkan_error.
[[nodiscard]] result<VkSemaphore> create_timeline_semaphore(VkDevice device, std::string_view role);

// Waits until `semaphore` reaches `value` or `timeout_ns` passes: VK_SUCCESS,
// VK_TIMEOUT, VK_ERROR_DEVICE_LOST or an out-of-memory error.
[[nodiscard]] VkResult wait_timeline_semaphore(VkDevice device, VkSemaphore semaphore, std::uint64_t value,
                                               std::uint64_t timeout_ns) noexcept;

}  // namespace ferrum::gpu
