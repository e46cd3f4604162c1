#include "vulkan/vulkan_arena.hpp"

#include "vulkan/vk_result.hpp"
#include "vulkan/vulkan_physical_device.hpp"

#include <cstring>
#include <initializer_list>
#include <string>

namespace ferrum::gpu {
namespace {

using allocation = vulkan_arena::allocation;

constexpr VkMemoryPropertyFlags device_local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
constexpr VkMemoryPropertyFlags host_visible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
constexpr VkMemoryPropertyFlags host_coherent = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
constexpr VkMemoryPropertyFlags host_cached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;

void destroy(VkDevice device, allocation& a) noexcept {
  // vkFreeMemory unmaps implicitly; vkUnmapMemory first keeps the order
  // explicit.
  if (a.mapped != nullptr) vkUnmapMemory(device, a.memory);
  if (a.buffer != VK_NULL_HANDLE) vkDestroyBuffer(device, a.buffer, nullptr);
  if (a.memory != VK_NULL_HANDLE) vkFreeMemory(device, a.memory, nullptr);
  a = {};
}

// An allocation being made, freed unless released.
struct pending {
  VkDevice device;
  allocation made;
  ~pending() { destroy(device, made); }
  allocation release() noexcept { return std::exchange(made, {}); }
};

// A buffer of `bytes` bytes in the first memory type of `wanted` (in order
// of preference) that fits it; when `map` and the type is host-visible,
// mapped and zero-filled by the host. A buffer not mapped is left for the
// GPU to zero (vulkan_device::zero_on_gpu): its size is rounded up to 4
// bytes, so that one vkCmdFillBuffer of VK_WHOLE_SIZE reaches every byte.
// vulkan_feature_missing when no wanted type fits.
result<allocation> allocate(const vulkan_arena::context& c, std::size_t bytes,
                            std::initializer_list<VkMemoryPropertyFlags> wanted, bool map, const std::string& what) {
  pending p{c.device, {}};
  VkBufferCreateInfo buffer_info{};
  buffer_info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  buffer_info.size = (bytes + 3) / 4 * 4;
  // STORAGE for kernels, TRANSFER_SRC/DST for copy, fill (vkCmdFillBuffer
  // needs TRANSFER_DST) and staging; VERTEX, INDEX, INDIRECT and UNIFORM
  // for raster nodes' draws over the lane's buffers (native commands).
  buffer_info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                      VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_VERTEX_BUFFER_BIT |
                      VK_BUFFER_USAGE_INDEX_BUFFER_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT |
                      VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT;
  // A device address for the engine's shaders (native nodes), where enabled.
  if (c.buffer_device_address) buffer_info.usage |= VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
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
  if (VkResult r = vkCreateBuffer(c.device, &buffer_info, nullptr, &p.made.buffer); r != VK_SUCCESS) {
    p.made.buffer = VK_NULL_HANDLE;
    return make_vk_error(r, what + "vkCreateBuffer");
  }
  VkMemoryRequirements requirements{};
  vkGetBufferMemoryRequirements(c.device, p.made.buffer, &requirements);
  int type = -1;
  for (VkMemoryPropertyFlags flags : wanted)
    if (type = find_memory_type(*c.memory, requirements.memoryTypeBits, flags); type >= 0) break;
  if (type < 0)
    return make_error(errc::vulkan_feature_missing, what + "no memory type of the kind asked fits the buffer");
  const VkMemoryPropertyFlags flags = c.memory->memoryTypes[type].propertyFlags;

  VkMemoryAllocateFlagsInfo allocate_flags{};
  allocate_flags.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO;
  allocate_flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo allocate_info{};
  allocate_info.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  if (c.buffer_device_address) allocate_info.pNext = &allocate_flags;
  allocate_info.allocationSize = requirements.size;
  allocate_info.memoryTypeIndex = static_cast<std::uint32_t>(type);
  if (VkResult r = vkAllocateMemory(c.device, &allocate_info, nullptr, &p.made.memory); r != VK_SUCCESS) {
    p.made.memory = VK_NULL_HANDLE;
    return make_vk_error(r, what + "vkAllocateMemory");
  }
  if (VkResult r = vkBindBufferMemory(c.device, p.made.buffer, p.made.memory, 0); r != VK_SUCCESS)
    return make_vk_error(r, what + "vkBindBufferMemory");
  p.made.coherent = (flags & host_coherent) != 0;
  if (map && (flags & host_visible) != 0) {
    // Fresh device memory has undefined contents; arenas start zeroed. No
    // submission has used the memory, so no synchronization is needed; a
    // mapping may stay while the GPU uses the memory.
    void* mapped = nullptr;
    if (VkResult r = vkMapMemory(c.device, p.made.memory, 0, VK_WHOLE_SIZE, 0, &mapped); r != VK_SUCCESS)
      return make_vk_error(r, what + "vkMapMemory");
    p.made.mapped = mapped;
    std::memset(mapped, 0, bytes);
    if (!p.made.coherent) {
      VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, p.made.memory, 0, VK_WHOLE_SIZE};
      (void)vkFlushMappedMemoryRanges(c.device, 1, &range);
    }
  }
  // Memory not mapped here (a device arena's, a staged arena's device-local
  // buffer, host-visible or not) is zeroed by a fill on the GPU, even where
  // the host could map it: so lavapipe, whose one memory type is
  // host-visible, runs the path of a discrete GPU.
  return p.release();
}

// A descriptor set binding `buffer` whole as a storage buffer (binding 0).
result<vulkan_descriptor_pool::allocation> bind_set(const vulkan_arena::context& c, VkBuffer buffer,
                                                    const std::string& what) {
  auto set = c.descriptors->allocate();
  if (!set) {
    error e = set.error();
    e.detail = what + e.detail;
    return e;
  }
  VkDescriptorBufferInfo buffer_range{};
  buffer_range.buffer = buffer;
  buffer_range.offset = 0;
  // The device's max_arena_bytes keeps the whole buffer within
  // maxStorageBufferRange, as a storage descriptor's range must be.
  buffer_range.range = VK_WHOLE_SIZE;
  VkWriteDescriptorSet write{};
  write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
  write.dstSet = set->set;
  write.dstBinding = 0;
  write.descriptorCount = 1;
  write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  write.pBufferInfo = &buffer_range;
  vkUpdateDescriptorSets(c.device, 1, &write, 0, nullptr);
  return set;
}

VkDeviceAddress address_of(const vulkan_arena::context& c, VkBuffer buffer) noexcept {
  VkBufferDeviceAddressInfo address_info{};
  address_info.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO;
  address_info.buffer = buffer;
  return vkGetBufferDeviceAddress(c.device, &address_info);
}

}  // namespace

result<std::unique_ptr<arena>> vulkan_arena::create(const gpu::device& owner, const context& c, std::size_t bytes,
                                                    std::optional<memory_class> cls) {
  const std::string what = "arena of " + std::to_string(bytes) + " bytes: ";
  // The buffer commands use, and, for a staged class, the host's buffer.
  result<allocation> main = allocation{};
  result<allocation> staging = allocation{};
  // Device memory first; memory of any kind where none fits.
  const std::initializer_list<VkMemoryPropertyFlags> device_first = {device_local, 0};
  if (!cls) {
    main = allocate(c, bytes, {host_visible | host_coherent}, true, what);
  } else if (*cls == memory_class::device) {
    main = allocate(c, bytes, device_first, false, what);
  } else {
    // Upload: device-local memory the host writes (BAR, resizable BAR, or
    // unified memory). Readback: host-visible device-local memory (unified
    // memory), cached for the host's reads where offered. Else staged.
    const bool upload = *cls == memory_class::upload;
    if (!c.discrete_layout)
      main = upload ? allocate(c, bytes, {device_local | host_visible | host_coherent}, true, what)
                    : allocate(c, bytes, {device_local | host_visible | host_cached, device_local | host_visible}, true,
                               what);
    if (c.discrete_layout || (!main && main.error().code == errc::vulkan_feature_missing)) {
      main = allocate(c, bytes, device_first, false, what);
      if (main)
        staging = upload ? allocate(c, bytes, {host_visible | host_coherent}, true, what + "staging: ")
                         : allocate(c, bytes, {host_visible | host_cached, host_visible}, true, what + "staging: ");
    }
  }
  if (!main) return main.error();
  pending kept{c.device, *main};
  if (!staging) return staging.error();
  pending kept_staging{c.device, *staging};

  auto set = bind_set(c, main->buffer, what);
  if (!set) return set.error();
  VkDeviceAddress address = 0;
  if (c.buffer_device_address) address = address_of(c, main->buffer);
  std::unique_ptr<vulkan_arena> made(
      new vulkan_arena(owner, c, bytes, cls, kept.release(), kept_staging.release(), *set));
  made->set_device_address(address);
  return std::unique_ptr<arena>(std::move(made));
}

result<std::unique_ptr<arena>> vulkan_arena::adopt(const gpu::device& owner, const context& c, VkBuffer buffer,
                                                   std::size_t bytes, std::uint32_t usage, std::uint32_t queues,
                                                   bool addressable) {
  const std::string what = "imported buffer of " + std::to_string(bytes) + " bytes: ";
  VkMemoryRequirements requirements{};
  vkGetBufferMemoryRequirements(c.device, buffer, &requirements);
  if (requirements.size < bytes)
    return make_error(errc::invalid_arena_size,
                      what + "the buffer holds at most " + std::to_string(requirements.size) + " bytes");
  // A buffer without storage usage has no storage descriptor: no kernel
  // binds it (command_list::dispatch refuses it).
  vulkan_descriptor_pool::allocation set{};
  if ((usage & buffer_usage::storage) != 0) {
    auto bound = bind_set(c, buffer, what);
    if (!bound) return bound.error();
    set = *bound;
  }
  std::unique_ptr<vulkan_arena> made(
      new vulkan_arena(owner, c, bytes, memory_class::imported, allocation{buffer}, allocation{}, set));
  made->owned_ = false;
  made->set_usage(usage);
  made->set_queues(queues);
  if (c.buffer_device_address && addressable) made->set_device_address(address_of(c, buffer));
  return std::unique_ptr<arena>(std::move(made));
}

namespace {

std::span<std::byte> host_of(std::optional<memory_class> cls, const allocation& main, const allocation& staging,
                             std::size_t bytes) noexcept {
  if (cls && !host_touches(*cls)) return {};
  void* mapped = staging.buffer != VK_NULL_HANDLE ? staging.mapped : main.mapped;
  return {static_cast<std::byte*>(mapped), bytes};
}

}  // namespace

vulkan_arena::vulkan_arena(const gpu::device& owner, const context& c, std::size_t bytes,
                           std::optional<memory_class> cls, allocation main, allocation staging,
                           vulkan_descriptor_pool::allocation set) noexcept
    : arena(owner, host_of(cls, main, staging, bytes), bytes, reinterpret_cast<std::uint64_t>(main.buffer),
            cls.value_or(memory_class::upload), staging.buffer != VK_NULL_HANDLE),
      context_(c),
      main_(main),
      staging_(staging),
      set_(set) {}

vulkan_arena::~vulkan_arena() {
  if (set_.set != VK_NULL_HANDLE) context_.descriptors->free(set_);
  if (owned_) destroy(context_.device, main_);
  destroy(context_.device, staging_);
}

result<void> vulkan_arena::do_invalidate() {
  const allocation& host = staging_.buffer != VK_NULL_HANDLE ? staging_ : main_;
  if (host.mapped == nullptr || host.coherent) return {};
  VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, host.memory, 0, VK_WHOLE_SIZE};
  if (VkResult r = vkInvalidateMappedMemoryRanges(context_.device, 1, &range); r != VK_SUCCESS)
    return make_vk_error(r, "arena: vkInvalidateMappedMemoryRanges");
  return {};
}

}  // namespace ferrum::gpu
