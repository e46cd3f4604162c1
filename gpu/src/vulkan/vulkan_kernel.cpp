#include "vulkan/vulkan_kernel.hpp"

#include "vulkan/vk_result.hpp"

#include <string>

namespace ferrum::gpu {
namespace {

// SPIR-V's header: magic, version, generator, id bound, schema (SPIR-V 2.3).
constexpr std::uint32_t spirv_magic = 0x07230203u;
constexpr std::size_t spirv_header_words = 5;

bool is_driver_rejection(VkResult r) noexcept {
  const errc code = errc_from_vk(r);
  return code != errc::out_of_host_memory && code != errc::out_of_device_memory && code != errc::device_lost;
}

}  // namespace

result<std::unique_ptr<kernel>> vulkan_kernel::create(const gpu::device& owner, VkDevice device,
                                                      VkPipelineLayout layout, const kernel_source& source) {
  const std::string what = "kernel " + quote_text(source.name);
  if (source.spirv.empty()) return make_error(errc::invalid_kernel, what + " has no SPIR-V");
  // vkCreateShaderModule requires valid SPIR-V and drivers are not required
  // to check it (invalid code is undefined behaviour): at least the header
  // is checked here; the shaders ferrum ships are validated by glslc.
  if (source.spirv.size() < spirv_header_words || source.spirv[0] != spirv_magic)
    return make_error(errc::invalid_kernel, what + " is not a SPIR-V module (no SPIR-V header)");

  VkShaderModuleCreateInfo module_info{};
  module_info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  module_info.codeSize = source.spirv.size_bytes();
  module_info.pCode = source.spirv.data();
  VkShaderModule module = VK_NULL_HANDLE;
  if (VkResult r = vkCreateShaderModule(device, &module_info, nullptr, &module); r != VK_SUCCESS) {
    error e = make_vk_error(r, what + ": vkCreateShaderModule");
    if (is_driver_rejection(r)) e.code = make_error_code(errc::invalid_kernel);
    return e;
  }

  VkComputePipelineCreateInfo pipeline_info{};
  pipeline_info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  pipeline_info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pipeline_info.stage.module = module;
  pipeline_info.stage.pName = "main";
  pipeline_info.layout = layout;
  pipeline_info.basePipelineIndex = -1;
  VkPipeline pipeline = VK_NULL_HANDLE;
  const VkResult r = vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &pipeline_info, nullptr, &pipeline);
  // A shader module is only read while pipelines are created from it, so it
  // goes now, whatever the outcome.
  vkDestroyShaderModule(device, module, nullptr);
  if (r != VK_SUCCESS) {
    error e = make_vk_error(r, what + ": vkCreateComputePipelines");
    if (is_driver_rejection(r)) e.code = make_error_code(errc::invalid_kernel);
    return e;
  }
  return std::unique_ptr<kernel>(new vulkan_kernel(owner, source, device, layout, pipeline));
}

vulkan_kernel::~vulkan_kernel() { vkDestroyPipeline(device_, pipeline_, nullptr); }

}  // namespace ferrum::gpu
