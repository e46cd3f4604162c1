#include "vulkan/vulkan_command_list.hpp"

#include "vulkan/vk_result.hpp"
#include "vulkan/vulkan_arena.hpp"
#include "vulkan/vulkan_barrier.hpp"
#include "vulkan/vulkan_event.hpp"
#include "vulkan/vulkan_image.hpp"
#include "vulkan/vulkan_kernel.hpp"
#include "vulkan/vulkan_timestamp_pool.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <variant>

namespace ferrum::gpu {
namespace {

// What a buffer's use (a buffer_usage bit) reaches: the pipeline stages
// that read or write it and their accesses. The barrier closing a list
// covers every stage its commands may run (below), which these all fall in:
// a compute list's dispatches read uniforms and indirect arguments too
// (vkCmdDispatchIndirect), a graphics list's draws vertices and indices.
struct stage_access {
  VkPipelineStageFlags stages;
  VkAccessFlags access;
};
constexpr stage_access buffer_use(std::uint32_t use) noexcept {
  switch (use) {
    case buffer_usage::storage:
      return {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    case buffer_usage::uniform:
      return {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_UNIFORM_READ_BIT};
    case buffer_usage::vertex:
      return {VK_PIPELINE_STAGE_VERTEX_INPUT_BIT, VK_ACCESS_VERTEX_ATTRIBUTE_READ_BIT};
    case buffer_usage::index:
      return {VK_PIPELINE_STAGE_VERTEX_INPUT_BIT, VK_ACCESS_INDEX_READ_BIT};
    case buffer_usage::indirect:
      return {VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT, VK_ACCESS_INDIRECT_COMMAND_READ_BIT};
    case buffer_usage::transfer_src:
      return {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT};
    case buffer_usage::transfer_dst:
      return {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT};
    default:
      return {0, 0};
  }
}
constexpr stage_access buffer_uses(std::uint32_t uses) noexcept {
  stage_access out{0, 0};
  for (std::uint32_t bit = 1; bit <= uses; bit <<= 1)
    if ((uses & bit) != 0) out = {out.stages | buffer_use(bit).stages, out.access | buffer_use(bit).access};
  return out;
}
// A compute-queue list's commands: dispatches (storage and uniform
// buffers, indirect arguments) and transfers.
constexpr stage_access compute_uses =
    buffer_uses(buffer_usage::storage | buffer_usage::uniform | buffer_usage::indirect | buffer_usage::transfer_src |
                buffer_usage::transfer_dst);
constexpr VkPipelineStageFlags compute_stages = compute_uses.stages;
constexpr VkAccessFlags compute_writes = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
constexpr VkAccessFlags compute_accesses = compute_uses.access;
// A barrier's stage masks may only name stages the queue family supports
// (vkCmdPipelineBarrier valid usage): a transfer-only family has no compute
// shader stage, and its commands make transfer accesses only.
constexpr stage_access transfer_uses = buffer_uses(buffer_usage::transfer_src | buffer_usage::transfer_dst);
constexpr VkPipelineStageFlags transfer_stages = transfer_uses.stages;
constexpr VkAccessFlags transfer_writes = VK_ACCESS_TRANSFER_WRITE_BIT;
constexpr VkAccessFlags transfer_accesses = transfer_uses.access;
// A graphics list's draws (list_stages::graphics): every stage of the
// graphics pipeline, what it reads and writes (attachments, vertices,
// indices, indirect arguments, uniforms, shaders').
// ALL_GRAPHICS covers the draws' own stages; they are named besides, so
// that the table's stages are each in a mask as such.
constexpr VkPipelineStageFlags graphics_stages =
    VK_PIPELINE_STAGE_ALL_GRAPHICS_BIT |
    buffer_uses(buffer_usage::vertex | buffer_usage::index | buffer_usage::indirect).stages;
constexpr VkAccessFlags graphics_writes =
    VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT | VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT;
constexpr VkAccessFlags graphics_accesses = graphics_writes | buffer_uses(buffer_usage::all).access |
                                            VK_ACCESS_INPUT_ATTACHMENT_READ_BIT | VK_ACCESS_COLOR_ATTACHMENT_READ_BIT |
                                            VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT;
// Every buffer use a list may make is in its barriers' scopes.
static_assert((buffer_uses(buffer_usage::all).stages & ~(compute_stages | graphics_stages)) == 0);
static_assert((buffer_uses(buffer_usage::all).access & ~(compute_accesses | graphics_accesses)) == 0);

// A global memory barrier: arenas are whole buffers shared by many commands,
// and a global barrier costs drivers no more than a buffer barrier.
void memory_barrier(VkCommandBuffer buffer, VkPipelineStageFlags source_stages, VkAccessFlags source_access,
                    VkPipelineStageFlags destination_stages, VkAccessFlags destination_access) noexcept {
  VkMemoryBarrier barrier{};
  barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  barrier.srcAccessMask = source_access;
  barrier.dstAccessMask = destination_access;
  vkCmdPipelineBarrier(buffer, source_stages, destination_stages, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}

const vulkan_arena& arena_of(arena_range range) noexcept {
  // The base class checked that the arena belongs to this device, which makes
  // only vulkan_arenas.
  return static_cast<const vulkan_arena&>(*range.arena);
}

}  // namespace

VkPipelineStageFlags vulkan_command_list::device_stages() const noexcept {
  if (context_.graphics_stages) return compute_stages | graphics_stages;
  return context_.transfer_only ? transfer_stages : compute_stages;
}

VkAccessFlags vulkan_command_list::device_accesses() const noexcept {
  if (context_.graphics_stages) return compute_accesses | graphics_accesses;
  return context_.transfer_only ? transfer_accesses : compute_accesses;
}

VkAccessFlags vulkan_command_list::device_writes() const noexcept {
  if (context_.graphics_stages) return compute_writes | graphics_writes;
  return context_.transfer_only ? transfer_writes : compute_writes;
}

result<std::unique_ptr<command_list>> vulkan_command_list::create(const gpu::device& owner, queue_kind kind,
                                                                  list_stages stages, const context& c) {
  VkCommandPoolCreateInfo pool_info{};
  pool_info.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  // TRANSIENT: the buffer is re-recorded for every submission (reset with the
  // pool), which lets the driver pick its allocation strategy.
  pool_info.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  pool_info.queueFamilyIndex = c.queue_family;
  VkCommandPool pool = VK_NULL_HANDLE;
  if (VkResult r = vkCreateCommandPool(c.device, &pool_info, nullptr, &pool); r != VK_SUCCESS)
    return make_vk_error(r, "command list: vkCreateCommandPool");

  VkCommandBufferAllocateInfo buffer_info{};
  buffer_info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  buffer_info.commandPool = pool;
  buffer_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  buffer_info.commandBufferCount = 1;
  VkCommandBuffer buffer = VK_NULL_HANDLE;
  if (VkResult r = vkAllocateCommandBuffers(c.device, &buffer_info, &buffer); r != VK_SUCCESS) {
    vkDestroyCommandPool(c.device, pool, nullptr);
    return make_vk_error(r, "command list: vkAllocateCommandBuffers");
  }
  return std::unique_ptr<command_list>(new vulkan_command_list(owner, kind, stages, c, pool, buffer));
}

vulkan_command_list::~vulkan_command_list() {
  // Destroying a pool frees its command buffers.
  vkDestroyCommandPool(context_.device, pool_, nullptr);
}

result<void> vulkan_command_list::do_begin() {
  // Resetting a pool requires that none of its buffers is pending execution:
  // the base class refuses begin() until the last submission's value is
  // reached.
  if (VkResult r = vkResetCommandPool(context_.device, pool_, 0); r != VK_SUCCESS)
    return make_vk_error(r, "command list: vkResetCommandPool");
  // The sets of the last recording's image operands: no submission uses
  // them any more either.
  operand_sets_.reset();
  VkCommandBufferBeginInfo info{};
  info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  // No ONE_TIME_SUBMIT: a recorded list may be submitted again once its last
  // submission completed (replay), and never while it is pending, so it
  // needs no SIMULTANEOUS_USE either.
  info.flags = 0;
  if (VkResult r = vkBeginCommandBuffer(buffer_, &info); r != VK_SUCCESS)
    return make_vk_error(r, "command list: vkBeginCommandBuffer");
  return {};
}

void vulkan_command_list::do_barrier(const barrier_scope& scope, std::span<const layout_change> changes) noexcept {
  // A pipeline barrier's first scope covers every command earlier in
  // submission order, including earlier lists and submissions on the queue.
  record_vk_barrier(buffer_, family(), scope, changes);
}

void vulkan_command_list::do_event(event_op op, const event& e, const barrier_scope& scope) noexcept {
  // An event's set and its waits may be in different lists of one queue.
  record_vk_event(buffer_, family(), op, static_cast<const vulkan_event&>(e).handle(), scope);
}

result<void> vulkan_command_list::do_image_copy(const image& img, image_layout layout, arena_range bytes,
                                                image_copy direction) {
  const image_spec& spec = img.spec();
  VkBufferImageCopy region{};
  region.bufferOffset = bytes.offset;
  // One aspect (a depth-stencil image's copies are refused before).
  region.imageSubresource = {vk_view_aspect(spec.format), 0, 0, spec.layers};
  region.imageExtent = {spec.width, spec.height, 1};
  const VkImage handle = static_cast<const vulkan_image&>(img).handle();
  if (direction == image_copy::into_image)
    vkCmdCopyBufferToImage(buffer_, arena_of(bytes).buffer(), handle, vulkan_layout(layout), 1, &region);
  else
    vkCmdCopyImageToBuffer(buffer_, handle, vulkan_layout(layout), arena_of(bytes).buffer(), 1, &region);
  return {};
}

result<void> vulkan_command_list::do_clear(const image& img, image_layout layout) {
  const image_spec& spec = img.spec();
  const VkImageSubresourceRange range{aspects_of(spec.format), 0, spec.mips, 0, spec.layers};
  const VkImage handle = static_cast<const vulkan_image&>(img).handle();
  if (is_depth(spec.format)) {
    const VkClearDepthStencilValue zero{0.0f, 0};
    vkCmdClearDepthStencilImage(buffer_, handle, vulkan_layout(layout), &zero, 1, &range);
  } else {
    const VkClearColorValue zero{};
    vkCmdClearColorImage(buffer_, handle, vulkan_layout(layout), &zero, 1, &range);
  }
  return {};
}

result<VkDescriptorSet> vulkan_command_list::operand_set(const kernel_operand& op, kernel_operand_kind kind,
                                                         std::span<std::uint32_t, 2> words) {
  if (const auto* img = std::get_if<image_operand>(&op)) {
    // Through a view: its level's extent (the base class checked it is one
    // level of one layer of the image).
    const std::uint32_t mip = img->view != nullptr ? img->view->range().base_mip : 0;
    words[0] = std::max(1u, img->image->spec().width >> mip);
    words[1] = std::max(1u, img->image->spec().height >> mip);
    const std::uint64_t view = img->view != nullptr ? img->view->native_handle() : img->image->native_view();
    return operand_sets_.bind(reinterpret_cast<VkImageView>(static_cast<std::uintptr_t>(view)), kind, img->layout);
  }
  // Arenas are at most maxStorageBufferRange (a uint32_t) bytes, so byte
  // offsets and sizes fit the 32-bit push constants.
  const auto& range = std::get<arena_range>(op);
  words[1] = static_cast<std::uint32_t>(range.size);
  const VkDeviceSize alignment = context_.exact_operands_alignment;
  if (alignment == 0 || range.size == 0) {
    words[0] = static_cast<std::uint32_t>(range.offset);
    return arena_of(range).descriptor_set();
  }
  // The kernel reads from the descriptor's start, `words[0]` bytes in.
  const VkDeviceSize start = range.offset - range.offset % alignment;
  words[0] = static_cast<std::uint32_t>(range.offset - start);
  return operand_sets_.bind(arena_of(range).buffer(), start, range.offset + range.size - start);
}

result<void> vulkan_command_list::do_dispatch(const kernel& k, const kernel_operand& primary,
                                              const kernel_operand& secondary, std::span<const std::uint32_t> push) {
  const auto& pipeline = static_cast<const vulkan_kernel&>(k);
  std::array<std::uint32_t, range_push_words + max_kernel_push_words> words{};
  auto first = operand_set(primary, k.primary(), std::span(words).subspan<0, 2>());
  if (!first) return first.error();
  // A buffer kernel given no secondary binds the primary's arena again
  // (its range words stay zero).
  const auto* none = std::get_if<arena_range>(&secondary);
  auto second = none != nullptr && none->arena == nullptr
                    ? first
                    : operand_set(secondary, k.secondary(), std::span(words).subspan<2, 2>());
  if (!second) return second.error();

  vkCmdBindPipeline(buffer_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline());
  const std::array<VkDescriptorSet, 2> sets{*first, *second};
  vkCmdBindDescriptorSets(buffer_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout(), 0,
                          static_cast<std::uint32_t>(sets.size()), sets.data(), 0, nullptr);
  std::copy(push.begin(), push.end(), words.begin() + range_push_words);
  // The base class passes exactly the kernel's words, so every push constant
  // the shader reads has been set (vkCmdDispatch valid usage without
  // maintenance4).
  const auto push_bytes = static_cast<std::uint32_t>((range_push_words + push.size()) * sizeof(std::uint32_t));
  vkCmdPushConstants(buffer_, pipeline.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, words.data());

  if (std::holds_alternative<image_operand>(primary)) {
    // One invocation per texel: an extent of at most max_image_extent
    // (16384) makes at most 16384 workgroups a side, within the 65535 every
    // device allows.
    const auto groups = [](std::uint32_t texels, std::uint32_t local) { return (texels + local - 1) / local; };
    vkCmdDispatch(buffer_, groups(words[0], k.local_size_x()), groups(words[1], k.local_size_y()), 1);
    return {};
  }
  // ceil(words / local_size_x) workgroups, capped at the device's
  // maxComputeWorkGroupCount[0] (kernels loop grid-stride over the rest).
  const std::size_t word_count = words[1] / 4;
  const std::size_t local = k.local_size_x();
  std::size_t groups = (word_count + local - 1) / local;
  groups = std::clamp<std::size_t>(groups, 1, context_.max_workgroups);
  vkCmdDispatch(buffer_, static_cast<std::uint32_t>(groups), 1, 1);
  return {};
}

result<void> vulkan_command_list::do_fill(arena_range target, std::uint32_t value) {
  // Offset and size are multiples of 4 (checked by the base class), as
  // vkCmdFillBuffer requires; the size is not zero.
  vkCmdFillBuffer(buffer_, arena_of(target).buffer(), target.offset, target.size, value);
  return {};
}

void vulkan_command_list::record_zero_fill(const vulkan_arena& a) noexcept {
  // The buffer's size is a multiple of 4 (vulkan_arena), so VK_WHOLE_SIZE
  // leaves no byte out.
  vkCmdFillBuffer(buffer_, a.buffer(), 0, VK_WHOLE_SIZE, 0);
}

result<void> vulkan_command_list::do_copy(arena_range source, arena_range destination) {
  VkBufferCopy region{};
  region.srcOffset = source.offset;
  region.dstOffset = destination.offset;
  region.size = source.size;
  // Copies within one buffer are valid when the regions do not overlap, which
  // the base class checked.
  vkCmdCopyBuffer(buffer_, arena_of(source).buffer(), arena_of(destination).buffer(), 1, &region);
  return {};
}

result<void> vulkan_command_list::do_stage(const arena& a) {
  const auto& staged = static_cast<const vulkan_arena&>(a);
  VkBufferCopy region{0, 0, a.size()};
  if (a.cls() == memory_class::upload)
    vkCmdCopyBuffer(buffer_, staged.staging_buffer(), staged.buffer(), 1, &region);
  else
    vkCmdCopyBuffer(buffer_, staged.buffer(), staged.staging_buffer(), 1, &region);
  return {};
}

result<void> vulkan_command_list::do_host(host_function function) {
  (void)function;
  return make_error(errc::unsupported_command, "the Vulkan device runs no host functions");
}

result<void> vulkan_command_list::do_timestamp(const timestamp_pool& pool, std::uint32_t slot) {
  // The base class checked that the pool is this device's: a
  // vulkan_timestamp_pool.
  // vkCmdResetQueryPool and vkCmdCopyQueryPoolResults run on graphics or
  // compute queues only, and a family with timestampValidBits 0 writes none.
  if (context_.no_timestamps != nullptr)
    return make_error(errc::timestamps_unsupported,
                      std::string("timestamp on this list's queue: ") + context_.no_timestamps);
  const auto& timestamps = static_cast<const vulkan_timestamp_pool&>(pool);
  const VkQueryPool queries = timestamps.handle();
  // A query must be reset before each write; resetting it here keeps the
  // recording valid when it is submitted again (replay). A reset and later
  // query commands on the same query execute in submission order.
  vkCmdResetQueryPool(buffer_, queries, slot, 1);
  // BOTTOM_OF_PIPE: written once every earlier command has completed, so a
  // node's first timestamp is when the work before it ended and its last when
  // its own ended.
  vkCmdWriteTimestamp(buffer_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, slot);
  // Into the pool's buffer on the queue (WAIT: once the write is available),
  // with its availability word; a transfer write, made visible to the host
  // by the barrier that closes the list.
  vkCmdCopyQueryPoolResults(buffer_, queries, slot, 1, arena_of({&timestamps.results(), 0, 0}).buffer(),
                            std::size_t{slot} * vulkan_timestamp_pool::slot_bytes, vulkan_timestamp_pool::slot_bytes,
                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
  return {};
}

result<native_commands> vulkan_command_list::do_native() {
  // The handle as the integer it is (a dispatchable handle is a pointer).
  return native_commands{reinterpret_cast<std::uint64_t>(buffer_)};
}

result<void> vulkan_command_list::do_end() {
  // A semaphore signal does not make device writes visible to the host; this
  // barrier does, so waiting for the timeline value is enough to read them.
  // HOST is a stage every queue family supports.
  memory_barrier(buffer_, device_stages(), device_writes(), VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  if (VkResult r = vkEndCommandBuffer(buffer_); r != VK_SUCCESS)
    return make_vk_error(r, "command list: vkEndCommandBuffer");
  return {};
}

}  // namespace ferrum::gpu
