#include "vulkan/vulkan_kernel_layouts.hpp"

#include "ferrum/gpu/vulkan_device.hpp"

#include "vulkan/vk_result.hpp"

#include <cstdint>

namespace ferrum::gpu {
namespace {

constexpr std::array<VkDescriptorType, 3> descriptor_types{
    VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE};

// A list's operand sets come in pools of this many of each kind: a wave's
// list binds a node's few operands, so one pool serves most lists.
constexpr std::uint32_t sets_per_pool = 32;

}  // namespace

result<std::unique_ptr<vulkan_kernel_layouts>> vulkan_kernel_layouts::create(VkDevice device) {
  std::unique_ptr<vulkan_kernel_layouts> made(new vulkan_kernel_layouts(device));
  for (std::size_t kind = 0; kind < kinds; ++kind) {
    VkDescriptorSetLayoutBinding binding{};
    binding.binding = 0;
    binding.descriptorType = descriptor_types[kind];
    binding.descriptorCount = 1;
    binding.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    VkDescriptorSetLayoutCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    info.bindingCount = 1;
    info.pBindings = &binding;
    if (VkResult r = vkCreateDescriptorSetLayout(device, &info, nullptr, &made->set_layouts_[kind]); r != VK_SUCCESS)
      return make_vk_error(r, "vkCreateDescriptorSetLayout");
  }
  VkPushConstantRange push{};
  push.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  push.offset = 0;
  push.size = push_constant_bytes;
  for (std::size_t primary = 0; primary < 2; ++primary) {
    for (std::size_t secondary = 0; secondary < kinds; ++secondary) {
      const std::array<VkDescriptorSetLayout, 2> sets{made->set_layouts_[primary], made->set_layouts_[secondary]};
      VkPipelineLayoutCreateInfo info{};
      info.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
      info.setLayoutCount = static_cast<std::uint32_t>(sets.size());
      info.pSetLayouts = sets.data();
      info.pushConstantRangeCount = 1;
      info.pPushConstantRanges = &push;
      VkPipelineLayout& layout = made->pipeline_layouts_[primary * kinds + secondary];
      if (VkResult r = vkCreatePipelineLayout(device, &info, nullptr, &layout); r != VK_SUCCESS)
        return make_vk_error(r, "vkCreatePipelineLayout");
    }
  }
  return made;
}

vulkan_kernel_layouts::~vulkan_kernel_layouts() {
  // Handles not made are VK_NULL_HANDLE, which destroying ignores.
  for (VkPipelineLayout l : pipeline_layouts_) vkDestroyPipelineLayout(device_, l, nullptr);
  for (VkDescriptorSetLayout l : set_layouts_) vkDestroyDescriptorSetLayout(device_, l, nullptr);
}

vulkan_operand_sets::~vulkan_operand_sets() {
  for (VkDescriptorPool p : pools_) vkDestroyDescriptorPool(device_, p, nullptr);
}

void vulkan_operand_sets::reset() noexcept {
  // vkResetDescriptorPool only returns VK_SUCCESS.
  for (VkDescriptorPool p : pools_) (void)vkResetDescriptorPool(device_, p, 0);
  current_ = 0;
}

result<VkDescriptorSet> vulkan_operand_sets::allocate(kernel_operand_kind kind) {
  const VkDescriptorSetLayout set_layout = layouts_->set_layout(kind);
  VkDescriptorSetAllocateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  info.descriptorSetCount = 1;
  info.pSetLayouts = &set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  for (;;) {
    const bool fresh = current_ == pools_.size();
    if (fresh) {
      const std::array<VkDescriptorPoolSize, 3> sizes{{{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, sets_per_pool},
                                                       {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, sets_per_pool},
                                                       {VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, sets_per_pool}}};
      VkDescriptorPoolCreateInfo pool_info{};
      pool_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
      pool_info.maxSets = 3 * sets_per_pool;
      pool_info.poolSizeCount = static_cast<std::uint32_t>(sizes.size());
      pool_info.pPoolSizes = sizes.data();
      // Room first, so that a pool once created is never leaked by a throw.
      pools_.reserve(pools_.size() + 1);
      VkDescriptorPool pool = VK_NULL_HANDLE;
      if (VkResult r = vkCreateDescriptorPool(device_, &pool_info, nullptr, &pool); r != VK_SUCCESS)
        return make_vk_error(r, "kernel operands: vkCreateDescriptorPool");
      pools_.push_back(pool);
    }
    info.descriptorPool = pools_[current_];
    const VkResult r = vkAllocateDescriptorSets(device_, &info, &set);
    if (r == VK_SUCCESS) return set;
    // A full pool: the next one (made when there is none); a fresh pool
    // that has no room is the device's failure.
    if (fresh || (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL))
      return make_vk_error(r, "kernel operands: vkAllocateDescriptorSets");
    ++current_;
  }
}

result<VkDescriptorSet> vulkan_operand_sets::bind(VkImageView view, kernel_operand_kind kind, image_layout layout) {
  auto set = allocate(kind);
  if (!set) return set;
  VkDescriptorImageInfo image_info{};
  image_info.imageView = view;
  image_info.imageLayout = vulkan_layout(layout);
  VkWriteDescriptorSet write{};
  write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
  write.dstSet = *set;
  write.dstBinding = 0;
  write.descriptorCount = 1;
  write.descriptorType = descriptor_types[static_cast<std::size_t>(kind)];
  write.pImageInfo = &image_info;
  vkUpdateDescriptorSets(device_, 1, &write, 0, nullptr);
  return set;
}

result<VkDescriptorSet> vulkan_operand_sets::bind(VkBuffer buffer, VkDeviceSize offset, VkDeviceSize bytes) {
  auto set = allocate(kernel_operand_kind::buffer);
  if (!set) return set;
  const VkDescriptorBufferInfo buffer_info{buffer, offset, bytes};
  VkWriteDescriptorSet write{};
  write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
  write.dstSet = *set;
  write.dstBinding = 0;
  write.descriptorCount = 1;
  write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  write.pBufferInfo = &buffer_info;
  vkUpdateDescriptorSets(device_, 1, &write, 0, nullptr);
  return set;
}

}  // namespace ferrum::gpu
