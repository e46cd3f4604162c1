// vulkan_device.hpp (private) — the Vulkan device: the objects it owns or
// borrows, its queue, timeline and fence waiter. The public entry points are
// create_vulkan_device and adopt_vulkan_device (ferrum/gpu/vulkan_device.hpp).
//
//   auto objects = std::make_unique<vulkan_device_objects>();
//   ... fill objects ...
//   auto dev = vulkan_device::start(std::move(objects));
#pragma once

#include "ferrum/gpu/device.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include "vulkan/fence_waiter.hpp"
#include "vulkan/vulkan_descriptor_pool.hpp"
#include "vulkan/vulkan_instance.hpp"
#include "vulkan/vulkan_physical_device.hpp"
#include "vulkan/vulkan_queue.hpp"
#include "vulkan/vulkan_timestamp_clock.hpp"

#include <vulkan/vulkan_core.h>

#include <memory>
#include <mutex>

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
  VkQueue queue = VK_NULL_HANDLE;
  std::mutex* queue_mutex = nullptr;
  // VK_EXT_calibrated_timestamps is enabled on `device`.
  bool calibrated_timestamps = false;
  // What submissions signal; made by ferrum on an engine's device too, so
  // that its values are ferrum's alone.
  VkSemaphore timeline = VK_NULL_HANDLE;
  // Host-signalled only, to interrupt the fence waiter (fence_waiter.hpp).
  VkSemaphore wake = VK_NULL_HANDLE;
  // One storage buffer at binding 0, compute stage: every arena's set.
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  // Sets 0 and 1 of set_layout, 128 bytes of compute push constants: every
  // kernel's layout.
  VkPipelineLayout pipeline_layout = VK_NULL_HANDLE;
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

 protected:
  result<std::unique_ptr<arena>> do_create_arena(std::size_t bytes) override;
  result<std::unique_ptr<kernel>> do_create_kernel(const kernel_source& source) override;
  result<std::unique_ptr<command_list>> do_create_command_list() override;
  result<std::unique_ptr<timestamp_pool>> do_create_timestamp_pool(std::uint32_t slots,
                                                                   timestamp_clock& clock) override;

 private:
  explicit vulkan_device(std::unique_ptr<vulkan_device_objects> objects);

  // Returns once the GPU can no longer touch memory of this device's
  // submissions.
  void drain() noexcept;
  // Anchors clock_ once from a submission of one timestamp, bracketed by
  // steady_clock (the best of a few tries); returns its uncertainty.
  [[nodiscard]] result<std::chrono::nanoseconds> calibrate_once();
  // A timestamp pool with its results buffer.
  [[nodiscard]] result<std::unique_ptr<timestamp_pool>> make_timestamp_pool(std::uint32_t slots);

  std::unique_ptr<vulkan_device_objects> objects_;
  vulkan_timeline timeline_;
  // The base class keeps a reference to queue_; it is only used once the
  // constructor has finished.
  vulkan_queue queue_;
  fence_waiter waiter_;
  vulkan_timestamp_clock clock_;
  bool clock_anchored_ = false;  // under the base class's timestamp lock
  // The one-time calibration's query, kept until the device goes (the GPU
  // may still write it if the calibration's wait gave up).
  std::unique_ptr<timestamp_pool> calibration_stamp_;
};

}  // namespace ferrum::gpu
