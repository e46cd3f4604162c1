// An engine's deferred frame (examples/plans/deferred_frame.json) in waves on
// lavapipe, validation with synchronization validation on: the raster nodes
// render as an engine does (dynamic rendering over the attachments ferrum
// transitioned, with the load and store ops the plan gives): each shadow
// cascade into its layer of one depth image, the G-buffer's sRGB albedo,
// rg16-float normals and depth-stencil, each cleared to a value of its own;
// lighting samples every one of them, so the engine's image, tonemapped
// from TAA over the bloom chain, holds the host's computation exactly only
// where each was drawn and every barrier held.
#include "vulkan_test_support.hpp"

#include "deferred_frame_waves.hpp"
#include "engine_vk_image.hpp"

#include "ferrum/binding/image_access.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include <atomic>
#include <vector>

namespace {

using ferrum::test::frame_node;

// The engine's rendering in a raster node: begins rendering over the node's
// attachments (cleared: each is its first use in the wave) with the clear
// values of deferred_frame_waves.hpp, and ends it. Counts an attachment not
// cleared or not kept for lighting.
void clear_attachments(const ferrum::encode_context& c, std::atomic<int>& wrong) {
  const auto native = c.native();
  if (!native) return (void)++wrong;
  std::vector<VkRenderingAttachmentInfo> colors;
  VkRenderingAttachmentInfo depth{};
  VkRenderingInfo rendering{};
  rendering.sType = VK_STRUCTURE_TYPE_RENDERING_INFO;
  rendering.layerCount = 1;
  const auto node = static_cast<frame_node>(c.node_index);
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
      const std::size_t cascade = c.node_index - static_cast<std::size_t>(frame_node::cascade0);
      a.clearValue.depthStencil.depth =
          node == frame_node::gbuffer ? ferrum::test::gbuffer_depth_clear : ferrum::test::cascade_depth[cascade];
      depth = a;
    } else {
      const bool albedo = i.id->view() == "image/gbuffer.albedo";
      const auto& n = ferrum::test::normal_clear;
      const auto& al = ferrum::test::albedo_clear;
      a.clearValue.color =
          albedo ? VkClearColorValue{{al[0], al[1], al[2], al[3]}} : VkClearColorValue{{n[0], n[1], 0.0f, 1.0f}};
      colors.push_back(a);
    }
  }
  rendering.colorAttachmentCount = static_cast<std::uint32_t>(colors.size());
  rendering.pColorAttachments = colors.data();
  rendering.pDepthAttachment = &depth;
  const VkCommandBuffer commands = ferrum::gpu::vulkan_command_buffer(native->command_buffer);
  vkCmdBeginRendering(commands, &rendering);
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
    const ferrum::test::deferred_raster raster = [&](const ferrum::encode_context& c) { clear_attachments(c, wrong); };
    CHECK(ferrum::test::run_deferred_frame_waves(program, *s.device, 4, *engine_image, &raster) == 0);
    CHECK(wrong == 0);
  }
  s.finish();
}
