// vulkan_event.hpp — an event (ferrum/gpu/event.hpp) over a VkEvent the
// device made, device-only where synchronization2 is enabled (the host
// never sets or reads it); destroyed with this object.
#pragma once

#include "ferrum/gpu/event.hpp"

#include <vulkan/vulkan_core.h>

namespace ferrum::gpu {

class vulkan_event final : public event {
 public:
  vulkan_event(const gpu::device& owner, VkDevice device, VkEvent handle) noexcept
      : event(owner), device_(device), handle_(handle) {}
  vulkan_event(const vulkan_event&) = delete;
  vulkan_event& operator=(const vulkan_event&) = delete;
  ~vulkan_event() override { vkDestroyEvent(device_, handle_, nullptr); }

  [[nodiscard]] VkEvent handle() const noexcept { return handle_; }

 private:
  VkDevice device_;
  VkEvent handle_;
};

}  // namespace ferrum::gpu
