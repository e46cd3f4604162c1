// vulkan_device.hpp (private) — the Vulkan device: the objects it owns or
// borrows, its queues with their timelines, and its fence waiter. The public entry points are
// create_vulkan_device and adopt_vulkan_device (ferrum/gpu/vulkan_device.hpp).
//
//   auto objects = std::make_unique<vulkan_device_objects>();
//   ... fill objects ...
//   auto dev = vulkan_device::start(std::move(objects));
#pragma once

#include "ferrum/gpu/device.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include "vulkan/fence_waiter.hpp"
#include "vulkan/vulkan_arena.hpp"
#include "vulkan/vulkan_barrier.hpp"
#include "vulkan/vulkan_descriptor_pool.hpp"
#include "vulkan/vulkan_instance.hpp"
#include "vulkan/vulkan_kernel_layouts.hpp"
#include "vulkan/vulkan_physical_device.hpp"
#include "vulkan/vulkan_queue.hpp"
#include "vulkan/vulkan_timestamp_clock.hpp"

#include <vulkan/vulkan_core.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace ferrum::gpu {

// The Vulkan objects behind a device. Whatever is set is destroyed in reverse
// order of creation, except what an engine lent (its instance, device and
// queue in adopt mode).
struct vulkan_device_objects {
  vulkan_device_objects() = default;
  vulkan_device_objects(const vulkan_device_objects&) = delete;
  vulkan_device_objects& operator=(const vulkan_device_objects&) = delete;
  ~vulkan_device_objects();

  std::unique_ptr<vulkan_instance> instance;
  vulkan_physical_device physical;
  VkDevice device = VK_NULL_HANDLE;
  bool owns_device = false;
  // One per distinct queue: queues[0] runs compute, queues[transfer_queue]
  // transfer, queues[async_queue] async compute (either the same as
  // queues[0] when the device has no such queue of its own).
  struct queue_objects {
    VkQueue queue = VK_NULL_HANDLE;
    std::uint32_t family = 0;
    // What its submissions signal; made by ferrum on an engine's device too,
    // so that its values are ferrum's alone.
    VkSemaphore timeline = VK_NULL_HANDLE;
  };
  std::vector<queue_objects> queues;
  std::size_t transfer_queue = 0;
  std::size_t async_queue = 0;
  // The engine's lock around its submissions to queues[0] (adopt mode).
  std::mutex* queue_mutex = nullptr;
  // VK_EXT_calibrated_timestamps is enabled on `device`.
  bool calibrated_timestamps = false;
  // VK_KHR_swapchain is enabled on `device` (vulkan_device_options::presentation).
  bool presentation = false;
  // vulkan_device_options::discrete_layout.
  bool discrete_layout = false;
  // vulkan_device_options::wait_any.
  bool wait_any = false;
  // bufferDeviceAddress is enabled on `device`: arenas have device addresses.
  bool buffer_device_address = false;
  // textureCompressionBC is enabled on `device`: the bc* formats have the
  // features the physical device reports.
  bool texture_compression_bc = false;
  // vkCmdPipelineBarrier2, where synchronization2 is enabled on `device`
  // (null: barriers use vkCmdPipelineBarrier).
  PFN_vkCmdPipelineBarrier2 pipeline_barrier2 = nullptr;
  // Its event commands, looked up with it (all null without it).
  vk_event_functions event_functions;
  // Host-signalled only, to interrupt the fence waiter (fence_waiter.hpp).
  VkSemaphore wake = VK_NULL_HANDLE;
  // The kernel ABI's set and pipeline layouts.
  std::unique_ptr<vulkan_kernel_layouts> kernel_layouts;
  // Every arena's set (its buffer operand layout).
  std::unique_ptr<vulkan_descriptor_pool> descriptors;
};

class vulkan_device final : public device {
 public:
  // Makes the device-level objects (semaphores, layouts, descriptor pools)
  // on `objects->device` and starts the fence waiter. Errors:
  // out_of_device_memory, out_of_host_memory, vulkan_error.
  [[nodiscard]] static result<std::unique_ptr<device>> start(std::unique_ptr<vulkan_device_objects> objects);

  // Waits (bounded, then idling the queue or device) for the work submitted,
  // fails the waits still pending with device_shut_down, stops the fence
  // waiter and destroys what ferrum made.
  ~vulkan_device() override;

  [[nodiscard]] vulkan_native_handles native() const noexcept;
  // Whether VK_KHR_swapchain is enabled (swapchains may be made).
  [[nodiscard]] bool presentation() const noexcept { return objects_->presentation; }
  // The compute queue, with its timeline semaphore and its presentation.
  [[nodiscard]] vulkan_queue& compute_queue() noexcept { return *queues_.front(); }
  // What this device's arenas are made with (vulkan_arena::create, ::adopt).
  [[nodiscard]] vulkan_arena::context arena_context() const noexcept;

 protected:
  result<std::unique_ptr<arena>> do_create_arena(std::size_t bytes, std::optional<memory_class> cls) override;
  result<std::unique_ptr<kernel>> do_create_kernel(const kernel_source& source) override;
  result<gpu::image_requirements> do_image_requirements(const image_spec& spec) override;
  result<std::unique_ptr<image_view>> do_create_image_view(const image& img, const image_subresources& range) override;
  result<std::unique_ptr<image_memory>> do_create_image_memory(std::span<const placed_image> images,
                                                               std::uint64_t bytes) override;
  result<std::unique_ptr<command_list>> do_create_command_list(queue_kind kind, list_stages stages) override;
  result<std::unique_ptr<semaphore>> do_create_semaphore(semaphore_kind kind) override;
  result<std::unique_ptr<event>> do_create_event() override;
  result<std::unique_ptr<timestamp_pool>> do_create_timestamp_pool(std::uint32_t slots,
                                                                   timestamp_clock& clock) override;

 private:
  explicit vulkan_device(std::unique_ptr<vulkan_device_objects> objects);

  // Returns once the GPU can no longer touch memory of this device's
  // submissions.
  void drain() noexcept;
  // Zeroes `a`'s buffer on the GPU (vulkan_arena::zeroed_on_gpu): a list of
  // one fill, submitted to the compute queue with its next value, waited
  // for. On an error after the submission that leaves the GPU maybe still
  // running it, `a` and the list are retired until the value (vulkan_device_fill.cpp).
  // Errors: device_lost, device_shut_down, out_of_*_memory, vulkan_error.
  [[nodiscard]] result<void> zero_on_gpu(std::unique_ptr<arena>& a);
  // Puts each of `images` (made in `memory`, in order) whose layout is not
  // undefined in that layout, the same way: a list of transitions,
  // submitted and waited for (vulkan_device_fill.cpp). Errors: as zero_on_gpu.
  [[nodiscard]] result<void> set_up_layouts(std::span<const placed_image> images,
                                            std::unique_ptr<image_memory>& memory);
  // A list `record` fills, submitted to the compute queue with its next
  // value and waited for; on an error after the submission that leaves the
  // GPU maybe still running it, the list and `reached` are retired until the
  // value. Errors: as zero_on_gpu, each naming `what`.
  template <class Record, class Object>
  [[nodiscard]] result<void> run_once(const std::string& what, Record record, std::unique_ptr<Object>& reached);
  void retire_reached(std::unique_ptr<arena> a, std::uint64_t value) { retire(std::move(a), value); }
  void retire_reached(std::unique_ptr<image_memory> memory, std::uint64_t value);
  // Anchors clock_ once from a submission of one timestamp, bracketed by
  // steady_clock (the best of a few tries); returns its uncertainty.
  [[nodiscard]] result<std::chrono::nanoseconds> calibrate_once();
  // A timestamp pool with its results buffer.
  [[nodiscard]] result<std::unique_ptr<timestamp_pool>> make_timestamp_pool(std::uint32_t slots);

  std::unique_ptr<vulkan_device_objects> objects_;
  // Per distinct queue where the validation layers check hazards between
  // submissions (host_wait_fences.hpp); empty elsewhere.
  std::vector<std::unique_ptr<host_wait_fences>> host_waits_;
  fence_waiter waiter_;
  // One per distinct queue, [0] the compute queue's.
  std::vector<std::unique_ptr<vulkan_timeline>> timelines_;
  std::vector<std::unique_ptr<vulkan_queue>> queues_;
  vulkan_timestamp_clock clock_;
  bool clock_anchored_ = false;  // under the base class's timestamp lock
  // The one-time calibration's query, kept until the device goes (the GPU
  // may still write it if the calibration's wait gave up).
  std::unique_ptr<timestamp_pool> calibration_timestamp_;
};

}  // namespace ferrum::gpu
