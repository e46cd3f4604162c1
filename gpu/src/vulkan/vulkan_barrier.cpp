// vulkan_barrier.cpp — ferrum's barrier scopes as Vulkan barriers
// (vulkan_barrier.hpp).
#include "vulkan/vulkan_barrier.hpp"

#include "vulkan/vulkan_image.hpp"

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace ferrum::gpu {
namespace {

// The one table of ferrum's bits in Vulkan's. Stages: synchronization2's
// bits, which are synchronization1's for every stage here.
constexpr std::array<VkPipelineStageFlags2, stages::count> stage_bits{VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT,
                                                                      VK_PIPELINE_STAGE_2_VERTEX_INPUT_BIT,
                                                                      VK_PIPELINE_STAGE_2_VERTEX_SHADER_BIT,
                                                                      VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT,
                                                                      VK_PIPELINE_STAGE_2_EARLY_FRAGMENT_TESTS_BIT,
                                                                      VK_PIPELINE_STAGE_2_LATE_FRAGMENT_TESTS_BIT,
                                                                      VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT,
                                                                      VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                                                                      VK_PIPELINE_STAGE_2_TRANSFER_BIT,
                                                                      VK_PIPELINE_STAGE_2_HOST_BIT};
static_assert(VK_PIPELINE_STAGE_2_TRANSFER_BIT == VK_PIPELINE_STAGE_TRANSFER_BIT &&
              VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT == VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
// Each access: its synchronization2 bit, its synchronization1 bit, and the
// ferrum stages that make it (an access is kept only beside one of them).
struct access_bits {
  VkAccessFlags2 sync2;
  VkAccessFlags sync1;
  stage_mask made_in;
};
constexpr stage_mask shader_stages = stages::vertex_shader | stages::fragment_shader | stages::compute_shader;
constexpr std::array<access_bits, accesses::count> access_table{{
    {VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT, VK_ACCESS_INDIRECT_COMMAND_READ_BIT, stages::draw_indirect},
    {VK_ACCESS_2_INDEX_READ_BIT, VK_ACCESS_INDEX_READ_BIT, stages::vertex_input},
    {VK_ACCESS_2_VERTEX_ATTRIBUTE_READ_BIT, VK_ACCESS_VERTEX_ATTRIBUTE_READ_BIT, stages::vertex_input},
    {VK_ACCESS_2_UNIFORM_READ_BIT, VK_ACCESS_UNIFORM_READ_BIT, shader_stages},
    {VK_ACCESS_2_SHADER_SAMPLED_READ_BIT, VK_ACCESS_SHADER_READ_BIT, shader_stages},
    {VK_ACCESS_2_SHADER_STORAGE_READ_BIT, VK_ACCESS_SHADER_READ_BIT, shader_stages},
    {VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT, VK_ACCESS_SHADER_WRITE_BIT, shader_stages},
    {VK_ACCESS_2_COLOR_ATTACHMENT_READ_BIT, VK_ACCESS_COLOR_ATTACHMENT_READ_BIT, stages::color_attachment_output},
    {VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT, VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, stages::color_attachment_output},
    {VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_READ_BIT, VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT,
     stages::fragment_tests},
    {VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT, VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT,
     stages::fragment_tests},
    {VK_ACCESS_2_TRANSFER_READ_BIT, VK_ACCESS_TRANSFER_READ_BIT, stages::transfer},
    {VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, stages::transfer},
    {VK_ACCESS_2_HOST_READ_BIT, VK_ACCESS_HOST_READ_BIT, stages::host},
    {VK_ACCESS_2_HOST_WRITE_BIT, VK_ACCESS_HOST_WRITE_BIT, stages::host},
}};

// The stages a family's barriers may name: a transfer-only family's
// transfer (and host, which every family has); a family without graphics,
// none of a draw's but its indirect arguments' (a dispatch's too).
constexpr stage_mask family_stages(const vk_barrier_family& family) noexcept {
  if (family.transfer_only) return stages::transfer | stages::host;
  if (!family.graphics) return stages::all & ~(stages::graphics & ~stages::draw_indirect);
  return stages::all;
}

// Up to 16 layout changes per call (a node's images), on the stack.
constexpr std::size_t batch = 16;

// The image barrier of `change`, its scopes `scope`'s widened by its layouts'.
template <class ImageBarrier>
void fill_image_barrier(ImageBarrier& b, const layout_change& change, const vk_barrier_family& family, vk_scope& from,
                        vk_scope& to) noexcept {
  const auto& img = static_cast<const vulkan_image&>(*change.image);
  from = vk_layout_scope(change.from, family.graphics, family.transfer_only, true);
  to = vk_layout_scope(change.to, family.graphics, family.transfer_only, false);
  b.oldLayout = vulkan_layout(change.from);
  b.newLayout = vulkan_layout(change.to);
  b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.image = img.handle();
  b.subresourceRange = {aspects_of(img.spec().format), change.range.base_mip, change.range.mips,
                        change.range.base_layer, change.range.layers};
}

// A global memory barrier of `before` and `after` (synchronization2).
VkMemoryBarrier2 memory_barrier2(const vk_sync_scope& before, const vk_sync_scope& after) noexcept {
  VkMemoryBarrier2 global{};
  global.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2;
  global.srcStageMask = before.stages;
  global.srcAccessMask = before.accesses;
  global.dstStageMask = after.stages;
  global.dstAccessMask = after.accesses;
  return global;
}

void record_sync2(VkCommandBuffer buffer, const vk_barrier_family& family, const vk_sync_scope& before,
                  const vk_sync_scope& after, std::span<const layout_change> changes) noexcept {
  const VkMemoryBarrier2 global = memory_barrier2(before, after);
  VkDependencyInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO;
  // None where both sides are empty: the layout changes' own scopes order them.
  if (before.stages != 0 || after.stages != 0) {
    info.memoryBarrierCount = 1;
    info.pMemoryBarriers = &global;
  }
  std::array<VkImageMemoryBarrier2, batch> images{};
  std::size_t count = 0;
  for (std::size_t i = 0; i < changes.size(); ++i) {
    VkImageMemoryBarrier2& b = images[count++];
    b = {};
    b.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2;
    vk_scope from;
    vk_scope to;
    fill_image_barrier(b, changes[i], family, from, to);
    b.srcStageMask = before.stages | from.stages;
    b.srcAccessMask = before.accesses | from.accesses;
    b.dstStageMask = after.stages | to.stages;
    b.dstAccessMask = after.accesses | to.accesses;
    // A change nothing of the queue waits for (to present_src, whose
    // semaphores order it): every stage, so that a semaphore signalled
    // after the list chains after the transition (NONE would leave it out).
    if (b.dstStageMask == 0) b.dstStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    if (count < batch && i + 1 < changes.size()) continue;
    info.imageMemoryBarrierCount = static_cast<std::uint32_t>(count);
    info.pImageMemoryBarriers = images.data();
    family.barrier2(buffer, &info);
    // The global barrier goes with the first batch.
    info.memoryBarrierCount = 0;
    count = 0;
  }
  if (changes.empty() && info.memoryBarrierCount != 0) family.barrier2(buffer, &info);
}

void record_sync1(VkCommandBuffer buffer, const vk_barrier_family& family, const vk_sync_scope& before,
                  const vk_sync_scope& after, std::span<const layout_change> changes) noexcept {
  VkMemoryBarrier global{};
  global.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  global.srcAccessMask = static_cast<VkAccessFlags>(before.accesses);
  global.dstAccessMask = static_cast<VkAccessFlags>(after.accesses);
  // A side of no stage: TOP_OF_PIPE waits for nothing, BOTTOM_OF_PIPE
  // blocks nothing (synchronization1 takes no empty mask).
  const auto source = [](VkPipelineStageFlags s) -> VkPipelineStageFlags {
    return s != 0 ? s : VkPipelineStageFlags{VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT};
  };
  const auto destination = [](VkPipelineStageFlags s) -> VkPipelineStageFlags {
    return s != 0 ? s : VkPipelineStageFlags{VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT};
  };
  const auto before_stages = static_cast<VkPipelineStageFlags>(before.stages);
  const auto after_stages = static_cast<VkPipelineStageFlags>(after.stages);
  if (changes.empty()) {
    vkCmdPipelineBarrier(buffer, source(before_stages), destination(after_stages), 0, 1, &global, 0, nullptr, 0,
                         nullptr);
    return;
  }
  // Synchronization1's stage masks are the call's, shared by its barriers.
  VkPipelineStageFlags source_stages = before_stages;
  VkPipelineStageFlags destination_stages = after_stages;
  std::array<VkImageMemoryBarrier, batch> images{};
  std::size_t count = 0;
  const std::uint32_t globals = before.stages != 0 || after.stages != 0 ? 1 : 0;
  bool first = true;
  for (std::size_t i = 0; i < changes.size(); ++i) {
    VkImageMemoryBarrier& b = images[count++];
    b = {};
    b.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
    vk_scope from;
    vk_scope to;
    fill_image_barrier(b, changes[i], family, from, to);
    source_stages |= from.stages;
    destination_stages |= to.stages;
    b.srcAccessMask = global.srcAccessMask | from.accesses;
    b.dstAccessMask = global.dstAccessMask | to.accesses;
    if (count < batch && i + 1 < changes.size()) continue;
    // A change nothing of the queue waits for: every stage, as above.
    if (destination_stages == 0) destination_stages = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    vkCmdPipelineBarrier(buffer, source(source_stages), destination(destination_stages), 0, first ? globals : 0,
                         &global, 0, nullptr, static_cast<std::uint32_t>(count), images.data());
    first = false;
    count = 0;
  }
}

}  // namespace

vk_sync_scope vk_scope_of(const sync_scope& s, const vk_barrier_family& family) noexcept {
  const stage_mask kept = s.stages & family_stages(family);
  vk_sync_scope out;
  for (stage_mask m = kept; m != 0; m &= m - 1) out.stages |= stage_bits[static_cast<std::size_t>(std::countr_zero(m))];
  // Every stage of a draw: any of them, those ferrum does not name too
  // (an engine's native draws may tessellate).
  if ((kept & stages::graphics) == stages::graphics) out.stages |= VK_PIPELINE_STAGE_2_ALL_GRAPHICS_BIT;
  for (access_mask m = s.accesses; m != 0; m &= m - 1) {
    const access_bits& a = access_table[static_cast<std::size_t>(std::countr_zero(m))];
    if ((a.made_in & kept) == 0) continue;
    out.accesses |= family.barrier2 != nullptr ? a.sync2 : VkAccessFlags2{a.sync1};
  }
  return out;
}

void record_vk_barrier(VkCommandBuffer buffer, const vk_barrier_family& family, const barrier_scope& scope,
                       std::span<const layout_change> changes) noexcept {
  const vk_sync_scope before = vk_scope_of(scope.before, family);
  const vk_sync_scope after = vk_scope_of(scope.after, family);
  if (before.stages == 0 && after.stages == 0 && changes.empty()) return;
  if (family.barrier2 != nullptr)
    record_sync2(buffer, family, before, after, changes);
  else
    record_sync1(buffer, family, before, after, changes);
}

void record_vk_event(VkCommandBuffer buffer, const vk_barrier_family& family, event_op op, VkEvent e,
                     const barrier_scope& scope) noexcept {
  const vk_sync_scope before = vk_scope_of(scope.before, family);
  const vk_sync_scope after = vk_scope_of(scope.after, family);
  if (family.events != nullptr && family.barrier2 != nullptr) {
    if (op == event_op::reset) {
      family.events->reset(buffer, e, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
      return;
    }
    const VkMemoryBarrier2 global = memory_barrier2(before, after);
    VkDependencyInfo info{};
    info.sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO;
    info.memoryBarrierCount = 1;
    info.pMemoryBarriers = &global;
    if (op == event_op::set)
      family.events->set(buffer, e, &info);
    else
      family.events->wait(buffer, 1, &e, &info);
    return;
  }
  // Synchronization1 takes no empty stage mask (as record_sync1).
  const auto source = before.stages != 0 ? static_cast<VkPipelineStageFlags>(before.stages)
                                         : VkPipelineStageFlags{VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT};
  const auto destination = after.stages != 0 ? static_cast<VkPipelineStageFlags>(after.stages)
                                             : VkPipelineStageFlags{VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT};
  switch (op) {
    case event_op::set:
      vkCmdSetEvent(buffer, e, source);
      break;
    case event_op::wait: {
      VkMemoryBarrier global{};
      global.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
      global.srcAccessMask = static_cast<VkAccessFlags>(before.accesses);
      global.dstAccessMask = static_cast<VkAccessFlags>(after.accesses);
      vkCmdWaitEvents(buffer, 1, &e, source, destination, 1, &global, 0, nullptr, 0, nullptr);
      break;
    }
    case event_op::reset:
      vkCmdResetEvent(buffer, e, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
      break;
  }
}

}  // namespace ferrum::gpu
