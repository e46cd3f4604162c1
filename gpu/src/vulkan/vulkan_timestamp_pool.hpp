// vulkan_timestamp_pool.hpp — a timestamp pool on the Vulkan device: one
// VkQueryPool of type VK_QUERY_TYPE_TIMESTAMP, converted through the device's
// clock (vulkan_timestamp_clock.hpp).
//
// Lists reset a query right before they write it (vulkan_command_list.cpp),
// so a recording stays valid when it is submitted again (replay), and a slot
// whose write has not run since its reset reads as unavailable.
//
//   auto pool = vulkan_timestamp_pool::create(owner, device, clock, 32);
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/timestamp_pool.hpp"

#include "vulkan/vulkan_timestamp_clock.hpp"

#include <vulkan/vulkan_core.h>

#include <memory>

namespace ferrum::gpu {

class vulkan_timestamp_pool final : public timestamp_pool {
 public:
  // Errors: out_of_device_memory, out_of_host_memory, vulkan_error.
  [[nodiscard]] static result<std::unique_ptr<timestamp_pool>> create(const gpu::device& owner, VkDevice device,
                                                                      vulkan_timestamp_clock& clock,
                                                                      std::uint32_t slots);
  ~vulkan_timestamp_pool() override;

  [[nodiscard]] VkQueryPool handle() const noexcept { return pool_; }

 protected:
  result<void> do_read(std::uint32_t first, std::span<time_point> out) const override;

 private:
  vulkan_timestamp_pool(const gpu::device& owner, VkDevice device, vulkan_timestamp_clock& clock, VkQueryPool pool,
                        std::uint32_t slots) noexcept
      : timestamp_pool(owner, slots), device_(device), clock_(clock), pool_(pool) {}

  VkDevice device_;
  vulkan_timestamp_clock& clock_;
  VkQueryPool pool_;
};

}  // namespace ferrum::gpu
