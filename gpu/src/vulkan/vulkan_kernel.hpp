// vulkan_kernel.hpp — a kernel on the Vulkan device: its compute pipeline,
// made with the device's pipeline layout for its operands' kinds (the kernel
// ABI of ferrum/gpu/kernel.hpp, vulkan_kernel_layouts.hpp).
//
//   auto k = vulkan_kernel::create(owner, device, pipeline_layout, builtin::affine());
//   vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, (*k)->pipeline());
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/kernel.hpp"

#include <vulkan/vulkan_core.h>

#include <memory>

namespace ferrum::gpu {

class vulkan_kernel final : public kernel {
 public:
  // Compiles `source.spirv`. Errors: invalid_kernel (no SPIR-V, not a SPIR-V
  // module, a module the driver rejects), out_of_*_memory, vulkan_error.
  [[nodiscard]] static result<std::unique_ptr<kernel>> create(const gpu::device& owner, VkDevice device,
                                                              VkPipelineLayout layout, const kernel_source& source);

  ~vulkan_kernel() override;

  [[nodiscard]] VkPipeline pipeline() const noexcept { return pipeline_; }
  [[nodiscard]] VkPipelineLayout layout() const noexcept { return layout_; }

 private:
  vulkan_kernel(const gpu::device& owner, const kernel_source& source, VkDevice device, VkPipelineLayout layout,
                VkPipeline pipeline)
      : kernel(owner, source), device_(device), layout_(layout), pipeline_(pipeline) {}

  VkDevice device_;
  VkPipelineLayout layout_;
  VkPipeline pipeline_;
};

}  // namespace ferrum::gpu
