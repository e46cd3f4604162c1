// vulkan_descriptor_pool.hpp — the device's descriptor sets for arenas: one
// set per arena (a single storage buffer), from pools that grow as needed.
//
// Arenas are made on the cold path, so sets are allocated there and freed with
// their arena; recording a dispatch only binds the set that already exists.
//
//   auto set = pools.allocate();           // under the pools' lock
//   ... vkUpdateDescriptorSets(set->set) ...
//   pools.free(*set);
//
// Thread safety: allocate and free may be called from any thread (descriptor
// pools are externally synchronized objects; a mutex serializes them).
#pragma once

#include "ferrum/error.hpp"

#include <vulkan/vulkan_core.h>

#include <cstdint>
#include <mutex>
#include <vector>

namespace ferrum::gpu {

class vulkan_descriptor_pool {
 public:
  // A set and the pool it came from (freeing a set names its pool).
  struct allocation {
    VkDescriptorSet set = VK_NULL_HANDLE;
    std::size_t pool = 0;
  };

  // Sets will have `layout`: one storage buffer at binding 0.
  vulkan_descriptor_pool(VkDevice device, VkDescriptorSetLayout layout) noexcept : device_(device), layout_(layout) {}
  vulkan_descriptor_pool(const vulkan_descriptor_pool&) = delete;
  vulkan_descriptor_pool& operator=(const vulkan_descriptor_pool&) = delete;
  // Destroys the pools (and with them any set not freed).
  ~vulkan_descriptor_pool();

  // A new set. Errors: out_of_device_memory, out_of_host_memory, vulkan_error.
  [[nodiscard]] result<allocation> allocate();

  // Returns `a` to its pool.
  void free(allocation a) noexcept;

 private:
  struct pool {
    VkDescriptorPool handle = VK_NULL_HANDLE;
    std::uint32_t capacity = 0;  // sets (one descriptor each)
    std::uint32_t live = 0;
  };

  VkDevice device_;
  VkDescriptorSetLayout layout_;
  std::mutex mutex_;
  std::vector<pool> pools_;
};

}  // namespace ferrum::gpu
