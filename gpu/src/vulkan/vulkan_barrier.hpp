// vulkan_barrier.hpp — a command list's barriers on Vulkan: ferrum's stages
// and accesses (ferrum/sync_scope.hpp) as Vulkan's, clipped to what the
// queue family supports, recorded with synchronization2
// (vkCmdPipelineBarrier2) where the device has it enabled, else with
// vkCmdPipelineBarrier and the same masks in its coarser access bits.
//
// Buffers get one global memory barrier, not buffer barriers: arenas are
// whole buffers shared by many nodes, and a global barrier costs drivers no
// more. Images get an image barrier per layout change, over exactly its
// subresources, whose scopes are the barrier's widened by the stages and
// accesses of the layouts it leaves and enters (vk_layout_scope).
//
//   const vk_barrier_family family{graphics, transfer_only, barrier2};
//   record_vk_barrier(command_buffer, family, scope, changes);
#pragma once

#include "ferrum/gpu/command_list.hpp"
#include "ferrum/sync_scope.hpp"

#include <vulkan/vulkan_core.h>

#include <span>

namespace ferrum::gpu {

// synchronization2's event commands, looked up on a device that enabled it.
struct vk_event_functions {
  PFN_vkCmdSetEvent2 set = nullptr;
  PFN_vkCmdWaitEvents2 wait = nullptr;
  PFN_vkCmdResetEvent2 reset = nullptr;
};

// What a barrier may name: the queue family's stages, and how it is
// recorded.
struct vk_barrier_family {
  // The family has graphics: graphics stages are kept.
  bool graphics = false;
  // The family has neither graphics nor compute: transfer (and host) only.
  bool transfer_only = false;
  // vkCmdPipelineBarrier2 (synchronization2 enabled); null: vkCmdPipelineBarrier.
  PFN_vkCmdPipelineBarrier2 barrier2 = nullptr;
  // The event commands of synchronization2, with barrier2 (null:
  // vkCmdSetEvent, vkCmdWaitEvents and vkCmdResetEvent).
  const vk_event_functions* events = nullptr;
};

// One side of a barrier in Vulkan's bits (synchronization2's, which are
// synchronization1's for the stages and accesses both have).
struct vk_sync_scope {
  VkPipelineStageFlags2 stages = 0;
  VkAccessFlags2 accesses = 0;
};

// `s` clipped to `family`'s stages (and accesses to those its kept stages
// make), in Vulkan's bits: synchronization2's, or synchronization1's when
// `family.barrier2` is null (sampled and storage reads as SHADER_READ,
// storage writes as SHADER_WRITE).
[[nodiscard]] vk_sync_scope vk_scope_of(const sync_scope& s, const vk_barrier_family& family) noexcept;

// Records a barrier of `scope` with `changes` into `buffer`. A side clipped
// to no stage waits for, or blocks, nothing (NONE; TOP_OF_PIPE or
// BOTTOM_OF_PIPE for synchronization1), but for a layout change whose
// second scope is empty (to present_src), which blocks ALL_COMMANDS so that
// a semaphore signalled after it chains after the transition; nothing is
// recorded when neither side has a stage and there is no change.
void record_vk_barrier(VkCommandBuffer buffer, const vk_barrier_family& family, const barrier_scope& scope,
                       std::span<const layout_change> changes) noexcept;

// Records an event command (command_list::set_event, wait_event,
// reset_event) of `scope` on `e`: with synchronization2
// (family.events), vkCmdSetEvent2 and vkCmdWaitEvents2 with one global
// memory barrier of the clipped scope (the same dependency for the set and
// its waits), vkCmdResetEvent2 after every stage; else vkCmdSetEvent of the
// source stages, vkCmdWaitEvents with both stage masks and the global
// barrier in synchronization1's access bits, vkCmdResetEvent after every
// stage (an empty side as record_vk_barrier's: TOP_OF_PIPE,
// BOTTOM_OF_PIPE).
void record_vk_event(VkCommandBuffer buffer, const vk_barrier_family& family, event_op op, VkEvent e,
                     const barrier_scope& scope) noexcept;

}  // namespace ferrum::gpu
