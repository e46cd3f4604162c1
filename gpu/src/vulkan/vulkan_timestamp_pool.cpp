#include "vulkan/vulkan_timestamp_pool.hpp"

#include "vulkan/vk_result.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

namespace ferrum::gpu {

result<std::unique_ptr<timestamp_pool>> vulkan_timestamp_pool::create(const gpu::device& owner, VkDevice device,
                                                                      vulkan_timestamp_clock& clock,
                                                                      std::unique_ptr<arena> results,
                                                                      std::uint32_t slots) {
  VkQueryPoolCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  info.queryCount = slots;
  VkQueryPool pool = VK_NULL_HANDLE;
  if (VkResult r = vkCreateQueryPool(device, &info, nullptr, &pool); r != VK_SUCCESS)
    return make_vk_error(r, "vkCreateQueryPool of " + std::to_string(slots) + " timestamps");
  return std::unique_ptr<timestamp_pool>(
      new vulkan_timestamp_pool(owner, device, clock, std::move(results), pool, slots));
}

vulkan_timestamp_pool::~vulkan_timestamp_pool() { vkDestroyQueryPool(device_, pool_, nullptr); }

std::optional<std::uint64_t> vulkan_timestamp_pool::ticks(std::uint32_t slot) const noexcept {
  std::array<std::uint64_t, 2> copied{};  // the value, then its availability
  std::memcpy(copied.data(), results_->bytes().data() + std::size_t{slot} * slot_bytes, sizeof copied);
  if (copied[1] == 0) return std::nullopt;
  return copied[0];
}

result<void> vulkan_timestamp_pool::do_read(std::uint32_t first, std::span<time_point> out) const {
  // In chunks through the stack: a read allocates nothing.
  std::array<std::uint64_t, 64> chunk{};
  for (std::size_t done = 0; done < out.size();) {
    const std::size_t count = std::min(chunk.size(), out.size() - done);
    for (std::size_t i = 0; i < count; ++i) {
      const auto slot = static_cast<std::uint32_t>(first + done + i);
      const std::optional<std::uint64_t> t = ticks(slot);
      if (!t) return make_error(errc::timestamp_unavailable, "slot " + std::to_string(slot) + " was never written");
      chunk[i] = *t;
    }
    clock_.convert(std::span(chunk).first(count), out.subspan(done, count));
    done += count;
  }
  return {};
}

}  // namespace ferrum::gpu
