// Raster nodes on the Vulkan device (lavapipe), validation with
// synchronization validation on: a node with attachment accesses records
// the engine's own graphics pipeline inside dynamic rendering over the
// color and depth images ferrum transitioned, with the load and store ops
// the plan gives, from a vertex buffer a ferrum copy wrote just before in
// the node's list; the next node copies the drawing out. Two triangles
// at two depths prove the depth test ran; the pixels prove the order; the
// validation layers prove that the barriers cover the draws (the vertex
// input reading what a transfer wrote, the attachments' layouts). The same
// again with the engine's pipeline made for a classic render pass over the
// node's attachments (gpu::vulkan_attachment_description: the node's
// layouts from start to end, the plan's load and store ops), as an engine
// whose library predates dynamic rendering records it.
#include "vulkan_test_support.hpp"

#include "raster_states.hpp"

#include "dropped_barrier.hpp"
#include "engine_buffer.hpp"
#include "engine_vk_image.hpp"
#include "ferrum/binding/plan_json.hpp"
#include "ferrum/scheduler/scheduler.hpp"
#include "plan_builder.hpp"
#include "raster_plan.hpp"
#include "wave_outcome.hpp"

#include <boost/asio/thread_pool.hpp>

#include <array>
#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace {

using ferrum::test::raster_side;
using vulkan_test::require;

constexpr std::uint32_t vertex_spirv[] = {
#include "raster_vertex.spv.inc"
};
constexpr std::uint32_t fragment_spirv[] = {
#include "raster_fragment.spv.inc"
};

// The two triangles' vertices (x, y, depth, 1): a near one, then a far
// one overlapping it, moved right.
constexpr std::array<float, 24> vertices{-0.8f, -0.6f, 0.25f, 1.0f, 0.4f, -0.6f, 0.25f, 1.0f, -0.2f, 0.6f, 0.25f, 1.0f,
                                         -0.4f, -0.6f, 0.75f, 1.0f, 0.8f, -0.6f, 0.75f, 1.0f, 0.2f,  0.6f, 0.75f, 1.0f};
// Their colours: red, green (the fragment shader's push constant).
constexpr std::array<std::array<float, 4>, 2> colors{{{1.0f, 0.0f, 0.0f, 1.0f}, {0.0f, 1.0f, 0.0f, 1.0f}}};

// A classic render pass over the raster node's two attachments, as the
// contract has it (gpu::vulkan_attachment_description): the color image
// cleared and stored, the depth image cleared and dropped (what the plan
// derives: the test checks it), each in the node's layout throughout.
struct classic_render_pass {
  VkDevice device = VK_NULL_HANDLE;
  VkRenderPass pass = VK_NULL_HANDLE;
  std::mutex lock;
  std::vector<VkFramebuffer> framebuffers;  // one per wave, gone at the end

  explicit classic_render_pass(VkDevice d) : device(d) {
    const std::array<VkAttachmentDescription, 2> attachments{
        ferrum::gpu::vulkan_attachment_description(ferrum::image_format::rgba8_unorm,
                                                   ferrum::image_layout::color_attachment,
                                                   ferrum::attachment_load::clear, ferrum::attachment_store::store),
        ferrum::gpu::vulkan_attachment_description(
            ferrum::image_format::d32_float, ferrum::image_layout::depth_attachment, ferrum::attachment_load::clear,
            ferrum::attachment_store::dont_care)};
    const VkAttachmentReference color{0, attachments[0].initialLayout};
    const VkAttachmentReference depth{1, attachments[1].initialLayout};
    VkSubpassDescription subpass{};
    subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
    subpass.colorAttachmentCount = 1;
    subpass.pColorAttachments = &color;
    subpass.pDepthStencilAttachment = &depth;
    VkRenderPassCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO;
    info.attachmentCount = static_cast<std::uint32_t>(attachments.size());
    info.pAttachments = attachments.data();
    info.subpassCount = 1;
    info.pSubpasses = &subpass;
    REQUIRE(vkCreateRenderPass(device, &info, nullptr, &pass) == VK_SUCCESS);
  }
  classic_render_pass(const classic_render_pass&) = delete;
  classic_render_pass& operator=(const classic_render_pass&) = delete;
  // After every wave's fence.
  ~classic_render_pass() {
    for (VkFramebuffer f : framebuffers) vkDestroyFramebuffer(device, f, nullptr);
    vkDestroyRenderPass(device, pass, nullptr);
  }

  // Begins the render pass over the node's attachments (a framebuffer of
  // their views), clearing color to blue and depth to 1.
  bool begin(VkCommandBuffer commands, const ferrum::node_image& color, const ferrum::node_image& depth) {
    const std::array<VkImageView, 2> views{ferrum::gpu::vulkan_image_view(*color.image),
                                           ferrum::gpu::vulkan_image_view(*depth.image)};
    VkFramebufferCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO;
    info.renderPass = pass;
    info.attachmentCount = static_cast<std::uint32_t>(views.size());
    info.pAttachments = views.data();
    info.width = raster_side;
    info.height = raster_side;
    info.layers = 1;
    VkFramebuffer framebuffer = VK_NULL_HANDLE;
    if (vkCreateFramebuffer(device, &info, nullptr, &framebuffer) != VK_SUCCESS) return false;
    {
      const std::lock_guard held(lock);
      framebuffers.push_back(framebuffer);
    }
    std::array<VkClearValue, 2> clears{};
    clears[0].color = {{0.0f, 0.0f, 1.0f, 1.0f}};
    clears[1].depthStencil = {1.0f, 0};
    VkRenderPassBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO;
    begin.renderPass = pass;
    begin.framebuffer = framebuffer;
    begin.renderArea = {{0, 0}, {raster_side, raster_side}};
    begin.clearValueCount = static_cast<std::uint32_t>(clears.size());
    begin.pClearValues = clears.data();
    vkCmdBeginRenderPass(commands, &begin, VK_SUBPASS_CONTENTS_INLINE);
    return true;
  }
};

// The formats of the raster plan's attachments (image/color, image/depth).
struct attachment_formats {
  ferrum::image_format color = ferrum::image_format::rgba8_unorm;
  ferrum::image_format depth = ferrum::image_format::d32_float;
};

// The engine's graphics pipeline: the test's triangles, depth-tested
// (less), into a color and a depth attachment of `formats` (rgba8-unorm
// and d32-float in a classic render pass), by dynamic rendering, or in
// `render_pass` when given; viewport and scissor dynamic.
struct raster_pipeline {
  VkDevice device = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  classic_render_pass* render_pass = nullptr;

  explicit raster_pipeline(VkDevice d, classic_render_pass* pass = nullptr, attachment_formats formats = {})
      : device(d), render_pass(pass) {
    VkPushConstantRange push{VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof(colors[0])};
    VkPipelineLayoutCreateInfo layout_info{};
    layout_info.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &push;
    REQUIRE(vkCreatePipelineLayout(device, &layout_info, nullptr, &layout) == VK_SUCCESS);
    const auto module = [&](std::span<const std::uint32_t> words) {
      VkShaderModuleCreateInfo info{};
      info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
      info.codeSize = words.size_bytes();
      info.pCode = words.data();
      VkShaderModule m = VK_NULL_HANDLE;
      REQUIRE(vkCreateShaderModule(device, &info, nullptr, &m) == VK_SUCCESS);
      return m;
    };
    const VkShaderModule vertex = module(vertex_spirv);
    const VkShaderModule fragment = module(fragment_spirv);
    std::array<VkPipelineShaderStageCreateInfo, 2> stages{};
    for (auto& s : stages) s.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
    stages[0].module = vertex;
    stages[0].pName = "main";
    stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
    stages[1].module = fragment;
    stages[1].pName = "main";
    const VkVertexInputBindingDescription binding{0, 4 * sizeof(float), VK_VERTEX_INPUT_RATE_VERTEX};
    const VkVertexInputAttributeDescription attribute{0, 0, VK_FORMAT_R32G32B32A32_SFLOAT, 0};
    VkPipelineVertexInputStateCreateInfo vertex_input{};
    vertex_input.sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO;
    vertex_input.vertexBindingDescriptionCount = 1;
    vertex_input.pVertexBindingDescriptions = &binding;
    vertex_input.vertexAttributeDescriptionCount = 1;
    vertex_input.pVertexAttributeDescriptions = &attribute;
    const ferrum::test::raster_states states;
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
    const VkFormat color_format = ferrum::gpu::vulkan_format(formats.color);
    VkPipelineRenderingCreateInfo rendering{};
    rendering.sType = VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO;
    rendering.colorAttachmentCount = 1;
    rendering.pColorAttachmentFormats = &color_format;
    rendering.depthAttachmentFormat = ferrum::gpu::vulkan_format(formats.depth);
    VkGraphicsPipelineCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO;
    info.pNext = render_pass != nullptr ? nullptr : &rendering;
    info.renderPass = render_pass != nullptr ? render_pass->pass : VK_NULL_HANDLE;
    info.stageCount = static_cast<std::uint32_t>(stages.size());
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
    vkDestroyShaderModule(device, vertex, nullptr);
    vkDestroyShaderModule(device, fragment, nullptr);
    REQUIRE(made == VK_SUCCESS);
  }
  raster_pipeline(const raster_pipeline&) = delete;
  raster_pipeline& operator=(const raster_pipeline&) = delete;
  ~raster_pipeline() {
    vkDestroyPipeline(device, pipeline, nullptr);
    vkDestroyPipelineLayout(device, layout, nullptr);
  }

  // Inside the node's native scope: rendering (or the render pass) over its
  // attachments with the plan's load and store ops, the near red triangle,
  // then the far green one that overlaps it, from `vertex_buffer`.
  bool draw(VkCommandBuffer commands, const ferrum::native_buffer& vertex_buffer, const ferrum::node_image& color,
            const ferrum::node_image& depth) const {
    VkRenderingAttachmentInfo color_attachment{};
    color_attachment.sType = VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO;
    color_attachment.imageView = ferrum::gpu::vulkan_image_view(*color.image);
    color_attachment.imageLayout = ferrum::gpu::vulkan_layout(color.layout);
    color_attachment.loadOp = ferrum::gpu::vulkan_load_op(color.load);
    color_attachment.storeOp = ferrum::gpu::vulkan_store_op(color.store);
    color_attachment.clearValue.color = {{0.0f, 0.0f, 1.0f, 1.0f}};
    VkRenderingAttachmentInfo depth_attachment{};
    depth_attachment.sType = VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO;
    depth_attachment.imageView = ferrum::gpu::vulkan_image_view(*depth.image);
    depth_attachment.imageLayout = ferrum::gpu::vulkan_layout(depth.layout);
    depth_attachment.loadOp = ferrum::gpu::vulkan_load_op(depth.load);
    depth_attachment.storeOp = ferrum::gpu::vulkan_store_op(depth.store);
    depth_attachment.clearValue.depthStencil = {1.0f, 0};
    VkRenderingInfo rendering{};
    rendering.sType = VK_STRUCTURE_TYPE_RENDERING_INFO;
    rendering.renderArea = {{0, 0}, {raster_side, raster_side}};
    rendering.layerCount = 1;
    rendering.colorAttachmentCount = 1;
    rendering.pColorAttachments = &color_attachment;
    rendering.pDepthAttachment = &depth_attachment;
    if (render_pass == nullptr)
      vkCmdBeginRendering(commands, &rendering);
    else if (!render_pass->begin(commands, color, depth))
      return false;
    vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline);
    const VkViewport viewport{0.0f, 0.0f, static_cast<float>(raster_side), static_cast<float>(raster_side), 0.0f, 1.0f};
    const VkRect2D scissor{{0, 0}, {raster_side, raster_side}};
    vkCmdSetViewport(commands, 0, 1, &viewport);
    vkCmdSetScissor(commands, 0, 1, &scissor);
    const VkBuffer buffer = ferrum::gpu::vulkan_buffer(vertex_buffer.buffer);
    const VkDeviceSize offset = vertex_buffer.offset;
    vkCmdBindVertexBuffers(commands, 0, 1, &buffer, &offset);
    for (std::uint32_t t = 0; t < colors.size(); ++t) {
      vkCmdPushConstants(commands, layout, VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof(colors[t]), colors[t].data());
      vkCmdDraw(commands, 3, 1, 3 * t, 0);
    }
    if (render_pass == nullptr)
      vkCmdEndRendering(commands);
    else
      vkCmdEndRenderPass(commands);
    return true;
  }
};

// The RGBA8 word at pixel (x, y) of `bytes` (red in the low byte).
std::uint32_t pixel(std::span<const std::byte> bytes, std::uint32_t x, std::uint32_t y) {
  std::uint32_t word = 0;
  std::memcpy(&word, bytes.data() + (std::size_t{y} * raster_side + x) * 4, 4);
  return word;
}

// Runs `waves` waves of `program` (the raster plan's, maybe changed) on
// `s`'s device, node/draw drawing by dynamic rendering or by `classic`
// render pass; each wave's drawing, read back, goes to `check`. With
// `images`, image/color and image/depth are the engine's, named by each
// wave in the layout the last wave's report says it left them in. With
// `engine_vertices`, resource/vertices is imported: each wave names that
// buffer of the engine's, which holds the vertices already; else node/draw
// copies them into the lane's. Returns how many encodings and waves failed.
int run_raster_waves(vulkan_test::session& s, std::shared_ptr<const ferrum::compiled_program> program, int waves,
                     bool classic, const std::function<void(std::span<const std::byte>)>& check,
                     std::vector<ferrum::imported_image> images = {},
                     const ferrum::gpu::arena* engine_vertices = nullptr) {
  // The engine keeps its depth image: stored, not dropped after its use.
  const ferrum::attachment_store depth_store =
      images.empty() ? ferrum::attachment_store::dont_care : ferrum::attachment_store::store;
  const auto handles = ferrum::gpu::native_handles(*s.device);
  REQUIRE(handles.has_value());
  std::atomic<int> failures{0};
  classic_render_pass pass(handles->device);
  attachment_formats formats;
  for (const ferrum::lane_image& i : program->buckets[0].lane.images) {
    if (i.resource.view() == "image/color") formats.color = i.image.format;
    if (i.resource.view() == "image/depth") formats.depth = i.image.format;
  }
  const raster_pipeline pipeline(handles->device, classic ? &pass : nullptr, formats);
  const auto encode = [&](const ferrum::encode_context& c) {
    const ferrum::node_image* color = c.image("image/color");
    if (color == nullptr) return (void)failures.fetch_add(1);
    if (c.node_index == 0) {
      // The vertices into the lane's buffer, by ferrum's copy.
      const ferrum::node_resource* target = c.resource("resource/vertices");
      if (target == nullptr) return (void)failures.fetch_add(1);
      std::memcpy(c.binding->bytes().data(), vertices.data(), sizeof vertices);
      if (engine_vertices != nullptr ? target->range.arena != engine_vertices || target->range.size != sizeof vertices
                                     : !c.commands.copy(c.slot, target->range))
        return (void)failures.fetch_add(1);
      const ferrum::node_image* depth = c.image("image/depth");
      // Derived from the plan: both cleared (first use); the color image
      // kept for node/read, the depth image used once.
      if (depth == nullptr || color->load != ferrum::attachment_load::clear ||
          color->store != ferrum::attachment_store::store || depth->load != ferrum::attachment_load::clear ||
          depth->store != depth_store || c.commands.stages() != ferrum::gpu::list_stages::graphics)
        return (void)failures.fetch_add(1);
      const auto native = c.native();
      if (!native) return (void)failures.fetch_add(1);
      if (!pipeline.draw(ferrum::gpu::vulkan_command_buffer(native->command_buffer), native->resource(1), *color,
                         *depth))
        failures.fetch_add(1);
    } else {
      const ferrum::node_resource* out = c.resource("resource/out");
      if (out == nullptr || !c.commands.copy(*color->image, color->layout, out->range)) failures.fetch_add(1);
    }
  };
  boost::asio::thread_pool pool(2);
  auto made = ferrum::scheduler::create(std::move(program), *s.device, pool.get_executor(),
                                        {.fence_timeout = std::chrono::seconds(60), .encoder_tasks = 2});
  REQUIRE(made.has_value());
  std::unique_ptr<ferrum::scheduler> scheduler = std::move(*made);
  std::vector<ferrum::imported_buffer> imports;
  if (engine_vertices != nullptr) imports.push_back({"resource/vertices", engine_vertices->whole()});
  for (int i = 0; i < waves; ++i) {
    ferrum::wave_readback readback;
    auto done = sched_test::submit(*scheduler, encode,
                                   {.bucket_class = "frame",
                                    .extent = {raster_side, raster_side, raster_side * raster_side},
                                    .imports = imports,
                                    .images = images,
                                    .readback = &readback});
    const auto [ec, report] = sched_test::get(done, std::chrono::seconds(60));
    INFO(report.message);
    if (ec) {
      failures.fetch_add(1);
      continue;
    }
    if (!images.empty()) {
      // Where the wave left the engine's images: the next wave names them
      // there (the validation layers check it).
      CHECK(report.final_layout("image/color") == ferrum::image_layout::transfer_src);
      CHECK(report.final_layout("image/depth") == ferrum::image_layout::depth_attachment);
      images.assign(report.images().begin(), report.images().end());
    }
    const std::span<const std::byte> bytes = readback.bytes("resource/out").value();
    REQUIRE(bytes.size() == std::size_t{raster_side} * raster_side * 4);
    check(bytes);
  }
  scheduler.reset();
  pool.join();
  return failures.load();
}

// The raster plan (or `text`), its attachments of `formats`.
std::shared_ptr<const ferrum::compiled_program> raster_program(attachment_formats formats = {},
                                                               std::string_view text = ferrum::test::raster_plan) {
  ferrum::plan p = ferrum::test::require(ferrum::parse_plan(text));
  for (ferrum::resource_descriptor& r : p.resources) {
    if (r.id.view() == "image/color") r.image->format = formats.color;
    if (r.id.view() == "image/depth") r.image->format = formats.depth;
  }
  return std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(p));
}

// The raster plan's drawing: where both triangles cover, the near red one
// (the far green one fails the depth test); the green one's alone: green;
// no triangle: the clear colour, blue.
void check_drawing(std::span<const std::byte> bytes) {
  CHECK(pixel(bytes, 16, 9) == 0xff0000ffu);
  CHECK(pixel(bytes, 25, 9) == 0xff00ff00u);
  CHECK(pixel(bytes, 1, 30) == 0xffff0000u);
}

// Four waves of the raster plan, node/draw drawing by dynamic rendering or
// by `classic` render pass, into attachments of `formats`; each wave's
// pixels checked (each channel 0 or 1, which sRGB encodes as unorm does).
void draw_waves(bool classic, attachment_formats formats = {}) {
  vulkan_test::session s;
  if (!s.open()) return;
  // lavapipe: Vulkan 1.3 with dynamic rendering, graphics on its one family.
  REQUIRE(s.device->limits().graphics);
  // Red and blue as words of the color format (bgra: swapped).
  const bool bgra =
      formats.color == ferrum::image_format::bgra8_unorm || formats.color == ferrum::image_format::bgra8_srgb;
  const std::uint32_t red = bgra ? 0xffff0000u : 0xff0000ffu;
  const std::uint32_t blue = bgra ? 0xff0000ffu : 0xffff0000u;
  const int failures = run_raster_waves(s, raster_program(formats), 4, classic, [&](std::span<const std::byte> bytes) {
    // Where both triangles cover: the near red one (the far green one
    // fails the depth test); the green one's alone: green; no triangle:
    // the clear colour, blue.
    CHECK(pixel(bytes, 16, 9) == red);
    CHECK(pixel(bytes, 25, 9) == 0xff00ff00u);
    CHECK(pixel(bytes, 1, 30) == blue);
  });
  CHECK(failures == 0);
  s.finish();
}

}  // namespace

TEST_CASE("vulkan: a raster node draws depth-tested triangles into plan images with the plan's load and store ops",
          "[vulkan][raster][scheduler]") {
  draw_waves(false);
}

TEST_CASE("vulkan: a raster node may draw in a classic render pass over its attachments, in their layouts throughout",
          "[vulkan][raster][scheduler]") {
  draw_waves(true);
}

TEST_CASE("vulkan: a raster node draws into an rgba8-srgb color and a d24-unorm-s8-uint depth attachment",
          "[vulkan][raster][scheduler][image]") {
  // Both aspects of the depth-stencil image in every barrier, its view
  // the depth aspect: what the validation layers check.
  draw_waves(false, {ferrum::image_format::rgba8_srgb, ferrum::image_format::d24_unorm_s8_uint});
  draw_waves(false, {ferrum::image_format::bgra8_srgb, ferrum::image_format::d32_float_s8_uint});
}

TEST_CASE("vulkan: dropping the derived barrier between a raster plan's nodes is reported by validation",
          "[vulkan][raster][scheduler][validation]") {
  const auto program = raster_program();
  const std::vector<std::size_t> nodes = ferrum::test::barrier_nodes(*program);
  // node/read's: the drawing's layout change, after the draw (without it,
  // the copy finds the image still a color attachment).
  REQUIRE(nodes == std::vector<std::size_t>{1});
  for (const std::size_t n : nodes) {
    INFO("without the barrier before node " << n);
    vulkan_test::session s;
    if (!s.open()) return;
    (void)run_raster_waves(s, ferrum::test::without_barrier(*program, n), 2, false, [](std::span<const std::byte>) {});
    const std::string log = s.finish_reported();
    INFO(log);
    CHECK(vulkan_test::reports_missing_barrier(log));
  }
}

TEST_CASE("vulkan: a raster node draws into an engine's VkImages, cleared by their first use, left as reported",
          "[vulkan][raster][scheduler][imported]") {
  vulkan_test::session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  const auto handles = *ferrum::gpu::native_handles(device);
  int failures = 0;
  {
    // The color image with the engine's own view; the depth image without:
    // ferrum makes one, and destroys it with the wrapper.
    vulkan_test::engine_vk_image color(
        handles, VK_FORMAT_R8G8B8A8_UNORM,
        VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
        {raster_side, raster_side, 1}, true);
    vulkan_test::engine_vk_image depth(handles, VK_FORMAT_D32_SFLOAT, VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT,
                                       {raster_side, raster_side, 1}, false);
    auto color_image = require(ferrum::gpu::import_vulkan_image(
        device, ferrum::gpu::vulkan_image_import::of(color.image, color.info, color.view)));
    auto depth_image = require(
        ferrum::gpu::import_vulkan_image(device, ferrum::gpu::vulkan_image_import::of(depth.image, depth.info)));
    namespace usage = ferrum::gpu::image_usage;
    CHECK(color_image->spec() ==
          ferrum::gpu::image_spec{ferrum::image_format::rgba8_unorm, raster_side, raster_side, 1, 1,
                                  usage::color_attachment | usage::transfer_src | usage::transfer_dst});
    CHECK(ferrum::gpu::vulkan_image_handle(*color_image) == color.image);
    CHECK(ferrum::gpu::vulkan_image_view(*color_image) == color.view);
    CHECK(ferrum::gpu::vulkan_image_view(*depth_image) != VK_NULL_HANDLE);
    // What the engine left in its color image, in transfer-dst: yellow.
    // The wave's drawing clears it (blue where no triangle is), not draws
    // over it.
    auto upload =
        require(device.create_arena(std::size_t{raster_side} * raster_side * 4, ferrum::memory_class::upload));
    for (std::size_t w = 0; w < std::size_t{raster_side} * raster_side; ++w)
      vulkan_test::set_word(*upload, w, 0xff00ffffu);
    auto list = require(device.create_command_list());
    const std::uint64_t filled = vulkan_test::submit(device, *list, [&](ferrum::gpu::command_list& l) {
      if (upload->staged()) require(l.stage(*upload));
      require(l.transition(*color_image, ferrum::image_layout::undefined, ferrum::image_layout::transfer_dst));
      require(l.copy(upload->whole(), *color_image, ferrum::image_layout::transfer_dst));
    });
    vulkan_test::require_reached(device.queue().timeline(), filled);
    failures = run_raster_waves(s, raster_program({}, ferrum::test::imported_raster_plan()), 3, false,
                                [](std::span<const std::byte> bytes) {
                                  CHECK(pixel(bytes, 16, 9) == 0xff0000ffu);
                                  CHECK(pixel(bytes, 25, 9) == 0xff00ff00u);
                                  CHECK(pixel(bytes, 1, 30) == 0xffff0000u);
                                },
                                {{"image/color", color_image.get(), ferrum::image_layout::transfer_dst},
                                 {"image/depth", depth_image.get(), ferrum::image_layout::undefined}});
    list.reset();
    upload.reset();
    // The wrappers go first; the engine's objects after them (its view
    // still its own).
    color_image.reset();
    depth_image.reset();
  }
  CHECK(failures == 0);
}

TEST_CASE("vulkan: a raster node draws from an engine's vertex buffer made with vertex usage alone",
          "[vulkan][raster][imported][scheduler]") {
  vulkan_test::session s;
  if (!s.open()) return;
  const auto handles = *ferrum::gpu::native_handles(*s.device);
  // resource/vertices is the engine's (an imported pool), read as vertices.
  std::string text = ferrum::test::raster_plan;
  const auto replace = [&](std::string_view from, std::string_view to) {
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  };
  replace(R"("resource/vertices": "read-write")", R"("resource/vertices": "vertex")");
  replace(R"("pools": {"pool/out": {"memory": "readback"}})",
          R"("pools": {"pool/out": {"memory": "readback"}, "pool/vertices": {"memory": "imported"}})");
  const auto program = std::make_shared<const ferrum::compiled_program>(
      ferrum::test::compile_ok(ferrum::test::require(ferrum::parse_plan(text))));
  {
    // 96 bytes: the resource's, the buffer's.
    vulkan_test::engine_buffer mesh(handles, sizeof vertices, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT);
    std::memcpy(mesh.mapped, vertices.data(), sizeof vertices);
    auto arena = require(
        ferrum::gpu::import_vulkan_buffer(*s.device, mesh.buffer, sizeof vertices, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT));
    CHECK(arena->usage() == ferrum::gpu::buffer_usage::vertex);
    CHECK(run_raster_waves(s, program, 2, false, check_drawing, {}, arena.get()) == 0);
  }
  s.finish();
}
