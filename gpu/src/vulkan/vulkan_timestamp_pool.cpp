#include "vulkan/vulkan_timestamp_pool.hpp"

#include "vulkan/vk_result.hpp"

#include <algorithm>
#include <array>
#include <string>

namespace ferrum::gpu {

result<std::unique_ptr<timestamp_pool>> vulkan_timestamp_pool::create(const gpu::device& owner, VkDevice device,
                                                                      vulkan_timestamp_clock& clock,
                                                                      std::uint32_t slots) {
  VkQueryPoolCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  info.queryCount = slots;
  VkQueryPool pool = VK_NULL_HANDLE;
  if (VkResult r = vkCreateQueryPool(device, &info, nullptr, &pool); r != VK_SUCCESS)
    return make_vk_error(r, "vkCreateQueryPool of " + std::to_string(slots) + " timestamps");
  return std::unique_ptr<timestamp_pool>(new vulkan_timestamp_pool(owner, device, clock, pool, slots));
}

vulkan_timestamp_pool::~vulkan_timestamp_pool() { vkDestroyQueryPool(device_, pool_, nullptr); }

result<void> vulkan_timestamp_pool::do_read(std::uint32_t first, std::span<time_point> out) const {
  // In chunks through the stack: a read allocates nothing.
  std::array<std::uint64_t, 64> ticks{};
  for (std::size_t done = 0; done < out.size();) {
    const auto count = static_cast<std::uint32_t>(std::min(ticks.size(), out.size() - done));
    const auto at = static_cast<std::uint32_t>(first + done);
    // No WAIT bit: the caller read the slots after their submission's value
    // was reached, so a slot not available now was never written.
    const VkResult r = vkGetQueryPoolResults(device_, pool_, at, count, count * sizeof(std::uint64_t), ticks.data(),
                                             sizeof(std::uint64_t), VK_QUERY_RESULT_64_BIT);
    if (r == VK_NOT_READY)
      return make_error(errc::timestamp_unavailable, "slots [" + std::to_string(at) + ", +" + std::to_string(count) +
                                                         ") hold no timestamp of a completed submission");
    if (r != VK_SUCCESS) return make_vk_error(r, "vkGetQueryPoolResults");
    clock_.convert(std::span(ticks).first(count), out.subspan(done, count));
    done += count;
  }
  return {};
}

}  // namespace ferrum::gpu
