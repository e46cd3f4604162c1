#include "vulkan/vulkan_arena.hpp"

#include "vulkan/vk_result.hpp"
#include "vulkan/vulkan_physical_device.hpp"

#include <cstring>
#include <string>

namespace ferrum::gpu {

vulkan_arena::parts::~parts() {
  if (has_set) owner.descriptors->free(set);
  // vkFreeMemory unmaps implicitly; vkUnmapMemory first keeps the order
  // explicit.
  if (mapped != nullptr) vkUnmapMemory(owner.device, memory);
  if (buffer != VK_NULL_HANDLE) vkDestroyBuffer(owner.device, buffer, nullptr);
  if (memory != VK_NULL_HANDLE) vkFreeMemory(owner.device, memory, nullptr);
}

void vulkan_arena::parts::release() noexcept {
  buffer = VK_NULL_HANDLE;
  memory = VK_NULL_HANDLE;
  mapped = nullptr;
  has_set = false;
}

result<std::unique_ptr<arena>> vulkan_arena::create(const gpu::device& owner, const context& c, std::size_t bytes) {
  parts made;
  made.owner = c;
  const std::string what = "arena of " + std::to_string(bytes) + " bytes: ";

  VkBufferCreateInfo buffer_info{};
  buffer_info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  buffer_info.size = bytes;
  // STORAGE for kernels, TRANSFER_SRC/DST for copy and fill (vkCmdFillBuffer
  // needs TRANSFER_DST).
  buffer_info.usage =
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if (c.family_count > 1) {
    // Compute and transfer queues of different families both use every
    // arena (a node's output is the next node's input, on either queue):
    // CONCURRENT sharing lets each family access it without queue family
    // ownership transfers, which would need a release and an acquire barrier
    // around every cross-queue handoff. The semaphore waits between the
    // queues order the accesses.
    buffer_info.sharingMode = VK_SHARING_MODE_CONCURRENT;
    buffer_info.queueFamilyIndexCount = c.family_count;
    buffer_info.pQueueFamilyIndices = c.families.data();
  } else {
    // One queue family uses it (one queue, or two queues of one family:
    // ownership belongs to families, not queues): exclusive ownership needs
    // no transfers.
    buffer_info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  }
  if (VkResult r = vkCreateBuffer(c.device, &buffer_info, nullptr, &made.buffer); r != VK_SUCCESS) {
    made.buffer = VK_NULL_HANDLE;
    return make_vk_error(r, what + "vkCreateBuffer");
  }

  VkMemoryRequirements requirements{};
  vkGetBufferMemoryRequirements(c.device, made.buffer, &requirements);
  const int type = find_memory_type(*c.memory, requirements.memoryTypeBits, arena_memory_flags);
  if (type < 0)
    return make_error(errc::vulkan_feature_missing, what + "no host-visible coherent memory type fits the buffer");

  VkMemoryAllocateInfo allocate_info{};
  allocate_info.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  allocate_info.allocationSize = requirements.size;
  allocate_info.memoryTypeIndex = static_cast<std::uint32_t>(type);
  if (VkResult r = vkAllocateMemory(c.device, &allocate_info, nullptr, &made.memory); r != VK_SUCCESS) {
    made.memory = VK_NULL_HANDLE;
    return make_vk_error(r, what + "vkAllocateMemory");
  }
  if (VkResult r = vkBindBufferMemory(c.device, made.buffer, made.memory, 0); r != VK_SUCCESS)
    return make_vk_error(r, what + "vkBindBufferMemory");
  // Persistently mapped: coherent memory needs no flush or invalidate, and a
  // mapping may stay while the GPU uses the memory.
  if (VkResult r = vkMapMemory(c.device, made.memory, 0, VK_WHOLE_SIZE, 0, &made.mapped); r != VK_SUCCESS) {
    made.mapped = nullptr;
    return make_vk_error(r, what + "vkMapMemory");
  }
  // Fresh device memory has undefined contents; arenas start zeroed. No
  // submission has used the memory, so no synchronization is needed.
  std::memset(made.mapped, 0, bytes);

  auto set = c.descriptors->allocate();
  if (!set) {
    error e = set.error();
    e.detail = what + e.detail;
    return e;
  }
  made.set = *set;
  made.has_set = true;
  VkDescriptorBufferInfo buffer_range{};
  buffer_range.buffer = made.buffer;
  buffer_range.offset = 0;
  // The device's max_arena_bytes keeps the whole buffer within
  // maxStorageBufferRange, as a storage descriptor's range must be.
  buffer_range.range = VK_WHOLE_SIZE;
  VkWriteDescriptorSet write{};
  write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
  write.dstSet = made.set.set;
  write.dstBinding = 0;
  write.descriptorCount = 1;
  write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  write.pBufferInfo = &buffer_range;
  vkUpdateDescriptorSets(c.device, 1, &write, 0, nullptr);

  return std::unique_ptr<arena>(new vulkan_arena(owner, made, bytes));
}

vulkan_arena::vulkan_arena(const gpu::device& owner, parts& made, std::size_t bytes) noexcept
    : arena(owner, {static_cast<std::byte*>(made.mapped), bytes}, reinterpret_cast<std::uint64_t>(made.buffer)),
      context_(made.owner),
      buffer_(made.buffer),
      memory_(made.memory),
      set_(made.set) {
  made.release();
}

vulkan_arena::~vulkan_arena() {
  context_.descriptors->free(set_);
  vkUnmapMemory(context_.device, memory_);
  vkDestroyBuffer(context_.device, buffer_, nullptr);
  vkFreeMemory(context_.device, memory_, nullptr);
}

}  // namespace ferrum::gpu
