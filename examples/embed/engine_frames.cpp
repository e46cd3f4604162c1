// examples/embed/engine_frames.cpp — the engine's work before and after each
// frame's wave, in plain Vulkan (engine_frames.hpp).
#include "engine_frames.hpp"

#include <array>
#include <string>

namespace {

ferrum::error frame_vk_failed(VkResult r, const char* call) {
  return ferrum::make_error(ferrum::gpu::errc_from_vk(r),
                            std::string("the engine's ") + call + " returned " + std::to_string(static_cast<int>(r)));
}

ferrum::result<VkSemaphore> timeline_semaphore(VkDevice device) {
  VkSemaphoreTypeCreateInfo type{};
  type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type.initialValue = 0;
  VkSemaphoreCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  info.pNext = &type;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  if (VkResult r = vkCreateSemaphore(device, &info, nullptr, &semaphore); r != VK_SUCCESS)
    return frame_vk_failed(r, "vkCreateSemaphore");
  return semaphore;
}

// Resets `buffer` (its previous submission is done) and begins a recording
// submitted once.
ferrum::result<void> begin_once(VkCommandBuffer buffer) {
  if (VkResult r = vkResetCommandBuffer(buffer, 0); r != VK_SUCCESS) return frame_vk_failed(r, "vkResetCommandBuffer");
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  if (VkResult r = vkBeginCommandBuffer(buffer, &begin); r != VK_SUCCESS)
    return frame_vk_failed(r, "vkBeginCommandBuffer");
  return {};
}

}  // namespace

ferrum::result<std::unique_ptr<engine_frames>> engine_frames::create(engine_vulkan& vk, VkBuffer inbox, VkBuffer outbox,
                                                                     std::size_t in_bytes, std::size_t out_bytes,
                                                                     std::size_t frames_in_flight) {
  std::unique_ptr<engine_frames> e(new engine_frames(vk));
  const VkDevice device = vk.device();
  e->inbox_ = inbox;
  e->outbox_ = outbox;
  e->in_bytes_ = in_bytes;
  e->out_bytes_ = out_bytes;

  VkCommandPoolCreateInfo pool_info{};
  pool_info.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool_info.queueFamilyIndex = vk.queue_family();
  if (VkResult r = vkCreateCommandPool(device, &pool_info, nullptr, &e->pool_); r != VK_SUCCESS) {
    e->pool_ = VK_NULL_HANDLE;
    return frame_vk_failed(r, "vkCreateCommandPool");
  }
  VkCommandBufferAllocateInfo buffers_info{};
  buffers_info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  buffers_info.commandPool = e->pool_;
  buffers_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  buffers_info.commandBufferCount = static_cast<std::uint32_t>(frames_in_flight);
  for (std::vector<VkCommandBuffer>* buffers : {&e->produce_, &e->read_back_}) {
    buffers->resize(frames_in_flight);
    if (VkResult r = vkAllocateCommandBuffers(device, &buffers_info, buffers->data()); r != VK_SUCCESS) {
      buffers->clear();
      return frame_vk_failed(r, "vkAllocateCommandBuffers");
    }
  }

  auto produced = timeline_semaphore(device);
  if (!produced) return produced.error();
  e->produced_ = *produced;
  for (std::size_t i = 0; i < frames_in_flight; ++i) {
    auto done = timeline_semaphore(device);
    if (!done) return done.error();
    e->wave_done_.push_back(*done);
  }
  e->wave_signalled_.assign(frames_in_flight, 0);
  auto copied = timeline_semaphore(device);
  if (!copied) return copied.error();
  e->copied_ = *copied;

  // The readback buffer: host-visible and coherent, so the engine reads what
  // its copy wrote once the copy's signal was waited for.
  VkBufferCreateInfo buffer_info{};
  buffer_info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  buffer_info.size = frames_in_flight * out_bytes;
  buffer_info.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  buffer_info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  if (VkResult r = vkCreateBuffer(device, &buffer_info, nullptr, &e->readback_); r != VK_SUCCESS) {
    e->readback_ = VK_NULL_HANDLE;
    return frame_vk_failed(r, "vkCreateBuffer");
  }
  VkMemoryRequirements requirements{};
  vkGetBufferMemoryRequirements(device, e->readback_, &requirements);
  VkPhysicalDeviceMemoryProperties memory{};
  vkGetPhysicalDeviceMemoryProperties(vk.physical_device(), &memory);
  constexpr VkMemoryPropertyFlags wanted = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  std::uint32_t type = memory.memoryTypeCount;
  for (std::uint32_t i = 0; i < memory.memoryTypeCount && type == memory.memoryTypeCount; ++i)
    if ((requirements.memoryTypeBits & (1u << i)) != 0 && (memory.memoryTypes[i].propertyFlags & wanted) == wanted)
      type = i;
  if (type == memory.memoryTypeCount)
    return ferrum::make_error(ferrum::errc::vulkan_feature_missing, "the engine found no host-coherent memory");
  VkMemoryAllocateInfo allocate{};
  allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  allocate.allocationSize = requirements.size;
  allocate.memoryTypeIndex = type;
  if (VkResult r = vkAllocateMemory(device, &allocate, nullptr, &e->readback_memory_); r != VK_SUCCESS) {
    e->readback_memory_ = VK_NULL_HANDLE;
    return frame_vk_failed(r, "vkAllocateMemory");
  }
  if (VkResult r = vkBindBufferMemory(device, e->readback_, e->readback_memory_, 0); r != VK_SUCCESS)
    return frame_vk_failed(r, "vkBindBufferMemory");
  void* mapped = nullptr;
  if (VkResult r = vkMapMemory(device, e->readback_memory_, 0, VK_WHOLE_SIZE, 0, &mapped); r != VK_SUCCESS)
    return frame_vk_failed(r, "vkMapMemory");
  e->readback_bytes_ = static_cast<const std::byte*>(mapped);
  return e;
}

engine_frames::~engine_frames() {
  const VkDevice device = vk_.device();
  // Whatever was submitted is done before its objects go.
  (void)vk_.wait_idle();
  if (readback_memory_ != VK_NULL_HANDLE) vkFreeMemory(device, readback_memory_, nullptr);
  if (readback_ != VK_NULL_HANDLE) vkDestroyBuffer(device, readback_, nullptr);
  if (copied_ != VK_NULL_HANDLE) vkDestroySemaphore(device, copied_, nullptr);
  for (VkSemaphore s : wave_done_) vkDestroySemaphore(device, s, nullptr);
  if (produced_ != VK_NULL_HANDLE) vkDestroySemaphore(device, produced_, nullptr);
  // Destroying the pool frees its command buffers.
  if (pool_ != VK_NULL_HANDLE) vkDestroyCommandPool(device, pool_, nullptr);
}

ferrum::result<void> engine_frames::submit(VkCommandBuffer buffer, std::span<const VkSemaphore> waits,
                                           std::span<const std::uint64_t> wait_values, VkSemaphore signal,
                                           std::uint64_t signal_value) {
  const std::array<VkPipelineStageFlags, 2> stages{VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT};
  VkTimelineSemaphoreSubmitInfo values{};
  values.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  values.waitSemaphoreValueCount = static_cast<std::uint32_t>(wait_values.size());
  values.pWaitSemaphoreValues = wait_values.data();
  values.signalSemaphoreValueCount = 1;
  values.pSignalSemaphoreValues = &signal_value;
  VkSubmitInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  info.pNext = &values;
  info.waitSemaphoreCount = static_cast<std::uint32_t>(waits.size());
  info.pWaitSemaphores = waits.data();
  info.pWaitDstStageMask = stages.data();
  info.commandBufferCount = 1;
  info.pCommandBuffers = &buffer;
  info.signalSemaphoreCount = 1;
  info.pSignalSemaphores = &signal;
  if (VkResult r = vk_.submit(info); r != VK_SUCCESS) return frame_vk_failed(r, "vkQueueSubmit");
  return {};
}

ferrum::result<void> engine_frames::produce(std::size_t ring_index, std::uint64_t frame,
                                            std::span<const std::uint32_t> data) {
  VkCommandBuffer buffer = produce_[ring_index];
  // The buffer's previous submission is done: the slot's previous wave
  // waited on it and has completed.
  if (auto begun = begin_once(buffer); !begun) return begun.error();
  // The engine's own data for this frame, recorded into the command buffer
  // (at most 65536 bytes, as vkCmdUpdateBuffer allows).
  vkCmdUpdateBuffer(buffer, inbox_, ring_index * in_bytes_, data.size_bytes(), data.data());
  if (VkResult r = vkEndCommandBuffer(buffer); r != VK_SUCCESS) return frame_vk_failed(r, "vkEndCommandBuffer");
  // The slot's previous wave read this inbox region: the write waits for
  // it on the GPU (its signal is submitted: it completed).
  const std::uint64_t previous = wave_signalled_[ring_index];
  const std::array waits{wave_done_[ring_index]};
  const std::array values{previous};
  return submit(buffer, previous == 0 ? std::span<const VkSemaphore>{} : std::span<const VkSemaphore>(waits),
                previous == 0 ? std::span<const std::uint64_t>{} : std::span<const std::uint64_t>(values), produced_,
                frame);
}

ferrum::result<bool> engine_frames::read_back(std::size_t ring_index, std::uint64_t frame) {
  wave_signalled_[ring_index] = frame;
  VkCommandBuffer buffer = read_back_[ring_index];
  // Its previous submission is done: the host waited for it below.
  if (auto begun = begin_once(buffer); !begun) return begun.error();
  VkBufferCopy region{};
  region.srcOffset = ring_index * out_bytes_;
  region.dstOffset = ring_index * out_bytes_;
  region.size = out_bytes_;
  vkCmdCopyBuffer(buffer, outbox_, readback_, 1, &region);
  // The host reads the readback buffer once the copy's signal is reached.
  VkMemoryBarrier to_host{};
  to_host.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(buffer, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, nullptr,
                       0, nullptr);
  if (VkResult r = vkEndCommandBuffer(buffer); r != VK_SUCCESS) return frame_vk_failed(r, "vkEndCommandBuffer");
  // Waits on the wave's signal, and on the engine's previous copy (which
  // wrote the readback buffer before), both on the GPU.
  const std::array waits{wave_done_[ring_index], copied_};
  const std::array values{frame, copies_};
  const std::size_t count = copies_ == 0 ? 1 : 2;
  if (auto r = submit(buffer, std::span(waits).first(count), std::span(values).first(count), copied_, copies_ + 1); !r)
    return r.error();
  ++copies_;
  VkSemaphoreWaitInfo wait{};
  wait.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
  wait.semaphoreCount = 1;
  wait.pSemaphores = &copied_;
  wait.pValues = &copies_;
  const VkResult r = vkWaitSemaphores(vk_.device(), &wait, 10'000'000'000ull);
  if (r == VK_TIMEOUT) return false;
  if (r != VK_SUCCESS) return frame_vk_failed(r, "vkWaitSemaphores");
  return true;
}

std::span<const std::byte> engine_frames::readback(std::size_t ring_index) const noexcept {
  return {readback_bytes_ + ring_index * out_bytes_, out_bytes_};
}
