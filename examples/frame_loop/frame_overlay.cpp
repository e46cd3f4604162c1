// examples/frame_loop/frame_overlay.cpp — --overlay's Dear ImGui window
// (frame_overlay.hpp).
#include "frame_overlay.hpp"

#include "ferrum/gpu/vulkan_device.hpp"
#include "ferrum/scheduler/lane_state.hpp"

#include <backends/imgui_impl_vulkan.h>
#include <imgui.h>

#include <mutex>
#include <stdexcept>
#include <string>

namespace frame_loop {
namespace {

namespace gpu = ferrum::gpu;

constexpr const char* window_title = "ferrum frame_loop";
const ImVec2 window_position{8.0f, 8.0f};

// ImGui's current context is one pointer for the process: every ImGui call
// is made under this lock. (Not frame_overlay's: a lane's state may be
// freed after the scheduler, by the device, once the GPU is done with it.)
std::mutex imgui_lock;

// ImGui's backend reports each Vulkan call's result through a plain function:
// the first failure since check_backend last read it (under imgui_lock).
VkResult backend_failure = VK_SUCCESS;

void record_backend_result(VkResult r) {
  if (r != VK_SUCCESS && backend_failure == VK_SUCCESS) backend_failure = r;
}

void check(VkResult r, const std::string& what) {
  if (r != VK_SUCCESS)
    throw std::runtime_error("--overlay: " + what + " failed (VkResult " + std::to_string(static_cast<int>(r)) + ")");
}

void check_backend(bool ok, const std::string& what) {
  const VkResult failure = backend_failure;
  backend_failure = VK_SUCCESS;
  if (!ok && failure == VK_SUCCESS) throw std::runtime_error("--overlay: " + what + " failed");
  check(failure, what);
}

// Makes `context` ImGui's current one for this scope (under imgui_lock), and
// none after it.
class current_context {
 public:
  explicit current_context(ImGuiContext* context) noexcept { ImGui::SetCurrentContext(context); }
  current_context(const current_context&) = delete;
  current_context& operator=(const current_context&) = delete;
  ~current_context() { ImGui::SetCurrentContext(nullptr); }
};

}  // namespace

// A lane's ImGui: its context and Vulkan backend (vertex and index buffers,
// font image, pipeline), the descriptor pool the backend's font set comes
// from, and the framebuffer of the lane's last wave.
class overlay_lane final : public ferrum::lane_state {
 public:
  overlay_lane(const frame_overlay& overlay, const ferrum::lane_state_context& c) : device_(overlay.vk_device_) {
    const std::lock_guard lock(imgui_lock);
    try {
      make(overlay, c);
    } catch (...) {
      release();
      throw;
    }
  }
  overlay_lane(const overlay_lane&) = delete;
  overlay_lane& operator=(const overlay_lane&) = delete;
  // The GPU is done with the lane (lane_state.hpp): its buffers may go.
  ~overlay_lane() override {
    const std::lock_guard lock(imgui_lock);
    release();
  }

  ImGuiContext* context() const noexcept { return context_; }

  // The framebuffer over `view` for this wave; the lane's last wave's, done
  // with, goes. (Made afresh each wave: a swapchain recreated may hand out
  // a new view with an old one's handle.)
  VkFramebuffer framebuffer(VkRenderPass pass, VkImageView view, std::uint32_t width, std::uint32_t height) {
    if (framebuffer_ != VK_NULL_HANDLE) vkDestroyFramebuffer(device_, framebuffer_, nullptr);
    framebuffer_ = VK_NULL_HANDLE;
    VkFramebufferCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO;
    info.renderPass = pass;
    info.attachmentCount = 1;
    info.pAttachments = &view;
    info.width = width;
    info.height = height;
    info.layers = 1;
    check(vkCreateFramebuffer(device_, &info, nullptr, &framebuffer_), "vkCreateFramebuffer");
    return framebuffer_;
  }

 private:
  void make(const frame_overlay& overlay, const ferrum::lane_state_context& c) {
    const gpu::vulkan_native_handles vk = gpu::native_handles(c.device).value();
    context_ = ImGui::CreateContext();
    const current_context current(context_);
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // no imgui.ini: the window's place is the example's
    io.LogFilename = nullptr;

    // The font's descriptor set, the only one the backend allocates.
    const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 1};
    VkDescriptorPoolCreateInfo pool{};
    pool.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    pool.maxSets = 1;
    pool.poolSizeCount = 1;
    pool.pPoolSizes = &size;
    check(vkCreateDescriptorPool(device_, &pool, nullptr, &descriptors_), "vkCreateDescriptorPool");

    // Image counts: the backend keeps that many sets of vertex and index
    // buffers and takes them in turn. A lane draws one frame at a time, and
    // only after its last one's fence: its least, two, is plenty.
    ImGui_ImplVulkan_InitInfo init{};
    init.Instance = vk.instance;
    init.PhysicalDevice = vk.physical_device;
    init.Device = vk.device;
    init.QueueFamily = vk.queue_family;
    init.Queue = vk.queue;
    init.DescriptorPool = descriptors_;
    init.MinImageCount = 2;
    init.ImageCount = 2;
    init.MSAASamples = VK_SAMPLE_COUNT_1_BIT;
    init.CheckVkResultFn = &record_backend_result;
    const bool initialized = ImGui_ImplVulkan_Init(
        &init, overlay.render_pass(ferrum::attachment_load::load, ferrum::attachment_store::store));
    backend_ = initialized;
    check_backend(initialized, "ImGui_ImplVulkan_Init");
    upload_fonts(c.device, vk);
  }

  // The font image, uploaded by a submission of the lane's own: ferrum's
  // queue, under its lock (lane_state.hpp), waited for here.
  void upload_fonts(gpu::device& device, const gpu::vulkan_native_handles& vk) {
    VkCommandPoolCreateInfo pool_info{};
    pool_info.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pool_info.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    pool_info.queueFamilyIndex = vk.queue_family;
    VkCommandPool pool = VK_NULL_HANDLE;
    check(vkCreateCommandPool(device_, &pool_info, nullptr, &pool), "vkCreateCommandPool");
    VkFence fence = VK_NULL_HANDLE;
    try {
      VkCommandBufferAllocateInfo allocate{};
      allocate.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
      allocate.commandPool = pool;
      allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      allocate.commandBufferCount = 1;
      VkCommandBuffer commands = VK_NULL_HANDLE;
      check(vkAllocateCommandBuffers(device_, &allocate, &commands), "vkAllocateCommandBuffers");
      VkCommandBufferBeginInfo begin{};
      begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
      begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
      check(vkBeginCommandBuffer(commands, &begin), "vkBeginCommandBuffer");
      check_backend(ImGui_ImplVulkan_CreateFontsTexture(commands), "ImGui_ImplVulkan_CreateFontsTexture");
      check(vkEndCommandBuffer(commands), "vkEndCommandBuffer");
      VkFenceCreateInfo fence_info{};
      fence_info.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
      check(vkCreateFence(device_, &fence_info, nullptr, &fence), "vkCreateFence");
      VkSubmitInfo submit{};
      submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
      submit.commandBufferCount = 1;
      submit.pCommandBuffers = &commands;
      {
        const auto held = device.queue().lock();
        check(vkQueueSubmit(vk.queue, 1, &submit, fence), "vkQueueSubmit (the overlay's fonts)");
      }
      constexpr std::uint64_t ten_seconds = 10'000'000'000;
      check(vkWaitForFences(device_, 1, &fence, VK_TRUE, ten_seconds), "waiting for the overlay's fonts");
      ImGui_ImplVulkan_DestroyFontUploadObjects();
    } catch (...) {
      if (fence != VK_NULL_HANDLE) vkDestroyFence(device_, fence, nullptr);
      vkDestroyCommandPool(device_, pool, nullptr);
      throw;
    }
    vkDestroyFence(device_, fence, nullptr);
    vkDestroyCommandPool(device_, pool, nullptr);
  }

  // Under imgui_lock.
  void release() noexcept {
    if (framebuffer_ != VK_NULL_HANDLE) vkDestroyFramebuffer(device_, framebuffer_, nullptr);
    if (context_ != nullptr) {
      {
        const current_context current(context_);
        if (backend_) ImGui_ImplVulkan_Shutdown();
      }
      ImGui::DestroyContext(context_);
    }
    if (descriptors_ != VK_NULL_HANDLE) vkDestroyDescriptorPool(device_, descriptors_, nullptr);
    framebuffer_ = VK_NULL_HANDLE;
    context_ = nullptr;
    descriptors_ = VK_NULL_HANDLE;
    backend_ = false;
  }

  VkDevice device_;
  ImGuiContext* context_ = nullptr;
  bool backend_ = false;
  VkDescriptorPool descriptors_ = VK_NULL_HANDLE;
  VkFramebuffer framebuffer_ = VK_NULL_HANDLE;
};

frame_overlay::frame_overlay(gpu::device& device, ferrum::image_format format) {
  const auto vk = gpu::native_handles(device);
  if (!vk) throw std::runtime_error("--overlay needs a Vulkan device");
  vk_device_ = vk->device;
  const VkImageLayout layout = gpu::vulkan_layout(ferrum::image_layout::color_attachment);
  for (const ferrum::attachment_load load :
       {ferrum::attachment_load::load, ferrum::attachment_load::clear, ferrum::attachment_load::dont_care}) {
    for (const ferrum::attachment_store store :
         {ferrum::attachment_store::store, ferrum::attachment_store::dont_care}) {
      // The attachment as ferrum's contract for a classic render pass in a
      // raster node has it: the node's layout from start to end (ferrum's
      // barriers put the image in it and order the accesses around the
      // node), the plan's load and store ops.
      const VkAttachmentDescription attachment =
          gpu::vulkan_attachment_description(format, ferrum::image_layout::color_attachment, load, store);
      const VkAttachmentReference color{0, layout};
      VkSubpassDescription subpass{};
      subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
      subpass.colorAttachmentCount = 1;
      subpass.pColorAttachments = &color;
      VkRenderPassCreateInfo info{};
      info.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO;
      info.attachmentCount = 1;
      info.pAttachments = &attachment;
      info.subpassCount = 1;
      info.pSubpasses = &subpass;
      VkRenderPass& pass = render_passes_[static_cast<std::size_t>(load) * 2 + static_cast<std::size_t>(store)];
      const VkResult made = vkCreateRenderPass(vk_device_, &info, nullptr, &pass);
      if (made != VK_SUCCESS) {
        destroy_render_passes();
        check(made, "vkCreateRenderPass");
      }
    }
  }
}

frame_overlay::~frame_overlay() { destroy_render_passes(); }

void frame_overlay::destroy_render_passes() noexcept {
  for (VkRenderPass& pass : render_passes_) {
    if (pass != VK_NULL_HANDLE) vkDestroyRenderPass(vk_device_, pass, nullptr);
    pass = VK_NULL_HANDLE;
  }
}

VkRenderPass frame_overlay::render_pass(ferrum::attachment_load load, ferrum::attachment_store store) const noexcept {
  return render_passes_[static_cast<std::size_t>(load) * 2 + static_cast<std::size_t>(store)];
}

ferrum::lane_state_factory frame_overlay::lane_factory() {
  return [this](const ferrum::lane_state_context& c) -> ferrum::lane_state_result {
    return std::unique_ptr<ferrum::lane_state>(std::make_unique<overlay_lane>(*this, c));
  };
}

void frame_overlay::draw(const ferrum::encode_context& c, const ferrum::node_image& target, std::uint32_t width,
                         std::uint32_t height, std::uint64_t frame, const overlay_numbers& numbers) const {
  auto* lane = c.state_as<overlay_lane>();
  if (lane == nullptr) throw std::runtime_error("--overlay: lane " + std::to_string(c.lane) + " has no overlay state");
  if (target.layout != ferrum::image_layout::color_attachment)
    throw std::runtime_error("--overlay: node/overlay's image is not a color attachment");
  const ferrum::native_scope native = c.native().value();
  const VkCommandBuffer commands = gpu::vulkan_command_buffer(native.command_buffer);

  const std::lock_guard lock(imgui_lock);
  const current_context current(lane->context());
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = ImVec2(static_cast<float>(width), static_cast<float>(height));
  io.DeltaTime = numbers.frames_per_second > 0 ? static_cast<float>(1.0 / numbers.frames_per_second) : 1.0f / 60.0f;
  ImGui_ImplVulkan_NewFrame();
  ImGui::NewFrame();
  ImGui::SetNextWindowPos(window_position);
  ImGui::SetNextWindowBgAlpha(0.85f);
  constexpr ImGuiWindowFlags flags = ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoMove |
                                     ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                                     ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav;
  ImGui::Begin(window_title, nullptr, flags);
  ImGui::Text("%.1f frames/s, frame %.1f ms", numbers.frames_per_second, numbers.frame_ms);
  ImGui::Text("gpu %.2f ms a frame; per pass:", numbers.gpu_ms);
  // The passes two to a row, each name and its GPU time (p50, ms).
  if (ImGui::BeginTable("passes", 4, ImGuiTableFlags_SizingFixedFit)) {
    for (const overlay_numbers::pass& pass : numbers.passes) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(pass.name.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%5.2f", pass.gpu_ms);
    }
    ImGui::EndTable();
  }
  ImGui::Text("%u lanes (%.1f MiB), %u in flight", numbers.lanes, numbers.lane_mib, numbers.in_flight);
  const ImVec2 position = ImGui::GetWindowPos();
  const ImVec2 size = ImGui::GetWindowSize();
  ImGui::End();
  ImGui::Render();

  VkRenderPassBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO;
  begin.renderPass = render_pass(target.load, target.store);
  begin.framebuffer = lane->framebuffer(begin.renderPass, gpu::vulkan_image_view(*target.image), width, height);
  begin.renderArea = {{0, 0}, {width, height}};
  const VkClearValue clear{};  // a clear (never here: the frame is under it) to transparent black
  begin.clearValueCount = 1;
  begin.pClearValues = &clear;
  vkCmdBeginRenderPass(commands, &begin, VK_SUBPASS_CONTENTS_INLINE);
  ImGui_ImplVulkan_RenderDrawData(ImGui::GetDrawData(), commands);
  vkCmdEndRenderPass(commands);
  check_backend(true, "ImGui_ImplVulkan_RenderDrawData");

  if (frame >= latest_frame_) {
    latest_frame_ = frame;
    latest_region_ = {static_cast<std::uint32_t>(position.x), static_cast<std::uint32_t>(position.y),
                      static_cast<std::uint32_t>(size.x), static_cast<std::uint32_t>(size.y)};
  }
}

pixel_region frame_overlay::latest_region() const {
  const std::lock_guard lock(imgui_lock);
  return latest_region_;
}

}  // namespace frame_loop
