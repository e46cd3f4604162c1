// vulkan_command_list.hpp — a command list on the Vulkan device: one primary
// command buffer in a command pool of its own.
//
// A list belongs to the queue family of the queue it was made for (a command
// buffer may only be submitted to queues of its pool's family).
//
// A pool per list because command pools are externally synchronized: the
// buffers of one pool may not be recorded on two threads at once, and lists
// are recorded concurrently, each from any thread. begin() resets the whole
// pool (cheaper than resetting single buffers, and it lets the driver reuse
// the pool's memory).
//
// Memory dependencies: a barrier (command_list::do_barrier) is one of
// exactly its scope, clipped to the family's stages (vulkan_barrier.hpp): a
// global memory barrier, with an image barrier per layout change in it (its
// scopes widened by the stages and accesses of the layouts it leaves and
// enters), recorded with synchronization2 where the device enabled it; one
// making every write of the list's stages available to the host closes the
// recording, so the host reads them once the submission's timeline value is
// reached.
//
//   auto list = vulkan_command_list::create(owner, context);
//   (*list)->begin(); (*list)->fill(range, 0u); (*list)->end();
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/command_list.hpp"

#include "vulkan/vulkan_barrier.hpp"
#include "vulkan/vulkan_kernel_layouts.hpp"

#include <vulkan/vulkan_core.h>

#include <cstdint>
#include <memory>

namespace ferrum::gpu {

class vulkan_arena;

class vulkan_command_list final : public command_list {
 public:
  // What a list records against: the owner's objects.
  struct context {
    VkDevice device = VK_NULL_HANDLE;
    std::uint32_t queue_family = 0;
    // The family has neither graphics nor compute (a transfer queue's own):
    // its barriers name transfer stages only.
    bool transfer_only = false;
    // The family has graphics: image barriers may name graphics stages.
    bool graphics = false;
    // A list of list_stages::graphics: every barrier covers the graphics
    // pipeline's stages too (native commands draw).
    bool graphics_stages = false;
    // vkCmdPipelineBarrier2, where the device enabled synchronization2
    // (null: barriers are recorded with vkCmdPipelineBarrier).
    PFN_vkCmdPipelineBarrier2 barrier2 = nullptr;
    // Its event commands (null: synchronization1's).
    const vk_event_functions* events = nullptr;
    // Why the family cannot record timestamps (nullptr: it can).
    const char* no_timestamps = nullptr;
    // The device's kernel layouts (image operands' set layouts).
    const vulkan_kernel_layouts* layouts = nullptr;
    std::uint32_t max_workgroups = 1;
    // Where the validation layers check hazards between submissions
    // (host_wait_fences.hpp): each buffer operand is bound as exactly its
    // range (from an offset aligned down to this), rather than as its
    // arena's whole buffer, so that the layers see what each dispatch
    // reaches. 0: the arena's set, as everywhere else.
    VkDeviceSize exact_operands_alignment = 0;
  };

  // Errors: out_of_device_memory, out_of_host_memory, vulkan_error.
  [[nodiscard]] static result<std::unique_ptr<command_list>> create(const gpu::device& owner, queue_kind kind,
                                                                    list_stages stages, const context& c);

  // Destroys the pool and its buffer; the GPU must be done with them.
  ~vulkan_command_list() override;

  [[nodiscard]] VkCommandBuffer command_buffer() const noexcept { return buffer_; }

  // Between begin() and end(): zeroes the whole of `a`'s buffer
  // (vkCmdFillBuffer of VK_WHOLE_SIZE), past the checks and counts of the
  // base class, which fill() could not pass for an arena whose size is not
  // a multiple of 4. The device's own fill of a new arena
  // (vulkan_device::zero_on_gpu), which no command reached before.
  void record_zero_fill(const vulkan_arena& a) noexcept;

 protected:
  result<void> do_begin() override;
  result<void> do_dispatch(const kernel& k, const kernel_operand& primary, const kernel_operand& secondary,
                           std::span<const std::uint32_t> push) override;
  result<void> do_fill(arena_range target, std::uint32_t value) override;
  result<void> do_copy(arena_range source, arena_range destination) override;
  result<void> do_stage(const arena& a) override;
  result<void> do_host(host_function function) override;
  result<void> do_timestamp(const timestamp_pool& pool, std::uint32_t slot) override;
  result<void> do_end() override;
  result<native_commands> do_native() override;
  result<void> do_image_copy(const image& img, image_layout layout, arena_range bytes, image_copy direction) override;
  result<void> do_clear(const image& img, image_layout layout) override;
  void do_barrier(const barrier_scope& scope, std::span<const layout_change> changes) noexcept override;
  void do_event(event_op op, const event& e, const barrier_scope& scope) noexcept override;

 private:
  vulkan_command_list(const gpu::device& owner, queue_kind kind, list_stages stages, const context& c,
                      VkCommandPool pool, VkCommandBuffer buffer) noexcept
      : command_list(owner, kind, stages),
        context_(c),
        pool_(pool),
        buffer_(buffer),
        operand_sets_(c.device, *c.layouts) {}

  // The set binding operand `op` of `kind`, and its two range push words.
  [[nodiscard]] result<VkDescriptorSet> operand_set(const kernel_operand& op, kernel_operand_kind kind,
                                                    std::span<std::uint32_t, 2> words);

  // What its barriers and events may name, and how they are recorded.
  [[nodiscard]] vk_barrier_family family() const noexcept {
    return {context_.graphics, context_.transfer_only, context_.barrier2, context_.events};
  }
  // The stages and accesses of the family's device work.
  [[nodiscard]] VkPipelineStageFlags device_stages() const noexcept;
  [[nodiscard]] VkAccessFlags device_accesses() const noexcept;
  [[nodiscard]] VkAccessFlags device_writes() const noexcept;

  context context_;
  VkCommandPool pool_;
  VkCommandBuffer buffer_;
  vulkan_operand_sets operand_sets_;
};

}  // namespace ferrum::gpu
