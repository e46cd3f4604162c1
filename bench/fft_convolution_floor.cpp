// fft_convolution_floor.cpp — the plain Vulkan floor of the FFT
// convolution benchmark (fft_convolution_floor.hpp).
#include "fft_convolution_floor.hpp"

#include "vkfft_plan.hpp"

#include "ferrum/gpu/queue.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include <vulkan/vulkan_core.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ferrum::bench {
namespace {

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS)
    throw std::runtime_error(std::string("floor: ") + what + " failed with VkResult " + std::to_string(r));
}

constexpr VkMemoryPropertyFlags device_local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
constexpr VkMemoryPropertyFlags host_visible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
constexpr VkMemoryPropertyFlags host_coherent = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
constexpr VkMemoryPropertyFlags host_cached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;

// The kernel ABI's push constants: primary offset and size, secondary offset
// and size (bytes), then the kernel's one word (the points).
constexpr std::uint32_t push_words = 5;
constexpr std::uint32_t local_size_x = 64;  // kernel_abi.glsl

}  // namespace

// Named (not anonymous): fft_floor::impl, which has external linkage, holds them.
namespace fft_floor_parts {

struct buffer {
  VkBuffer handle = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  std::byte* mapped = nullptr;
  bool coherent = true;
};

struct set {
  buffer input;     // signals at 0, the kernel's spectrum at filter_offset
  buffer spectrum;  // device memory
  buffer output;    // readback memory
  std::unique_ptr<fft_convolution::vkfft_plan> forward;
  std::unique_ptr<fft_convolution::vkfft_plan> inverse;
  std::array<VkDescriptorSet, 2> descriptors{};  // the spectra's buffer, the input's
  VkCommandBuffer commands = VK_NULL_HANDLE;
  std::uint64_t last_value = 0;  // the timeline value of its last submission (0: none)
  std::uint64_t last_input = 0;  // that submission's input number
};

}  // namespace fft_floor_parts

using fft_floor_parts::buffer;
using fft_floor_parts::set;

struct fft_floor::impl {
  gpu::device& ferrum_device;
  fft_convolution::batch_shape shape;
  gpu::vulkan_native_handles vk;
  VkPhysicalDeviceMemoryProperties memory{};
  std::uint32_t max_workgroups = 1;
  std::size_t filter_offset = 0;
  bool staged = false;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout pipeline_layout = VK_NULL_HANDLE;
  VkShaderModule shader = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorPool descriptor_pool = VK_NULL_HANDLE;
  VkCommandPool command_pool = VK_NULL_HANDLE;
  VkSemaphore timeline = VK_NULL_HANDLE;
  std::uint64_t submitted = 0;
  std::vector<set> sets;

  impl(gpu::device& d, const fft_convolution::batch_shape& s) : ferrum_device(d), shape(s) {}
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;

  ~impl() {
    if (timeline != VK_NULL_HANDLE && submitted != 0) wait(submitted);
    for (set& s : sets) {
      s.forward.reset();
      s.inverse.reset();
      for (buffer* b : {&s.input, &s.spectrum, &s.output}) {
        if (b->handle != VK_NULL_HANDLE) vkDestroyBuffer(vk.device, b->handle, nullptr);
        if (b->memory != VK_NULL_HANDLE) vkFreeMemory(vk.device, b->memory, nullptr);
      }
    }
    if (timeline != VK_NULL_HANDLE) vkDestroySemaphore(vk.device, timeline, nullptr);
    if (command_pool != VK_NULL_HANDLE) vkDestroyCommandPool(vk.device, command_pool, nullptr);
    if (descriptor_pool != VK_NULL_HANDLE) vkDestroyDescriptorPool(vk.device, descriptor_pool, nullptr);
    if (pipeline != VK_NULL_HANDLE) vkDestroyPipeline(vk.device, pipeline, nullptr);
    if (shader != VK_NULL_HANDLE) vkDestroyShaderModule(vk.device, shader, nullptr);
    if (pipeline_layout != VK_NULL_HANDLE) vkDestroyPipelineLayout(vk.device, pipeline_layout, nullptr);
    if (set_layout != VK_NULL_HANDLE) vkDestroyDescriptorSetLayout(vk.device, set_layout, nullptr);
  }

  void wait(std::uint64_t value) const {
    VkSemaphoreWaitInfo info{};
    info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
    info.semaphoreCount = 1;
    info.pSemaphores = &timeline;
    info.pValues = &value;
    check(vkWaitSemaphores(vk.device, &info, UINT64_MAX), "vkWaitSemaphores");
  }

  // The first memory type of `wanted` (in order) that fits the buffer, as
  // ferrum's arenas choose; -1 when none.
  [[nodiscard]] int memory_type(std::uint32_t allowed, std::initializer_list<VkMemoryPropertyFlags> wanted) const {
    for (VkMemoryPropertyFlags flags : wanted)
      for (std::uint32_t i = 0; i < memory.memoryTypeCount; ++i)
        if ((allowed & (1u << i)) != 0 && (memory.memoryTypes[i].propertyFlags & flags) == flags)
          return static_cast<int>(i);
    return -1;
  }

  // A buffer of `bytes` in the first memory type of `wanted`, else of
  // `fallback` (counted as staged: ferrum would stage there); mapped when
  // host-visible.
  buffer make_buffer(std::size_t bytes, std::initializer_list<VkMemoryPropertyFlags> wanted,
                     std::initializer_list<VkMemoryPropertyFlags> fallback) {
    buffer b;
    VkBufferCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.size = bytes;
    info.usage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(vkCreateBuffer(vk.device, &info, nullptr, &b.handle), "vkCreateBuffer");
    VkMemoryRequirements requirements{};
    vkGetBufferMemoryRequirements(vk.device, b.handle, &requirements);
    int type = memory_type(requirements.memoryTypeBits, wanted);
    if (type < 0) {
      type = memory_type(requirements.memoryTypeBits, fallback);
      staged = true;
    }
    if (type < 0) {
      vkDestroyBuffer(vk.device, b.handle, nullptr);
      throw std::runtime_error("floor: no memory type fits a buffer");
    }
    VkMemoryAllocateInfo allocate{};
    allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex = static_cast<std::uint32_t>(type);
    if (VkResult r = vkAllocateMemory(vk.device, &allocate, nullptr, &b.memory); r != VK_SUCCESS) {
      vkDestroyBuffer(vk.device, b.handle, nullptr);
      check(r, "vkAllocateMemory");
    }
    check(vkBindBufferMemory(vk.device, b.handle, b.memory, 0), "vkBindBufferMemory");
    const VkMemoryPropertyFlags flags = memory.memoryTypes[type].propertyFlags;
    b.coherent = (flags & host_coherent) != 0;
    if ((flags & host_visible) != 0) {
      void* mapped = nullptr;
      check(vkMapMemory(vk.device, b.memory, 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
      b.mapped = static_cast<std::byte*>(mapped);
    }
    return b;
  }

  void make_pipeline(std::span<const std::uint32_t> spirv) {
    VkDescriptorSetLayoutBinding binding{};
    binding.binding = 0;
    binding.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    binding.descriptorCount = 1;
    binding.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    VkDescriptorSetLayoutCreateInfo layout_info{};
    layout_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    layout_info.bindingCount = 1;
    layout_info.pBindings = &binding;
    check(vkCreateDescriptorSetLayout(vk.device, &layout_info, nullptr, &set_layout), "vkCreateDescriptorSetLayout");
    const std::array<VkDescriptorSetLayout, 2> layouts{set_layout, set_layout};
    VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_words * 4};
    VkPipelineLayoutCreateInfo pipeline_layout_info{};
    pipeline_layout_info.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    pipeline_layout_info.setLayoutCount = static_cast<std::uint32_t>(layouts.size());
    pipeline_layout_info.pSetLayouts = layouts.data();
    pipeline_layout_info.pushConstantRangeCount = 1;
    pipeline_layout_info.pPushConstantRanges = &push;
    check(vkCreatePipelineLayout(vk.device, &pipeline_layout_info, nullptr, &pipeline_layout),
          "vkCreatePipelineLayout");
    VkShaderModuleCreateInfo shader_info{};
    shader_info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    shader_info.codeSize = spirv.size_bytes();
    shader_info.pCode = spirv.data();
    check(vkCreateShaderModule(vk.device, &shader_info, nullptr, &shader), "vkCreateShaderModule");
    VkComputePipelineCreateInfo pipeline_info{};
    pipeline_info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    pipeline_info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipeline_info.stage.module = shader;
    pipeline_info.stage.pName = "main";
    pipeline_info.layout = pipeline_layout;
    check(vkCreateComputePipelines(vk.device, VK_NULL_HANDLE, 1, &pipeline_info, nullptr, &pipeline),
          "vkCreateComputePipelines");
  }

  void bind(VkDescriptorSet target, VkBuffer b) const {
    VkDescriptorBufferInfo range{b, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet write{};
    write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    write.dstSet = target;
    write.descriptorCount = 1;
    write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    write.pBufferInfo = &range;
    vkUpdateDescriptorSets(vk.device, 1, &write, 0, nullptr);
  }

  // Compute writes before, compute (or the host's reads) after.
  static void barrier(VkCommandBuffer cb, VkPipelineStageFlags after, VkAccessFlags reads) {
    VkMemoryBarrier b{};
    b.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    b.dstAccessMask = reads;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, after, 0, 1, &b, 0, nullptr, 0, nullptr);
  }

  // Forward FFT, multiply, inverse FFT, recorded once.
  void record(set& s) const {
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    check(vkBeginCommandBuffer(s.commands, &begin), "vkBeginCommandBuffer");
    s.forward->record(s.commands);
    const VkAccessFlags shader_access = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    barrier(s.commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, shader_access);
    vkCmdBindPipeline(s.commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdBindDescriptorSets(s.commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_layout, 0,
                            static_cast<std::uint32_t>(s.descriptors.size()), s.descriptors.data(), 0, nullptr);
    const std::array<std::uint32_t, push_words> words{
        0, static_cast<std::uint32_t>(shape.bytes()), static_cast<std::uint32_t>(filter_offset),
        static_cast<std::uint32_t>(shape.filter_bytes()), static_cast<std::uint32_t>(shape.points)};
    vkCmdPushConstants(s.commands, pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_words * 4, words.data());
    // As ferrum's command list: ceil(words / local size) groups, capped.
    const std::size_t groups =
        std::clamp<std::size_t>((shape.bytes() / 4 + local_size_x - 1) / local_size_x, 1, max_workgroups);
    vkCmdDispatch(s.commands, static_cast<std::uint32_t>(groups), 1, 1);
    barrier(s.commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, shader_access);
    s.inverse->record(s.commands);
    // The results, to the host's reads after the timeline wait.
    barrier(s.commands, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    check(vkEndCommandBuffer(s.commands), "vkEndCommandBuffer");
  }
};

fft_floor::fft_floor(gpu::device& device, const fft_convolution::batch_shape& shape, std::size_t count,
                     std::span<const std::uint32_t> multiply_spirv)
    : impl_(std::make_unique<impl>(device, shape)) {
  impl& m = *impl_;
  const std::optional<gpu::vulkan_native_handles> vk = gpu::native_handles(device);
  if (!vk) throw std::runtime_error("floor: needs a Vulkan device");
  m.vk = *vk;
  vkGetPhysicalDeviceMemoryProperties(m.vk.physical_device, &m.memory);
  VkPhysicalDeviceProperties properties{};
  vkGetPhysicalDeviceProperties(m.vk.physical_device, &properties);
  m.max_workgroups = properties.limits.maxComputeWorkGroupCount[0];
  // As the plan lays pool/input out: the signals, then the kernel's spectrum
  // at the next 256-byte boundary.
  m.filter_offset = (shape.bytes() + 255) / 256 * 256;

  m.make_pipeline(multiply_spirv);
  VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, static_cast<std::uint32_t>(2 * count)};
  VkDescriptorPoolCreateInfo pool_info{};
  pool_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  pool_info.maxSets = static_cast<std::uint32_t>(2 * count);
  pool_info.poolSizeCount = 1;
  pool_info.pPoolSizes = &pool_size;
  check(vkCreateDescriptorPool(m.vk.device, &pool_info, nullptr, &m.descriptor_pool), "vkCreateDescriptorPool");
  VkCommandPoolCreateInfo command_pool_info{};
  command_pool_info.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  command_pool_info.queueFamilyIndex = m.vk.queue_family;
  check(vkCreateCommandPool(m.vk.device, &command_pool_info, nullptr, &m.command_pool), "vkCreateCommandPool");
  VkSemaphoreTypeCreateInfo type_info{};
  type_info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  type_info.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkSemaphoreCreateInfo semaphore_info{};
  semaphore_info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  semaphore_info.pNext = &type_info;
  check(vkCreateSemaphore(m.vk.device, &semaphore_info, nullptr, &m.timeline), "vkCreateSemaphore");

  const fft_convolution::vulkan_target target{m.vk.physical_device, m.vk.device, m.vk.queue, m.vk.queue_family};
  m.sets.resize(count);
  for (set& s : m.sets) {
    // upload: device-local memory the host writes; device: device-local;
    // readback: host-visible device-local, cached where offered (ferrum's
    // choices, vulkan_arena.cpp).
    s.input = m.make_buffer(m.filter_offset + shape.filter_bytes(), {device_local | host_visible | host_coherent},
                            {host_visible | host_coherent});
    s.spectrum = m.make_buffer(shape.bytes(), {device_local, 0}, {0});
    s.output = m.make_buffer(shape.bytes(), {device_local | host_visible | host_cached, device_local | host_visible},
                             {host_visible | host_cached, host_visible});
    {
      // VkFFT may submit set-up work to the queue: ferrum's lock, as fft_lane.
      const auto held = device.queue().lock();
      s.forward = std::make_unique<fft_convolution::vkfft_plan>(
          target, fft_convolution::fft_shape{shape.points, shape.batch, fft_convolution::fft_direction::forward},
          fft_convolution::buffer_range{s.input.handle, 0}, fft_convolution::buffer_range{s.spectrum.handle, 0});
      s.inverse = std::make_unique<fft_convolution::vkfft_plan>(
          target, fft_convolution::fft_shape{shape.points, shape.batch, fft_convolution::fft_direction::inverse},
          fft_convolution::buffer_range{s.spectrum.handle, 0}, fft_convolution::buffer_range{s.output.handle, 0});
    }
    const std::array<VkDescriptorSetLayout, 2> layouts{m.set_layout, m.set_layout};
    VkDescriptorSetAllocateInfo set_info{};
    set_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    set_info.descriptorPool = m.descriptor_pool;
    set_info.descriptorSetCount = static_cast<std::uint32_t>(layouts.size());
    set_info.pSetLayouts = layouts.data();
    check(vkAllocateDescriptorSets(m.vk.device, &set_info, s.descriptors.data()), "vkAllocateDescriptorSets");
    m.bind(s.descriptors[0], s.spectrum.handle);
    m.bind(s.descriptors[1], s.input.handle);
    VkCommandBufferAllocateInfo command_info{};
    command_info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    command_info.commandPool = m.command_pool;
    command_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    command_info.commandBufferCount = 1;
    check(vkAllocateCommandBuffers(m.vk.device, &command_info, &s.commands), "vkAllocateCommandBuffers");
    m.record(s);
  }
}

fft_floor::~fft_floor() = default;

void fft_floor::run(std::uint64_t first, std::uint64_t count, const fft_convolution::convolution_reference& reference) {
  impl& m = *impl_;
  const fft_convolution::batch_shape& shape = m.shape;
  for (std::uint64_t i = 0; i < count; ++i) {
    set& s = m.sets[i % m.sets.size()];
    // The set's previous convolution is done before its buffers are reused.
    if (s.last_value != 0) m.wait(s.last_value);
    reference.write_signals(first + i, std::span(s.input.mapped, shape.bytes()));
    reference.write_filter(std::span(s.input.mapped + m.filter_offset, shape.filter_bytes()));
    if (!s.input.coherent) {
      VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, s.input.memory, 0, VK_WHOLE_SIZE};
      check(vkFlushMappedMemoryRanges(m.vk.device, 1, &range), "vkFlushMappedMemoryRanges");
    }
    const std::uint64_t value = m.submitted + 1;
    VkTimelineSemaphoreSubmitInfo timeline_info{};
    timeline_info.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
    timeline_info.signalSemaphoreValueCount = 1;
    timeline_info.pSignalSemaphoreValues = &value;
    VkSubmitInfo submit{};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.pNext = &timeline_info;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &s.commands;
    submit.signalSemaphoreCount = 1;
    submit.pSignalSemaphores = &m.timeline;
    {
      // ferrum's queue: its lock around the submission.
      const auto held = m.ferrum_device.queue().lock();
      check(vkQueueSubmit(m.vk.queue, 1, &submit, VK_NULL_HANDLE), "vkQueueSubmit");
    }
    m.submitted = value;
    s.last_value = value;
    s.last_input = first + i;
  }
  if (m.submitted != 0) m.wait(m.submitted);
}

double fft_floor::max_error(const fft_convolution::convolution_reference& reference) const {
  const impl& m = *impl_;
  double largest = 0;
  for (const set& s : m.sets) {
    if (s.last_value == 0) continue;
    if (!s.output.coherent) {
      VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, s.output.memory, 0, VK_WHOLE_SIZE};
      check(vkInvalidateMappedMemoryRanges(m.vk.device, 1, &range), "vkInvalidateMappedMemoryRanges");
    }
    largest = std::max(largest, reference.max_error(s.last_input, std::span(s.output.mapped, m.shape.bytes())));
  }
  return largest;
}

bool fft_floor::staged() const noexcept { return impl_->staged; }

}  // namespace ferrum::bench
