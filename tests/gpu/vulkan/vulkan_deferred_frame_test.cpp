// An engine's deferred frame (examples/plans/deferred_frame.json) in waves on
// lavapipe, validation with synchronization validation on: the raster nodes
// render as an engine does (its own pipelines, dynamic rendering over the
// attachments ferrum transitioned, with the load and store ops the plan
// gives): each shadow cascade into its layer of one depth image, the
// G-buffer's sRGB albedo, rg16-float normals and depth-stencil, each cleared
// to a value of its own and drawn over its left half with another;
// lighting samples every one of them, so the engine's image, tonemapped
// from TAA over the bloom chain, holds the host's computation exactly only
// where each was drawn and every barrier held.
#include "vulkan_test_support.hpp"

#include "raster_states.hpp"

#include "deferred_frame_waves.hpp"
#include "engine_vk_image.hpp"

#include "ferrum/binding/image_access.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include <array>
#include <atomic>
#include <span>
#include <vector>

namespace {

using ferrum::test::frame_node;

constexpr std::uint32_t rect_spirv[] = {
#include "deferred_rect.spv.inc"
};
constexpr std::uint32_t gbuffer_spirv[] = {
#include "deferred_gbuffer.spv.inc"
};

// The push constants of deferred_rect.vert and deferred_gbuffer.frag.
struct draw_constants {
  std::array<float, 4> depth{};
  std::array<float, 4> albedo{};
  std::array<float, 4> normal{};
};

// The engine's graphics pipeline for one kind of raster node, by dynamic
// rendering: the left-half rectangle depth-tested (less) into a depth
// attachment of `depth_format`, and with `colors`, the G-buffer's fragment
// shader writing them; viewport and scissor dynamic.
struct deferred_pipeline {
  VkDevice device = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;

  deferred_pipeline(VkDevice d, std::span<const VkFormat> colors, VkFormat depth_format) : device(d) {
    const VkPushConstantRange push{VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0,
                                   sizeof(draw_constants)};
    VkPipelineLayoutCreateInfo layout_info{};
    layout_info.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &push;
    REQUIRE(vkCreatePipelineLayout(device, &layout_info, nullptr, &layout) == VK_SUCCESS);
    std::array<VkShaderModule, 2> modules{};
    std::array<VkPipelineShaderStageCreateInfo, 2> stages{};
    const std::array<std::span<const std::uint32_t>, 2> words{rect_spirv, gbuffer_spirv};
    const std::uint32_t stage_count = colors.empty() ? 1 : 2;  // depth only: no fragment shader
    for (std::uint32_t i = 0; i < stage_count; ++i) {
      VkShaderModuleCreateInfo info{};
      info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
      info.codeSize = words[i].size_bytes();
      info.pCode = words[i].data();
      REQUIRE(vkCreateShaderModule(device, &info, nullptr, &modules[i]) == VK_SUCCESS);
      stages[i].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
      stages[i].stage = i == 0 ? VK_SHADER_STAGE_VERTEX_BIT : VK_SHADER_STAGE_FRAGMENT_BIT;
      stages[i].module = modules[i];
      stages[i].pName = "main";
    }
    VkPipelineVertexInputStateCreateInfo vertex_input{};
    vertex_input.sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO;
    const ferrum::test::raster_states states;
    std::vector<VkPipelineColorBlendAttachmentState> blend_attachments(colors.size());
    for (VkPipelineColorBlendAttachmentState& a : blend_attachments)
      a.colorWriteMask =
          VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT | VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
    VkPipelineColorBlendStateCreateInfo blend{};
    blend.sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO;
    blend.attachmentCount = static_cast<std::uint32_t>(blend_attachments.size());
    blend.pAttachments = blend_attachments.data();
    const std::array<VkDynamicState, 2> dynamic_states{VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
    VkPipelineDynamicStateCreateInfo dynamic{};
    dynamic.sType = VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO;
    dynamic.dynamicStateCount = static_cast<std::uint32_t>(dynamic_states.size());
    dynamic.pDynamicStates = dynamic_states.data();
    // A depth-stencil attachment's depth aspect only: no stencil attachment.
    VkPipelineRenderingCreateInfo rendering{};
    rendering.sType = VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO;
    rendering.colorAttachmentCount = static_cast<std::uint32_t>(colors.size());
    rendering.pColorAttachmentFormats = colors.data();
    rendering.depthAttachmentFormat = depth_format;
    VkGraphicsPipelineCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO;
    info.pNext = &rendering;
    info.stageCount = stage_count;
    info.pStages = stages.data();
    info.pVertexInputState = &vertex_input;
    info.pInputAssemblyState = &states.assembly;
    info.pViewportState = &states.viewport;
    info.pRasterizationState = &states.rasterization;
    info.pMultisampleState = &states.multisample;
    info.pDepthStencilState = &states.depth;
    info.pColorBlendState = &blend;
    info.pDynamicState = &dynamic;
    info.layout = layout;
    const VkResult made = vkCreateGraphicsPipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline);
    for (VkShaderModule m : modules) vkDestroyShaderModule(device, m, nullptr);
    REQUIRE(made == VK_SUCCESS);
  }
  deferred_pipeline(const deferred_pipeline&) = delete;
  deferred_pipeline& operator=(const deferred_pipeline&) = delete;
  ~deferred_pipeline() {
    vkDestroyPipeline(device, pipeline, nullptr);
    vkDestroyPipelineLayout(device, layout, nullptr);
  }

  // Binds it and draws the rectangle with `constants` over `extent`.
  void draw(VkCommandBuffer commands, VkExtent2D extent, const draw_constants& constants) const {
    vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline);
    const VkViewport viewport{0.0f, 0.0f, static_cast<float>(extent.width), static_cast<float>(extent.height),
                              0.0f, 1.0f};
    const VkRect2D scissor{{0, 0}, extent};
    vkCmdSetViewport(commands, 0, 1, &viewport);
    vkCmdSetScissor(commands, 0, 1, &scissor);
    vkCmdPushConstants(commands, layout, VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof constants,
                       &constants);
    vkCmdDraw(commands, 6, 1, 0, 0);
  }
};

// The engine's rendering in a raster node: begins rendering over the node's
// attachments (cleared: each is its first use in the wave) with the clear
// values of deferred_frame_waves.hpp, draws the left half with the drawn
// ones (`shadow`'s pipeline for a cascade, `gbuffer`'s for the G-buffer),
// and ends it. Counts an attachment not cleared or not kept for lighting.
void render(const ferrum::encode_context& c, const deferred_pipeline& shadow, const deferred_pipeline& gbuffer,
            std::atomic<int>& wrong) {
  namespace t = ferrum::test;
  const auto native = c.native();
  if (!native) return (void)++wrong;
  std::vector<VkRenderingAttachmentInfo> colors;
  VkRenderingAttachmentInfo depth{};
  VkRenderingInfo rendering{};
  rendering.sType = VK_STRUCTURE_TYPE_RENDERING_INFO;
  rendering.layerCount = 1;
  const bool is_gbuffer = static_cast<frame_node>(c.node_index) == frame_node::gbuffer;
  const std::size_t cascade = c.node_index - static_cast<std::size_t>(frame_node::cascade0);
  for (const ferrum::node_image& i : c.images) {
    if (i.load != ferrum::attachment_load::clear || i.store != ferrum::attachment_store::store) ++wrong;
    VkRenderingAttachmentInfo a{};
    a.sType = VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO;
    a.imageView =
        i.view != nullptr ? ferrum::gpu::vulkan_image_view(*i.view) : ferrum::gpu::vulkan_image_view(*i.image);
    a.imageLayout = ferrum::gpu::vulkan_layout(i.layout);
    a.loadOp = ferrum::gpu::vulkan_load_op(i.load);
    a.storeOp = ferrum::gpu::vulkan_store_op(i.store);
    rendering.renderArea.extent = {i.image->spec().width, i.image->spec().height};
    if (ferrum::is_depth(i.image->spec().format)) {
      a.clearValue.depthStencil.depth = is_gbuffer ? t::gbuffer_depth_clear : t::cascade_depth[cascade];
      depth = a;
    } else {
      const auto& n = t::normal_clear;
      const auto& al = t::albedo_clear;
      a.clearValue.color = i.id->view() == "image/gbuffer.albedo" ? VkClearColorValue{{al[0], al[1], al[2], al[3]}}
                                                                  : VkClearColorValue{{n[0], n[1], 0.0f, 1.0f}};
      colors.push_back(a);
    }
  }
  // The G-buffer's attachments in the order of its pipeline: albedo, normals.
  if (colors.size() != (is_gbuffer ? 2u : 0u)) return (void)++wrong;
  rendering.colorAttachmentCount = static_cast<std::uint32_t>(colors.size());
  rendering.pColorAttachments = colors.data();
  rendering.pDepthAttachment = &depth;
  draw_constants drawn;
  drawn.depth[0] = is_gbuffer ? t::gbuffer_depth_drawn : t::cascade_drawn[cascade];
  drawn.albedo = t::albedo_drawn;
  drawn.normal = {t::normal_drawn[0], t::normal_drawn[1], 0.0f, 1.0f};
  const VkCommandBuffer commands = ferrum::gpu::vulkan_command_buffer(native->command_buffer);
  vkCmdBeginRendering(commands, &rendering);
  (is_gbuffer ? gbuffer : shadow).draw(commands, rendering.renderArea.extent, drawn);
  vkCmdEndRendering(commands);
}

}  // namespace

TEST_CASE("vulkan: the engine's deferred frame, drawn and computed, gives the host's texels with no validation message",
          "[vulkan][raster][image][deferred]") {
  vulkan_test::session s;
  if (!s.open()) return;
  {
    const auto handles = ferrum::gpu::native_handles(*s.device);
    REQUIRE(handles.has_value());
    const vulkan_test::engine_vk_image frame(*handles, VK_FORMAT_R32G32B32A32_SFLOAT,
                                             VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                                             {ferrum::test::frame_width, ferrum::test::frame_height, 1}, false);
    const auto engine_image = vulkan_test::require(
        ferrum::gpu::import_vulkan_image(*s.device, ferrum::gpu::vulkan_image_import::of(frame.image, frame.info)));
    const auto program =
        std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(ferrum::test::deferred_frame_plan()));
    std::atomic<int> wrong{0};
    const std::array<VkFormat, 2> gbuffer_colors{VK_FORMAT_R8G8B8A8_SRGB, VK_FORMAT_R16G16_SFLOAT};
    const deferred_pipeline shadow(handles->device, {}, VK_FORMAT_D32_SFLOAT);
    const deferred_pipeline gbuffer(handles->device, gbuffer_colors, VK_FORMAT_D32_SFLOAT_S8_UINT);
    const ferrum::test::deferred_raster raster = [&](const ferrum::encode_context& c) {
      render(c, shadow, gbuffer, wrong);
    };
    CHECK(ferrum::test::run_deferred_frame_waves(program, *s.device, 4, *engine_image, &raster) == 0);
    CHECK(wrong == 0);
  }
  s.finish();
}
