#include "vulkan/vulkan_image.hpp"

#include "vulkan/vk_result.hpp"
#include "vulkan/vulkan_physical_device.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <utility>

namespace ferrum::gpu {

VkImageUsageFlags vk_usage(std::uint32_t usage) noexcept {
  VkImageUsageFlags out = 0;
  if ((usage & image_usage::sampled) != 0) out |= VK_IMAGE_USAGE_SAMPLED_BIT;
  if ((usage & image_usage::storage) != 0) out |= VK_IMAGE_USAGE_STORAGE_BIT;
  if ((usage & image_usage::color_attachment) != 0) out |= VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT;
  if ((usage & image_usage::depth_attachment) != 0) out |= VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT;
  if ((usage & image_usage::transfer_src) != 0) out |= VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
  if ((usage & image_usage::transfer_dst) != 0) out |= VK_IMAGE_USAGE_TRANSFER_DST_BIT;
  return out;
}

namespace {

VkImageCreateInfo image_info(const vulkan_arena::context& c, const image_spec& spec) noexcept {
  VkImageCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
  info.imageType = VK_IMAGE_TYPE_2D;
  info.format = vulkan_format(spec.format);
  info.extent = {spec.width, spec.height, 1};
  info.mipLevels = spec.mips;
  info.arrayLayers = spec.layers;
  info.samples = VK_SAMPLE_COUNT_1_BIT;
  info.tiling = VK_IMAGE_TILING_OPTIMAL;
  info.usage = vk_usage(spec.usage);
  // Shared between the device's queue families, as arenas are: a transfer
  // node may copy into or out of an image without an ownership transfer.
  info.sharingMode = c.family_count > 1 ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE;
  info.queueFamilyIndexCount = c.family_count > 1 ? c.family_count : 0;
  info.pQueueFamilyIndices = c.family_count > 1 ? c.families.data() : nullptr;
  info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  return info;
}

}  // namespace

VkFormat vulkan_format(image_format f) noexcept {
  static constexpr std::array<VkFormat, image_format_count> formats{VK_FORMAT_R8G8B8A8_UNORM,
                                                                    VK_FORMAT_B8G8R8A8_UNORM,
                                                                    VK_FORMAT_R16G16B16A16_SFLOAT,
                                                                    VK_FORMAT_R32_SFLOAT,
                                                                    VK_FORMAT_D32_SFLOAT,
                                                                    VK_FORMAT_R32G32B32A32_SFLOAT,
                                                                    VK_FORMAT_R8G8B8A8_SRGB,
                                                                    VK_FORMAT_B8G8R8A8_SRGB,
                                                                    VK_FORMAT_D16_UNORM,
                                                                    VK_FORMAT_D24_UNORM_S8_UINT,
                                                                    VK_FORMAT_D32_SFLOAT_S8_UINT,
                                                                    VK_FORMAT_B10G11R11_UFLOAT_PACK32,
                                                                    VK_FORMAT_A2B10G10R10_UNORM_PACK32,
                                                                    VK_FORMAT_R8_UNORM,
                                                                    VK_FORMAT_R8G8_UNORM,
                                                                    VK_FORMAT_R16_UNORM,
                                                                    VK_FORMAT_R16G16_UNORM,
                                                                    VK_FORMAT_R16_SFLOAT,
                                                                    VK_FORMAT_R16G16_SFLOAT,
                                                                    VK_FORMAT_R32G32_SFLOAT,
                                                                    VK_FORMAT_BC1_RGBA_UNORM_BLOCK,
                                                                    VK_FORMAT_BC1_RGBA_SRGB_BLOCK,
                                                                    VK_FORMAT_BC3_UNORM_BLOCK,
                                                                    VK_FORMAT_BC3_SRGB_BLOCK,
                                                                    VK_FORMAT_BC4_UNORM_BLOCK,
                                                                    VK_FORMAT_BC5_UNORM_BLOCK,
                                                                    VK_FORMAT_BC7_UNORM_BLOCK,
                                                                    VK_FORMAT_BC7_SRGB_BLOCK};
  const auto i = static_cast<std::size_t>(f);
  return i < formats.size() ? formats[i] : VK_FORMAT_UNDEFINED;
}

std::uint32_t vulkan_format_features(VkPhysicalDevice physical, image_format f) noexcept {
  VkFormatProperties properties{};
  vkGetPhysicalDeviceFormatProperties(physical, vulkan_format(f), &properties);
  const VkFormatFeatureFlags have = properties.optimalTilingFeatures;
  constexpr std::array<std::pair<VkFormatFeatureFlags, std::uint32_t>, 8> features{{
      {VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT, format_feature::sampled},
      {VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT, format_feature::storage},
      {VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT, format_feature::color_attachment},
      {VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT, format_feature::depth_attachment},
      {VK_FORMAT_FEATURE_TRANSFER_SRC_BIT, format_feature::transfer_src},
      {VK_FORMAT_FEATURE_TRANSFER_DST_BIT, format_feature::transfer_dst},
      {VK_FORMAT_FEATURE_BLIT_SRC_BIT, format_feature::blit_src},
      {VK_FORMAT_FEATURE_BLIT_DST_BIT, format_feature::blit_dst},
  }};
  std::uint32_t out = 0;
  for (const auto& [vk, ours] : features)
    if ((have & vk) != 0) out |= ours;
  return out;
}

VkImageLayout vulkan_layout(image_layout l) noexcept {
  switch (l) {
    case image_layout::undefined:
      return VK_IMAGE_LAYOUT_UNDEFINED;
    case image_layout::general:
      return VK_IMAGE_LAYOUT_GENERAL;
    case image_layout::color_attachment:
      return VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
    case image_layout::depth_attachment:
      return VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL;
    case image_layout::depth_read_only:
      return VK_IMAGE_LAYOUT_DEPTH_STENCIL_READ_ONLY_OPTIMAL;
    case image_layout::shader_read_only:
      return VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    case image_layout::transfer_src:
      return VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    case image_layout::transfer_dst:
      return VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
    case image_layout::present_src:
      return VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
  }
  return VK_IMAGE_LAYOUT_UNDEFINED;
}

VkAttachmentLoadOp vulkan_load_op(attachment_load op) noexcept {
  switch (op) {
    case attachment_load::clear:
      return VK_ATTACHMENT_LOAD_OP_CLEAR;
    case attachment_load::dont_care:
      return VK_ATTACHMENT_LOAD_OP_DONT_CARE;
    case attachment_load::load:
      break;
  }
  return VK_ATTACHMENT_LOAD_OP_LOAD;
}

VkAttachmentStoreOp vulkan_store_op(attachment_store op) noexcept {
  return op == attachment_store::dont_care ? VK_ATTACHMENT_STORE_OP_DONT_CARE : VK_ATTACHMENT_STORE_OP_STORE;
}

VkAttachmentDescription vulkan_attachment_description(image_format f, image_layout l, attachment_load load,
                                                      attachment_store store) noexcept {
  VkAttachmentDescription a{};
  a.format = vulkan_format(f);
  a.samples = VK_SAMPLE_COUNT_1_BIT;
  a.loadOp = vulkan_load_op(load);
  a.storeOp = vulkan_store_op(store);
  a.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
  a.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  // The layout ferrum's barriers put the image in, and the one the next
  // node's barrier takes it from: the render pass transitions nothing.
  a.initialLayout = vulkan_layout(l);
  a.finalLayout = a.initialLayout;
  return a;
}

VkImageAspectFlags aspects_of(image_format f) noexcept {
  if (!is_depth(f)) return VK_IMAGE_ASPECT_COLOR_BIT;
  return has_stencil(f) ? VK_IMAGE_ASPECT_DEPTH_BIT | VK_IMAGE_ASPECT_STENCIL_BIT : VK_IMAGE_ASPECT_DEPTH_BIT;
}

VkImageAspectFlags vk_view_aspect(image_format f) noexcept {
  return is_depth(f) ? VK_IMAGE_ASPECT_DEPTH_BIT : VK_IMAGE_ASPECT_COLOR_BIT;
}

vk_scope vk_layout_scope(image_layout l, bool graphics, bool transfer_only, bool writes) noexcept {
  constexpr VkPipelineStageFlags fragment_tests =
      VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT | VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT;
  const VkPipelineStageFlags shaders =
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | (graphics ? VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT : 0);
  vk_scope s;
  switch (l) {
    case image_layout::undefined:
    case image_layout::present_src:
      // Nothing to wait for or make visible: the contents are discarded, or
      // the presentation engine's semaphores order them.
      return s;
    case image_layout::general:
      s = {shaders | VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
      if (!writes) s.accesses |= VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT;
      break;
    case image_layout::color_attachment:
      if (!graphics) return s;
      s = {VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT};
      if (!writes) s.accesses |= VK_ACCESS_COLOR_ATTACHMENT_READ_BIT;
      break;
    case image_layout::depth_attachment:
      if (!graphics) return s;
      s = {fragment_tests, VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT};
      if (!writes) s.accesses |= VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT;
      break;
    case image_layout::depth_read_only:
      s = {shaders | (graphics ? fragment_tests : 0), 0};
      if (!writes)
        s.accesses = VK_ACCESS_SHADER_READ_BIT | (graphics ? VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT : 0);
      break;
    case image_layout::shader_read_only:
      s = {shaders, writes ? VkAccessFlags{0} : VkAccessFlags{VK_ACCESS_SHADER_READ_BIT}};
      break;
    case image_layout::transfer_src:
      s = {VK_PIPELINE_STAGE_TRANSFER_BIT, writes ? VkAccessFlags{0} : VkAccessFlags{VK_ACCESS_TRANSFER_READ_BIT}};
      break;
    case image_layout::transfer_dst:
      s = {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT};
      break;
  }
  if (transfer_only) {
    // A transfer family's barriers name transfer stages and accesses only.
    s.stages &= VK_PIPELINE_STAGE_TRANSFER_BIT;
    s.accesses &= VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  }
  return s;
}

result<image_requirements> vulkan_image_requirements(const vulkan_arena::context& c, const image_spec& spec) {
  const VkImageCreateInfo info = image_info(c, spec);
  VkImage measured = VK_NULL_HANDLE;
  if (VkResult r = vkCreateImage(c.device, &info, nullptr, &measured); r != VK_SUCCESS)
    return make_vk_error(r, "image requirements: vkCreateImage");
  VkMemoryRequirements needs{};
  vkGetImageMemoryRequirements(c.device, measured, &needs);
  vkDestroyImage(c.device, measured, nullptr);
  return image_requirements{needs.size, needs.alignment};
}

vulkan_image::vulkan_image(const gpu::device& owner, const placed_image& placed, VkImage handle,
                           VkImageView view) noexcept
    : image(owner, placed.spec, placed.offset, reinterpret_cast<std::uintptr_t>(handle),
            reinterpret_cast<std::uintptr_t>(view)) {}

VkImage vulkan_image::handle() const noexcept {
  return reinterpret_cast<VkImage>(static_cast<std::uintptr_t>(native_handle()));
}

result<std::unique_ptr<image_memory>> vulkan_image_memory::create(const gpu::device& owner,
                                                                  const vulkan_arena::context& c,
                                                                  std::span<const placed_image> images,
                                                                  std::uint64_t bytes) {
  std::unique_ptr<vulkan_image_memory> block(new vulkan_image_memory(c.device, bytes));
  std::uint32_t types = ~0u;
  for (const placed_image& p : images) {
    const VkImageCreateInfo info = image_info(c, p.spec);
    VkImage handle = VK_NULL_HANDLE;
    if (VkResult r = vkCreateImage(c.device, &info, nullptr, &handle); r != VK_SUCCESS)
      return make_vk_error(r, "image memory: vkCreateImage");
    block->handles_.push_back(handle);
    VkMemoryRequirements needs{};
    vkGetImageMemoryRequirements(c.device, handle, &needs);
    types &= needs.memoryTypeBits;
  }
  int type = find_memory_type(*c.memory, types, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (type < 0) type = find_memory_type(*c.memory, types, 0);
  if (type < 0)
    return make_error(errc::vulkan_feature_missing,
                      "image memory: no memory type takes all " + std::to_string(images.size()) + " images");
  VkMemoryAllocateInfo allocate{};
  allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  allocate.allocationSize = bytes;
  allocate.memoryTypeIndex = static_cast<std::uint32_t>(type);
  if (VkResult r = vkAllocateMemory(c.device, &allocate, nullptr, &block->memory_); r != VK_SUCCESS)
    return make_vk_error(r, "image memory: vkAllocateMemory of " + std::to_string(bytes) + " bytes");

  std::vector<const image*> handed;
  for (std::size_t i = 0; i < images.size(); ++i) {
    const placed_image& p = images[i];
    if (VkResult r = vkBindImageMemory(c.device, block->handles_[i], block->memory_, p.offset); r != VK_SUCCESS)
      return make_vk_error(r, "image memory: vkBindImageMemory");
    auto view = make_vk_image_view(c.device, block->handles_[i], p.spec);
    if (!view) return view.error();
    if (*view != VK_NULL_HANDLE) block->views_.push_back(*view);
    block->images_.push_back(std::make_unique<vulkan_image>(owner, p, block->handles_[i], *view));
    handed.push_back(block->images_.back().get());
  }
  block->set_images(handed);
  return std::unique_ptr<image_memory>(std::move(block));
}

result<VkImageView> make_vk_image_view(VkDevice device, VkImage image, const image_spec& spec,
                                       const image_subresources& range) {
  if ((spec.usage & image_usage::viewed) == 0) return VkImageView{VK_NULL_HANDLE};
  VkImageViewCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO;
  info.image = image;
  info.viewType = range.layers > 1 ? VK_IMAGE_VIEW_TYPE_2D_ARRAY : VK_IMAGE_VIEW_TYPE_2D;
  info.format = vulkan_format(spec.format);
  info.subresourceRange = {vk_view_aspect(spec.format), range.base_mip, range.mips, range.base_layer, range.layers};
  VkImageView view = VK_NULL_HANDLE;
  if (VkResult r = vkCreateImageView(device, &info, nullptr, &view); r != VK_SUCCESS)
    return make_vk_error(r, "vkCreateImageView");
  return view;
}

vulkan_range_view::vulkan_range_view(VkDevice device, const gpu::image& img, const image_subresources& range,
                                     VkImageView view) noexcept
    : image_view(img, range, reinterpret_cast<std::uintptr_t>(view)), device_(device) {}

vulkan_range_view::~vulkan_range_view() {
  vkDestroyImageView(device_, reinterpret_cast<VkImageView>(static_cast<std::uintptr_t>(native_handle())), nullptr);
}

vulkan_image_memory::~vulkan_image_memory() {
  for (VkImageView view : views_) vkDestroyImageView(device_, view, nullptr);
  for (VkImage handle : handles_) vkDestroyImage(device_, handle, nullptr);
  if (memory_ != VK_NULL_HANDLE) vkFreeMemory(device_, memory_, nullptr);
}

}  // namespace ferrum::gpu
