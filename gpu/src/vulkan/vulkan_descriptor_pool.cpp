#include "vulkan/vulkan_descriptor_pool.hpp"

#include "vulkan/vk_result.hpp"

#include <algorithm>

namespace ferrum::gpu {
namespace {

// Pools double from 16 sets up to 1024: few pools for many arenas, little
// waste for a device with a handful.
constexpr std::uint32_t first_pool_sets = 16;
constexpr std::uint32_t largest_pool_sets = 1024;

}  // namespace

vulkan_descriptor_pool::~vulkan_descriptor_pool() {
  for (const pool& p : pools_) vkDestroyDescriptorPool(device_, p.handle, nullptr);
}

result<vulkan_descriptor_pool::allocation> vulkan_descriptor_pool::allocate() {
  const std::lock_guard lock(mutex_);
  VkDescriptorSetAllocateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  info.descriptorSetCount = 1;
  info.pSetLayouts = &layout_;
  // Pools with room first. Counting live sets keeps allocations within each
  // pool's maxSets, so the driver is never asked for more than it promised;
  // a pool can still fail with VK_ERROR_FRAGMENTED_POOL (sets are freed in
  // any order), in which case the next pool is tried.
  for (std::size_t i = pools_.size(); i-- > 0;) {
    pool& p = pools_[i];
    if (p.live == p.capacity) continue;
    info.descriptorPool = p.handle;
    VkDescriptorSet set = VK_NULL_HANDLE;
    const VkResult r = vkAllocateDescriptorSets(device_, &info, &set);
    if (r == VK_SUCCESS) {
      ++p.live;
      return allocation{set, i};
    }
    if (r != VK_ERROR_FRAGMENTED_POOL && r != VK_ERROR_OUT_OF_POOL_MEMORY)
      return make_vk_error(r, "vkAllocateDescriptorSets");
  }

  const std::uint32_t sets = pools_.empty() ? first_pool_sets : std::min(largest_pool_sets, pools_.back().capacity * 2);
  VkDescriptorPoolSize size{};
  size.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  size.descriptorCount = sets;
  VkDescriptorPoolCreateInfo pool_info{};
  pool_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  // Arenas come and go independently: their sets are freed one by one, which
  // vkFreeDescriptorSets allows only for pools created with this flag.
  pool_info.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
  pool_info.maxSets = sets;
  pool_info.poolSizeCount = 1;
  pool_info.pPoolSizes = &size;
  pool created{};
  created.capacity = sets;
  // Room first, so that a pool once created is never leaked by a throw.
  pools_.reserve(pools_.size() + 1);
  if (VkResult r = vkCreateDescriptorPool(device_, &pool_info, nullptr, &created.handle); r != VK_SUCCESS)
    return make_vk_error(r, "vkCreateDescriptorPool");
  pools_.push_back(created);

  pool& p = pools_.back();
  info.descriptorPool = p.handle;
  VkDescriptorSet set = VK_NULL_HANDLE;
  if (VkResult r = vkAllocateDescriptorSets(device_, &info, &set); r != VK_SUCCESS)
    return make_vk_error(r, "vkAllocateDescriptorSets");
  ++p.live;
  return allocation{set, pools_.size() - 1};
}

void vulkan_descriptor_pool::free(allocation a) noexcept {
  const std::lock_guard lock(mutex_);
  pool& p = pools_[a.pool];
  // vkFreeDescriptorSets only returns VK_SUCCESS.
  (void)vkFreeDescriptorSets(device_, p.handle, 1, &a.set);
  --p.live;
}

}  // namespace ferrum::gpu
