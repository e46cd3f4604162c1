// vulkan_device_fill.cpp — the zero-fill on the GPU of a new arena's memory
// that the host does not map (vulkan_device::zero_on_gpu), and new images'
// first layout change (vulkan_device::set_up_layouts).
//
// Each goes through the compute queue's own submit_next: it takes the
// queue's lock (and an engine's, in adopt mode), as vkQueueSubmit needs, and
// signals the queue's next value, so the timeline stays the queue's one
// sequence. The creating thread waits for that value on the timeline
// semaphore itself (as the timestamp calibration does): the fence waiter
// learns of it later, and nothing here needs it to.
#include "vulkan/vk_result.hpp"
#include "vulkan/vulkan_arena.hpp"
#include "vulkan/vulkan_command_list.hpp"
#include "vulkan/vulkan_device.hpp"
#include "vulkan/vulkan_semaphore.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace ferrum::gpu {
namespace {

// How long the creating thread waits for the fill: it runs at memory
// bandwidth, so any arena the device makes is done well within this.
constexpr std::uint64_t fill_wait_ns = 30'000'000'000;

error in_fill(const std::string& what, error e) {
  e.detail = what + ": " + e.detail;
  return e;
}

// Image memory kept until a value is reached (device::retire takes it as
// any retirable).
struct retired_images final : retirable {
  explicit retired_images(std::unique_ptr<image_memory> m) noexcept : memory(std::move(m)) {}
  std::unique_ptr<image_memory> memory;
};

}  // namespace

void vulkan_device::retire_reached(std::unique_ptr<image_memory> memory, std::uint64_t value) {
  retire(std::make_unique<retired_images>(std::move(memory)), value);
}

result<void> vulkan_device::zero_on_gpu(std::unique_ptr<arena>& a) {
  return run_once(
      "zero-filling an arena of " + std::to_string(a->size()) + " bytes",
      [&](vulkan_command_list& l) { l.record_zero_fill(static_cast<const vulkan_arena&>(*a)); }, a);
}

result<void> vulkan_device::set_up_layouts(std::span<const placed_image> images,
                                           std::unique_ptr<image_memory>& memory) {
  return run_once(
      "putting " + std::to_string(images.size()) + " new images in their first layouts",
      [&](vulkan_command_list& l) {
        for (std::size_t i = 0; i < images.size(); ++i)
          if (images[i].layout != image_layout::undefined)
            (void)l.transition(memory->at(i), image_layout::undefined, images[i].layout);  // checked by the caller
      },
      memory);
}

template <class Record, class Object>
result<void> vulkan_device::run_once(const std::string& what, Record record, std::unique_ptr<Object>& reached) {
  // A list per run: begin() on a reused one would wait for the fence
  // waiter to see the last value, and concurrent creations would share it.
  auto list = do_create_command_list(queue_kind::compute, list_stages::compute);
  if (!list) return in_fill(what, list.error());
  auto& l = static_cast<vulkan_command_list&>(**list);
  // by_hazards: no command reached the new object before. The list ends
  // with the barrier that makes its writes available, as every list does;
  // the host's wait then orders it before any later submission, on either
  // queue, as a lane's last wave is before its next (docs/design.md,
  // "Barriers").
  if (auto r = l.begin(list_opening::by_hazards); !r) return in_fill(what, r.error());
  record(l);
  if (auto r = l.end(); !r) return in_fill(what, r.error());
  command_list* const lists[] = {&l};
  auto value = queue().submit_next(lists);
  if (!value) return in_fill(what, value.error());
  const VkResult waited = compute_queue().host_wait(*value, fill_wait_ns);
  if (waited == VK_SUCCESS) return {};
  const std::string waiting = what + ": waiting for value " + std::to_string(*value);
  // After a loss the GPU runs nothing more: both may go now.
  if (waited == VK_ERROR_DEVICE_LOST) return make_vk_error(waited, waiting);
  // The GPU may still reach the object and read the list: they go once the
  // value is reached, or when the device has drained.
  retire(std::move(*list), *value);
  retire_reached(std::move(reached), *value);
  if (waited == VK_TIMEOUT) return make_error(errc::vulkan_error, waiting + ": not reached in 30 s");
  return make_vk_error(waited, waiting);
}

}  // namespace ferrum::gpu
