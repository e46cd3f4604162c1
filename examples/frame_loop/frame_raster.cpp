// examples/frame_loop/frame_raster.cpp — node/draw's graphics pipeline on
// Vulkan (frame_raster.hpp).
#include "frame_raster.hpp"

#include "ferrum/gpu/vulkan_device.hpp"

#include <array>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>

namespace frame_loop {
namespace {

constexpr std::uint32_t vertex_spirv[] = {
#include "mesh_vertex.spv.inc"
};
constexpr std::uint32_t fragment_spirv[] = {
#include "mesh_fragment.spv.inc"
};

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS)
    throw std::runtime_error(std::string("frame_loop: ") + what + " failed (VkResult " +
                             std::to_string(static_cast<int>(r)) + ")");
}

VkShaderModule shader_module(VkDevice device, std::span<const std::uint32_t> words) {
  VkShaderModuleCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  info.codeSize = words.size_bytes();
  info.pCode = words.data();
  VkShaderModule module = VK_NULL_HANDLE;
  check(vkCreateShaderModule(device, &info, nullptr, &module), "vkCreateShaderModule");
  return module;
}

// Binding 0: a mesh_vertex per vertex; binding 1: the draw_params per
// instance (one instance), seven vec4 rows.
struct vertex_layout {
  std::array<VkVertexInputBindingDescription, 2> bindings{{
      {0, sizeof(mesh_vertex), VK_VERTEX_INPUT_RATE_VERTEX},
      {1, draw_params_bytes, VK_VERTEX_INPUT_RATE_INSTANCE},
  }};
  std::array<VkVertexInputAttributeDescription, 9> attributes{};
  VkPipelineVertexInputStateCreateInfo info{};

  vertex_layout() {
    attributes[0] = {0, 0, VK_FORMAT_R32G32B32_SFLOAT, 0};
    attributes[1] = {1, 0, VK_FORMAT_R32G32B32_SFLOAT, sizeof(float) * 3};
    for (std::uint32_t row = 0; row < 7; ++row)
      attributes[2 + row] = {2 + row, 1, VK_FORMAT_R32G32B32A32_SFLOAT, row * 16};
    info.sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO;
    info.vertexBindingDescriptionCount = static_cast<std::uint32_t>(bindings.size());
    info.pVertexBindingDescriptions = bindings.data();
    info.vertexAttributeDescriptionCount = static_cast<std::uint32_t>(attributes.size());
    info.pVertexAttributeDescriptions = attributes.data();
  }
};

}  // namespace

mesh_pipeline::mesh_pipeline(ferrum::gpu::device& device) {
  const auto handles = ferrum::gpu::native_handles(device);
  if (!handles || !device.limits().graphics)
    throw std::runtime_error("frame_loop: the mesh pipeline needs a Vulkan device with graphics");
  device_ = handles->device;
  const std::span<const mesh_vertex> mesh = torus_mesh();
  vertex_count_ = static_cast<std::uint32_t>(mesh.size());
  mesh_ = device.create_arena(mesh.size_bytes()).value();
  // Written once, before any submission reads it: seen by every one.
  std::memcpy(mesh_->bytes().data(), mesh.data(), mesh.size_bytes());

  VkPipelineLayoutCreateInfo layout_info{};
  layout_info.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  check(vkCreatePipelineLayout(device_, &layout_info, nullptr, &layout_), "vkCreatePipelineLayout");
  const VkShaderModule vertex = shader_module(device_, vertex_spirv);
  const VkShaderModule fragment = shader_module(device_, fragment_spirv);
  std::array<VkPipelineShaderStageCreateInfo, 2> stages{};
  for (auto& s : stages) {
    s.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    s.pName = "main";
  }
  stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
  stages[0].module = vertex;
  stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
  stages[1].module = fragment;
  const vertex_layout vertices;
  VkPipelineInputAssemblyStateCreateInfo assembly{};
  assembly.sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO;
  assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
  VkPipelineViewportStateCreateInfo viewport{};
  viewport.sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO;
  viewport.viewportCount = 1;
  viewport.scissorCount = 1;
  // Both faces: the host's rasterizer culls nothing either, and the depth
  // test hides the far side.
  VkPipelineRasterizationStateCreateInfo rasterization{};
  rasterization.sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO;
  rasterization.polygonMode = VK_POLYGON_MODE_FILL;
  rasterization.cullMode = VK_CULL_MODE_NONE;
  rasterization.lineWidth = 1.0f;
  VkPipelineMultisampleStateCreateInfo multisample{};
  multisample.sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO;
  multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
  VkPipelineDepthStencilStateCreateInfo depth{};
  depth.sType = VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO;
  depth.depthTestEnable = VK_TRUE;
  depth.depthWriteEnable = VK_TRUE;
  depth.depthCompareOp = VK_COMPARE_OP_LESS;
  VkPipelineColorBlendAttachmentState blend_attachment{};
  blend_attachment.colorWriteMask =
      VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT | VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
  VkPipelineColorBlendStateCreateInfo blend{};
  blend.sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO;
  blend.attachmentCount = 1;
  blend.pAttachments = &blend_attachment;
  const std::array<VkDynamicState, 2> dynamic_states{VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
  VkPipelineDynamicStateCreateInfo dynamic{};
  dynamic.sType = VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO;
  dynamic.dynamicStateCount = static_cast<std::uint32_t>(dynamic_states.size());
  dynamic.pDynamicStates = dynamic_states.data();
  const VkFormat color_format = ferrum::gpu::vulkan_format(ferrum::image_format::rgba32_float);
  VkPipelineRenderingCreateInfo rendering{};
  rendering.sType = VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO;
  rendering.colorAttachmentCount = 1;
  rendering.pColorAttachmentFormats = &color_format;
  rendering.depthAttachmentFormat = ferrum::gpu::vulkan_format(ferrum::image_format::d32_float);
  VkGraphicsPipelineCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO;
  info.pNext = &rendering;
  info.stageCount = static_cast<std::uint32_t>(stages.size());
  info.pStages = stages.data();
  info.pVertexInputState = &vertices.info;
  info.pInputAssemblyState = &assembly;
  info.pViewportState = &viewport;
  info.pRasterizationState = &rasterization;
  info.pMultisampleState = &multisample;
  info.pDepthStencilState = &depth;
  info.pColorBlendState = &blend;
  info.pDynamicState = &dynamic;
  info.layout = layout_;
  const VkResult made = vkCreateGraphicsPipelines(device_, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline_);
  vkDestroyShaderModule(device_, vertex, nullptr);
  vkDestroyShaderModule(device_, fragment, nullptr);
  if (made != VK_SUCCESS) {
    vkDestroyPipelineLayout(device_, layout_, nullptr);
    check(made, "vkCreateGraphicsPipelines");
  }
}

mesh_pipeline::~mesh_pipeline() {
  vkDestroyPipeline(device_, pipeline_, nullptr);
  vkDestroyPipelineLayout(device_, layout_, nullptr);
}

void mesh_pipeline::draw(const ferrum::native_scope& native, const ferrum::node_resource& mesh,
                         const ferrum::node_image& color, const ferrum::node_image& depth, std::uint32_t width,
                         std::uint32_t height) const {
  const ferrum::native_buffer vertices = ferrum::native_buffer::of(mesh.range);
  if (vertices.size < std::uint64_t{vertex_count_} * sizeof(mesh_vertex))
    throw std::runtime_error("frame_loop: node/draw's resource/mesh holds " + std::to_string(vertices.size) +
                             " bytes, not the mesh's " + std::to_string(vertex_count_ * sizeof(mesh_vertex)));
  const auto attachment = [](const ferrum::node_image& image) {
    VkRenderingAttachmentInfo a{};
    a.sType = VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO;
    a.imageView = ferrum::gpu::vulkan_image_view(*image.image);
    a.imageLayout = ferrum::gpu::vulkan_layout(image.layout);
    a.loadOp = ferrum::gpu::vulkan_load_op(image.load);
    a.storeOp = ferrum::gpu::vulkan_store_op(image.store);
    return a;
  };
  const VkRenderingAttachmentInfo color_attachment = attachment(color);  // a clear (never here) to black
  VkRenderingAttachmentInfo depth_attachment = attachment(depth);
  depth_attachment.clearValue.depthStencil = {1.0f, 0};
  VkRenderingInfo rendering{};
  rendering.sType = VK_STRUCTURE_TYPE_RENDERING_INFO;
  rendering.renderArea = {{0, 0}, {width, height}};
  rendering.layerCount = 1;
  rendering.colorAttachmentCount = 1;
  rendering.pColorAttachments = &color_attachment;
  rendering.pDepthAttachment = &depth_attachment;
  const VkCommandBuffer commands = ferrum::gpu::vulkan_command_buffer(native.command_buffer);
  vkCmdBeginRendering(commands, &rendering);
  vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline_);
  const VkViewport viewport{0.0f, 0.0f, static_cast<float>(width), static_cast<float>(height), 0.0f, 1.0f};
  const VkRect2D scissor{{0, 0}, {width, height}};
  vkCmdSetViewport(commands, 0, 1, &viewport);
  vkCmdSetScissor(commands, 0, 1, &scissor);
  const ferrum::native_buffer params = native.slot();
  const std::array<VkBuffer, 2> buffers{ferrum::gpu::vulkan_buffer(vertices.buffer),
                                        ferrum::gpu::vulkan_buffer(params.buffer)};
  const std::array<VkDeviceSize, 2> offsets{vertices.offset, params.offset};
  vkCmdBindVertexBuffers(commands, 0, 2, buffers.data(), offsets.data());
  vkCmdDraw(commands, vertex_count_, 1, 0, 0);
  vkCmdEndRendering(commands);
}

}  // namespace frame_loop
