// vulkan_arena.hpp — an arena on the Vulkan device: the VkBuffer commands
// use, in memory of the arena's class, with the descriptor set that binds it
// to a kernel; for a staged arena, a second, host-visible buffer that
// command_list::stage copies (arena.hpp). Host-visible memory stays mapped
// for the arena's whole life.
//
//   auto a = vulkan_arena::create(owner, parts, 4096, memory_class::upload, false);
//   std::memcpy((*a)->bytes().data(), input, 64);   // seen by the next submit
//   vkCmdBindDescriptorSets(..., &(*a)->descriptor_set(), ...);
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/arena.hpp"

#include "vulkan/vulkan_descriptor_pool.hpp"

#include <vulkan/vulkan_core.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace ferrum::gpu {

class vulkan_arena final : public arena {
 public:
  // What an arena is made from: the owner's objects.
  struct context {
    VkDevice device = VK_NULL_HANDLE;
    const VkPhysicalDeviceMemoryProperties* memory = nullptr;
    vulkan_descriptor_pool* descriptors = nullptr;
    // The distinct queue families of the device's queues (1 to 3): with more,
    // the buffers are shared between them.
    std::array<std::uint32_t, 3> families{};
    std::uint32_t family_count = 1;
    // vulkan_device_options::discrete_layout: upload and readback staged.
    bool discrete_layout = false;
    // bufferDeviceAddress is enabled: buffers are made addressable.
    bool buffer_device_address = false;
  };

  // An arena of `bytes` bytes of `cls` (nullopt: create_arena(bytes)'s
  // host-visible coherent arena), its mapped buffers zero-filled; when
  // zeroed_on_gpu(), the owner zeroes the other before handing it out.
  // Errors: out_of_device_memory, out_of_host_memory,
  // vulkan_feature_missing (no memory type fits the buffer), vulkan_error.
  [[nodiscard]] static result<std::unique_ptr<arena>> create(const gpu::device& owner, const context& c,
                                                             std::size_t bytes, std::optional<memory_class> cls);

  // An engine's buffer of at least `bytes` bytes, as an arena of class
  // imported (gpu::import_vulkan_buffer) with `usage` (buffer_usage bits,
  // what it was made with) and `queues` (the kinds it is shared with,
  // arena::queues): its own descriptor set where it has storage
  // usage, its device address where `addressable` and the device has them;
  // the buffer stays the engine's. Errors: invalid_arena_size (the buffer's memory
  // requirements are smaller than `bytes`), the descriptor pool's.
  [[nodiscard]] static result<std::unique_ptr<arena>> adopt(const gpu::device& owner, const context& c, VkBuffer buffer,
                                                            std::size_t bytes, std::uint32_t usage,
                                                            std::uint32_t queues, bool addressable);

  // Frees the set, unmaps and frees the memory, destroys the buffers (an
  // adopted buffer is left to its engine). The GPU must be done with the
  // arena (arena.hpp).
  ~vulkan_arena() override;

  // The buffer commands use.
  [[nodiscard]] VkBuffer buffer() const noexcept { return main_.buffer; }
  // The staging buffer (VK_NULL_HANDLE when not staged).
  [[nodiscard]] VkBuffer staging_buffer() const noexcept { return staging_.buffer; }
  // Whether the buffer commands use is not mapped for the host (a device
  // arena's, a staged arena's), so that only a fill on the GPU zeroes it:
  // vkCmdFillBuffer of VK_WHOLE_SIZE, which covers every byte of it.
  [[nodiscard]] bool zeroed_on_gpu() const noexcept { return main_.mapped == nullptr; }
  // Binding 0: the whole buffer as a storage buffer.
  [[nodiscard]] const VkDescriptorSet& descriptor_set() const noexcept { return set_.set; }

  // One buffer in its own allocation, mapped when host-visible and asked to.
  struct allocation {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void* mapped = nullptr;
    bool coherent = true;
  };

 private:
  vulkan_arena(const gpu::device& owner, const context& c, std::size_t bytes, std::optional<memory_class> cls,
               allocation main, allocation staging, vulkan_descriptor_pool::allocation set) noexcept;

  result<void> do_invalidate() override;

  context context_;
  allocation main_;
  allocation staging_;
  vulkan_descriptor_pool::allocation set_;
  // False for an engine's buffer (adopt): not destroyed here.
  bool owned_ = true;
};

}  // namespace ferrum::gpu
