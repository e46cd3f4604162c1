// vulkan_sharing.hpp — the queues of a Vulkan device that an engine's
// buffer or image may be used on, from how the engine made it to be shared
// (gpu::vulkan_sharing): what import_vulkan_buffer and import_vulkan_image
// record as arena::queues and image::queues.
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include <array>
#include <cstdint>
#include <string_view>

namespace ferrum::gpu {

// The family each queue kind of a device runs on (index_of(kind)), and how
// many families the device has.
struct queue_families {
  std::array<std::uint32_t, queue_kind_count> of_kind{};
  std::uint32_t count = 0;
};

// The kinds (queue_bit each) whose queue's family `sharing` covers: for
// EXCLUSIVE, those of its owner's family (the compute queue's when
// VK_QUEUE_FAMILY_IGNORED); for CONCURRENT, those of a family it lists.
// Errors (`what` first): invalid_device_option (an owner, or a family
// listed, that the device does not have; CONCURRENT over fewer than two
// families, which Vulkan does not allow).
[[nodiscard]] result<std::uint32_t> shared_queue_kinds(const vulkan_sharing& sharing, const queue_families& families,
                                                       std::string_view what);

// The families of `d`'s queues (a Vulkan device's).
[[nodiscard]] queue_families queue_families_of(const vulkan_native_handles& d);

}  // namespace ferrum::gpu
