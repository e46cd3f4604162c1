// vulkan_timestamp_pool.hpp — a timestamp pool on the Vulkan device: one
// VkQueryPool of type VK_QUERY_TYPE_TIMESTAMP, whose results the GPU copies
// into a host-visible buffer of the pool's, converted through the device's
// clock (vulkan_timestamp_clock.hpp).
//
// A list's timestamp resets its query, writes it and copies it, with its
// availability, into the buffer (vulkan_command_list.cpp): the reset keeps
// a recording valid when it is submitted again (replay), and the copy runs on
// the queue, so a read is plain memory once the submission's value is
// reached. (Reading with vkGetQueryPoolResults instead would call into the
// driver from the reading thread while the queue runs: lavapipe serves it
// through the queue's own context, and frames drawn meanwhile came out
// wrong.) A slot whose availability word is zero was never copied.
//
//   auto pool = vulkan_timestamp_pool::create(owner, device, clock, std::move(buffer), 32);
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/arena.hpp"
#include "ferrum/gpu/timestamp_pool.hpp"

#include "vulkan/vulkan_timestamp_clock.hpp"

#include <vulkan/vulkan_core.h>

#include <cstdint>
#include <memory>
#include <optional>

namespace ferrum::gpu {

class vulkan_timestamp_pool final : public timestamp_pool {
 public:
  // Bytes of the buffer per slot: the 64-bit value and its availability.
  static constexpr std::size_t slot_bytes = 16;

  // `results`: a zero-filled arena of at least slots * slot_bytes bytes.
  // Errors: out_of_device_memory, out_of_host_memory, vulkan_error.
  [[nodiscard]] static result<std::unique_ptr<timestamp_pool>> create(const gpu::device& owner, VkDevice device,
                                                                      vulkan_timestamp_clock& clock,
                                                                      std::unique_ptr<arena> results,
                                                                      std::uint32_t slots);
  ~vulkan_timestamp_pool() override;

  [[nodiscard]] VkQueryPool handle() const noexcept { return pool_; }
  [[nodiscard]] const arena& results() const noexcept { return *results_; }

  // The raw ticks the GPU copied into `slot`; none when it never did.
  [[nodiscard]] std::optional<std::uint64_t> ticks(std::uint32_t slot) const noexcept;

 protected:
  result<void> do_read(std::uint32_t first, std::span<time_point> out) const override;

 private:
  vulkan_timestamp_pool(const gpu::device& owner, VkDevice device, vulkan_timestamp_clock& clock,
                        std::unique_ptr<arena> results, VkQueryPool pool, std::uint32_t slots) noexcept
      : timestamp_pool(owner, slots), device_(device), clock_(clock), results_(std::move(results)), pool_(pool) {}

  VkDevice device_;
  vulkan_timestamp_clock& clock_;
  std::unique_ptr<arena> results_;
  VkQueryPool pool_;
};

}  // namespace ferrum::gpu
