// vulkan_kernel_layouts.hpp (private) — the kernel ABI's Vulkan objects
// (ferrum/gpu/kernel.hpp): a descriptor set layout per kind of operand (one
// storage buffer, storage image or sampled image at binding 0), a pipeline
// layout per pair of a primary's and a secondary's kind, all with 128 bytes
// of compute push constants; and the sets a command list binds its image
// operands with.
//
// An arena's set is made with the arena (vulkan_descriptor_pool.hpp); an
// image's is made when a list records a dispatch over it, from the list's
// own pools, which its next begin() resets: an image may be a swapchain's
// or the engine's, and a set per recording costs nothing once a lane
// replays its lists.
//
//   auto layouts = vulkan_kernel_layouts::create(device);
//   VkPipelineLayout l = layouts->pipeline_layout(kernel_operand_kind::storage_image,
//                                                 kernel_operand_kind::sampled_image);
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/image.hpp"
#include "ferrum/gpu/kernel.hpp"

#include <vulkan/vulkan_core.h>

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

namespace ferrum::gpu {

class vulkan_kernel_layouts {
 public:
  // Every push-constant byte a kernel may read: the 4 range words and up to
  // 28 of its own (the 128 bytes every Vulkan implementation offers).
  static constexpr std::uint32_t push_constant_bytes = 128;

  // Errors: out_of_device_memory, out_of_host_memory, vulkan_error.
  [[nodiscard]] static result<std::unique_ptr<vulkan_kernel_layouts>> create(VkDevice device);
  vulkan_kernel_layouts(const vulkan_kernel_layouts&) = delete;
  vulkan_kernel_layouts& operator=(const vulkan_kernel_layouts&) = delete;
  ~vulkan_kernel_layouts();

  [[nodiscard]] VkDescriptorSetLayout set_layout(kernel_operand_kind kind) const noexcept {
    return set_layouts_[static_cast<std::size_t>(kind)];
  }
  // `primary` a buffer or a storage image (device::create_kernel checks).
  [[nodiscard]] VkPipelineLayout pipeline_layout(kernel_operand_kind primary,
                                                 kernel_operand_kind secondary) const noexcept {
    return pipeline_layouts_[static_cast<std::size_t>(primary) * kinds + static_cast<std::size_t>(secondary)];
  }

 private:
  static constexpr std::size_t kinds = 3;
  explicit vulkan_kernel_layouts(VkDevice device) noexcept : device_(device) {}

  VkDevice device_;
  std::array<VkDescriptorSetLayout, kinds> set_layouts_{};
  // Rows: a buffer primary, a storage image primary.
  std::array<VkPipelineLayout, 2 * kinds> pipeline_layouts_{};
};

// A command list's descriptor sets for the operands its dispatches bind
// that are not an arena's whole buffer (the arena's own set): images, and
// exact buffer ranges (vulkan_command_list::context::exact_operands_alignment).
// One thread at a time (the list's recording thread).
class vulkan_operand_sets {
 public:
  vulkan_operand_sets(VkDevice device, const vulkan_kernel_layouts& layouts) noexcept
      : device_(device), layouts_(&layouts) {}
  vulkan_operand_sets(const vulkan_operand_sets&) = delete;
  vulkan_operand_sets& operator=(const vulkan_operand_sets&) = delete;
  ~vulkan_operand_sets();

  // A set binding `view` (a whole image's, or a view of one level and
  // layer of it) as an operand of `kind` (storage or sampled image) in
  // `layout`. Errors: out_of_device_memory, out_of_host_memory,
  // vulkan_error.
  [[nodiscard]] result<VkDescriptorSet> bind(VkImageView view, kernel_operand_kind kind, image_layout layout);
  // A set binding `bytes` bytes of `buffer` from `offset` (a multiple of
  // minStorageBufferOffsetAlignment) as a buffer operand. Errors: as above.
  [[nodiscard]] result<VkDescriptorSet> bind(VkBuffer buffer, VkDeviceSize offset, VkDeviceSize bytes);

  // Frees every set: the list's last submission is done with them.
  void reset() noexcept;

 private:
  VkDevice device_;
  const vulkan_kernel_layouts* layouts_;
  std::vector<VkDescriptorPool> pools_;
  std::size_t current_ = 0;  // the pool sets come from, until it is full

  // A new set of `kind`'s layout, from the current pool or a new one.
  [[nodiscard]] result<VkDescriptorSet> allocate(kernel_operand_kind kind);
};

}  // namespace ferrum::gpu
