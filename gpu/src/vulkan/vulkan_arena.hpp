// vulkan_arena.hpp — an arena on the Vulkan device: one VkBuffer in its own
// host-visible, coherent allocation, mapped for the arena's whole life, with
// the descriptor set that binds it to a kernel.
//
//   auto a = vulkan_arena::create(owner, parts, 4096);
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

namespace ferrum::gpu {

class vulkan_arena final : public arena {
 public:
  // What an arena is made from: the owner's objects.
  struct context {
    VkDevice device = VK_NULL_HANDLE;
    const VkPhysicalDeviceMemoryProperties* memory = nullptr;
    vulkan_descriptor_pool* descriptors = nullptr;
    // The distinct queue families of the device's queues (1 or 2): with two,
    // the buffer is shared between them.
    std::array<std::uint32_t, 2> families{};
    std::uint32_t family_count = 1;
  };

  // A zero-filled arena of `bytes` bytes. Errors: out_of_device_memory,
  // out_of_host_memory, vulkan_feature_missing (the buffer allows no
  // host-coherent memory type), vulkan_error.
  [[nodiscard]] static result<std::unique_ptr<arena>> create(const gpu::device& owner, const context& c,
                                                             std::size_t bytes);

  // Frees the set, unmaps and frees the memory, destroys the buffer. The GPU
  // must be done with the arena (arena.hpp).
  ~vulkan_arena() override;

  [[nodiscard]] VkBuffer buffer() const noexcept { return buffer_; }
  // Binding 0: the whole buffer as a storage buffer.
  [[nodiscard]] const VkDescriptorSet& descriptor_set() const noexcept { return set_.set; }

 private:
  // The parts of an arena under construction; whatever was made is released
  // by ~parts when construction fails.
  struct parts {
    context owner;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void* mapped = nullptr;
    vulkan_descriptor_pool::allocation set;
    bool has_set = false;

    parts() = default;
    parts(const parts&) = delete;
    parts& operator=(const parts&) = delete;
    ~parts();
    void release() noexcept;
  };

  vulkan_arena(const gpu::device& owner, parts& made, std::size_t bytes) noexcept;

  context context_;
  VkBuffer buffer_;
  VkDeviceMemory memory_;
  vulkan_descriptor_pool::allocation set_;
};

}  // namespace ferrum::gpu
