// vulkan_image.hpp (private) — images on the Vulkan device: the VkFormat,
// usage and layout of ferrum's image terms, each image's memory
// requirements, a block of device-local memory with its images (each a
// VkImage bound at its offset, with a view of every level and layer), and
// views of ranges of them (device::create_image_view).
#pragma once

#include "ferrum/gpu/image.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include "vulkan/vulkan_arena.hpp"

#include <vulkan/vulkan_core.h>

#include <memory>
#include <span>
#include <vector>

namespace ferrum::gpu {

// vulkan_format and vulkan_layout: ferrum/gpu/vulkan_device.hpp.
// Every aspect of an image of `f` (color; depth, and stencil where it has
// one): what its barriers' subresource ranges cover. The one place that
// says (vk_view_aspect: what its views and copies show).
[[nodiscard]] VkImageAspectFlags aspects_of(image_format f) noexcept;
// What the physical device reports `f` can do with optimal tiling
// (vkGetPhysicalDeviceFormatProperties), as format_feature bits.
[[nodiscard]] std::uint32_t vulkan_format_features(VkPhysicalDevice physical, image_format f) noexcept;
// The aspect a view of an image of `f` shows: color, or depth alone (a
// depth-stencil image's view for sampling and depth tests).
[[nodiscard]] VkImageAspectFlags vk_view_aspect(image_format f) noexcept;
// The Vulkan usage flags of image_usage bits.
[[nodiscard]] VkImageUsageFlags vk_usage(std::uint32_t usage) noexcept;

// The stages and accesses of what an image in layout `l` is used for, on a
// queue family with (`graphics`) or without graphics, for the source
// (`writes` only) or destination scope of a barrier.
struct vk_scope {
  VkPipelineStageFlags stages = 0;
  VkAccessFlags accesses = 0;
};
[[nodiscard]] vk_scope vk_layout_scope(image_layout l, bool graphics, bool transfer_only, bool writes) noexcept;

// What an image of `spec` takes, asked of a VkImage made to be measured.
// Errors: the device's allocation errors.
[[nodiscard]] result<image_requirements> vulkan_image_requirements(const vulkan_arena::context& c,
                                                                   const image_spec& spec);

// A view of `range` of `image` (2D for one layer, 2D-array for more) where
// `spec`'s usage takes one (image_usage::viewed), else VK_NULL_HANDLE.
// Errors: the device's allocation errors.
[[nodiscard]] result<VkImageView> make_vk_image_view(VkDevice device, VkImage image, const image_spec& spec,
                                                     const image_subresources& range);
// A view of every level and layer.
[[nodiscard]] inline result<VkImageView> make_vk_image_view(VkDevice device, VkImage image, const image_spec& spec) {
  return make_vk_image_view(device, image, spec, image_subresources::whole(spec));
}

// An image of ferrum's terms over a VkImage and view it does not own (a
// block of image memory's, a swapchain's, or an engine's: an imported one
// owns the view it made, vulkan_image_import.cpp). Every image of the
// Vulkan device is one: its command lists take them as such.
class vulkan_image : public image {
 public:
  vulkan_image(const gpu::device& owner, const placed_image& placed, VkImage handle, VkImageView view) noexcept;
  [[nodiscard]] VkImage handle() const noexcept;
};

// A view of a range of an image (device::create_image_view), which it
// destroys; the GPU must be done with it by then.
class vulkan_range_view final : public image_view {
 public:
  vulkan_range_view(VkDevice device, const gpu::image& img, const image_subresources& range, VkImageView view) noexcept;
  ~vulkan_range_view() override;

 private:
  VkDevice device_;
};

class vulkan_image_memory final : public image_memory {
 public:
  // Errors: vulkan_feature_missing (no memory type takes every image), the
  // device's allocation errors.
  [[nodiscard]] static result<std::unique_ptr<image_memory>> create(const gpu::device& owner,
                                                                    const vulkan_arena::context& c,
                                                                    std::span<const placed_image> images,
                                                                    std::uint64_t bytes);
  // Destroys the views and images, frees the memory; the GPU must be done
  // with them.
  ~vulkan_image_memory() override;

 private:
  vulkan_image_memory(VkDevice device, std::uint64_t bytes) noexcept : image_memory(bytes), device_(device) {}

  VkDevice device_;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  std::vector<VkImage> handles_;
  std::vector<VkImageView> views_;
  std::vector<std::unique_ptr<vulkan_image>> images_;
};

}  // namespace ferrum::gpu
