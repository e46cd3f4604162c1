// ferrum/gpu/vulkan_device.hpp — the device on a real GPU (or on Mesa's
// lavapipe): Vulkan 1.2 timeline semaphores, host-visible coherent arenas,
// compute pipelines from SPIR-V.
//
// Two ways to start:
// * create_vulkan_device: ferrum makes its own headless instance and device,
//   on the physical device named in the options or the first suitable one
//   (discrete GPUs first);
// * adopt_vulkan_device: ferrum uses an engine's instance, physical device,
//   device and queue without owning them (they must outlive ferrum's device).
//
//   ferrum::gpu::vulkan_device_options options;
//   options.validation = true;
//   auto dev = ferrum::gpu::create_vulkan_device(options);
//   if (!dev && dev.error() == ferrum::errc::vulkan_unavailable) { /* no driver */ }
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/device.hpp"

#include <vulkan/vulkan_core.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ferrum::gpu {

// One message of the validation layers.
struct vulkan_message {
  bool error = false;  // an error (else a warning)
  std::string_view text;
};
// Receives validation messages (warnings and errors) on whatever thread made
// the failing call.
using vulkan_message_sink = void (*)(void* context, const vulkan_message& message) noexcept;

struct vulkan_device_options {
  // A substring of the physical device's name to pick; empty for the first
  // suitable device (discrete, then integrated, then any).
  std::string device_name;
  // Enables VK_LAYER_KHRONOS_validation with synchronization validation and a
  // debug messenger forwarding warnings and errors to `sink` (or stderr when
  // no sink is set). Only for devices ferrum creates.
  bool validation = false;
  vulkan_message_sink sink = nullptr;
  void* sink_context = nullptr;
  // How GPU timestamps are put on steady_clock (ferrum/gpu/timestamp_pool.hpp):
  // `automatic` enables VK_EXT_calibrated_timestamps where the device offers
  // it with CLOCK_MONOTONIC, else calibrates once; `one_time` always
  // calibrates once (around a submission of one timestamp, when the first
  // timestamp pool is made).
  enum class timestamp_calibration { automatic, one_time };
  timestamp_calibration calibration = timestamp_calibration::automatic;
  // Instance extensions to enable besides ferrum's own, such as the surface
  // extensions glfwGetRequiredInstanceExtensions names; each must be offered
  // by the loader (vulkan_feature_missing naming it otherwise).
  std::vector<std::string> instance_extensions;
  // Enables VK_KHR_swapchain on the device, for ferrum/gpu/swapchain.hpp
  // (vulkan_feature_missing when the physical device lacks it; with a
  // device_name, only matching devices that offer it are considered).
  bool presentation = false;
  // Lays memory out as on a discrete GPU, on any device (lavapipe's one
  // memory type included): upload and readback arenas get a device-local
  // buffer and a host-visible staging buffer that command_list::stage copies
  // (gpu::arena), so CI runs every path a discrete GPU takes.
  bool discrete_layout = false;
  // Watches the queues' timelines as on a device with several queues — one
  // vkWaitSemaphores for any of them and a host-signalled wake-up semaphore
  // — even with one queue, which is otherwise watched alone (a single
  // semaphore: Mesa's lavapipe polls a wait for any of several), so that CI
  // runs the several-queue path on lavapipe.
  bool wait_any = false;
};

// An engine's Vulkan objects. The device must have been created with Vulkan
// 1.2's `timelineSemaphore` feature enabled and `queue_family` must support
// compute. ferrum runs both kinds of work (compute and transfer) on `queue`. When the engine also submits to `queue`,
// it passes the mutex it holds around its own vkQueueSubmit calls, as Vulkan requires submissions to one queue to be
// externally synchronized.
struct vulkan_adopt_info {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  std::uint32_t queue_family = 0;
  std::mutex* queue_mutex = nullptr;
  // Set when the engine enabled VK_EXT_calibrated_timestamps on `device`
  // (with the device and CLOCK_MONOTONIC time domains); otherwise GPU
  // timestamps are calibrated once.
  bool calibrated_timestamps = false;
  // Set when the engine enabled bufferDeviceAddress (Vulkan 1.2) on
  // `device`: arenas then have device addresses (arena::device_address),
  // which native nodes hand to the engine's shaders.
  bool buffer_device_address = false;
  // Set when the engine enabled dynamicRendering (Vulkan 1.3) on `device`
  // and its queue's family has graphics: raster nodes may draw on it
  // (device_limits::graphics).
  bool dynamic_rendering = false;
  // Set when the engine enabled synchronization2 (Vulkan 1.3) on `device`:
  // ferrum records its barriers with vkCmdPipelineBarrier2, its stages and
  // accesses as precise as synchronization2 names them (sampled and storage
  // reads apart); otherwise with vkCmdPipelineBarrier, the same stages.
  bool synchronization2 = false;
  // Set when the engine enabled textureCompressionBC on `device`: images of
  // the bc* formats may be made (device::format_features has none for them
  // otherwise).
  bool texture_compression_bc = false;
  // Optional: a second queue of the engine's for ferrum's async-compute
  // nodes (queue_kind::async_compute), of `async_queue_family`, which must
  // support compute; ferrum submits to it alone (no engine mutex), so it
  // must not be `queue` nor one the engine submits to. Null: async-compute
  // nodes run on `queue`. ferrum's arenas and images are then shared
  // (VK_SHARING_MODE_CONCURRENT) between the two families where they differ.
  VkQueue async_queue = VK_NULL_HANDLE;
  std::uint32_t async_queue_family = 0;
};

// Creates a device with its own instance. Errors: vulkan_unavailable (no
// loader, driver or suitable device), vulkan_device_not_found (no device
// matches device_name), vulkan_feature_missing, out_of_*_memory, vulkan_error.
[[nodiscard]] result<std::unique_ptr<device>> create_vulkan_device(const vulkan_device_options& options);

// Wraps an engine's objects. Errors: invalid_device_option (a null handle, a
// queue family without compute, an async queue that is `queue` or of a
// family without compute), vulkan_feature_missing (API below 1.2, no
// host-coherent memory), and those of create_vulkan_device.
[[nodiscard]] result<std::unique_ptr<device>> adopt_vulkan_device(const vulkan_adopt_info& info);

// The Vulkan objects behind a ferrum Vulkan device, for an engine that
// synchronizes with ferrum's work itself: its own submissions may wait on
// `timeline` for a value ferrum's compute queue signals, on
// `transfer_timeline` for one of its transfer queue, `async_timeline` for
// one of its async compute queue (vkGetSemaphoreCounterValue reads them
// too). The transfer and async fields equal the compute ones when those
// kinds share the compute queue. The handles stay ferrum's (or
// the engine's, when adopted).
struct vulkan_native_handles {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  std::uint32_t queue_family = 0;
  VkSemaphore timeline = VK_NULL_HANDLE;
  VkQueue transfer_queue = VK_NULL_HANDLE;
  std::uint32_t transfer_queue_family = 0;
  VkSemaphore transfer_timeline = VK_NULL_HANDLE;
  // The async compute queue (the compute fields when it is the compute
  // queue: device::queue(queue_kind::async_compute) == device::queue()).
  VkQueue async_queue = VK_NULL_HANDLE;
  std::uint32_t async_queue_family = 0;
  VkSemaphore async_timeline = VK_NULL_HANDLE;
};

// A native recording's command buffer (command_list::record_native), and
// an arena's buffer (arena::native_handle), as the Vulkan handles they are.
[[nodiscard]] inline VkCommandBuffer vulkan_command_buffer(const native_commands& n) noexcept {
  return reinterpret_cast<VkCommandBuffer>(static_cast<std::uintptr_t>(n.command_buffer));
}
[[nodiscard]] inline VkBuffer vulkan_buffer(std::uint64_t native_handle) noexcept {
  return reinterpret_cast<VkBuffer>(static_cast<std::uintptr_t>(native_handle));
}
// An image's VkImage and VkImageView (image::native_handle, native_view),
// and the VkFormat, VkImageLayout and attachment load and store ops of
// ferrum's terms (ferrum/image.hpp).
[[nodiscard]] inline VkImage vulkan_image_handle(const image& i) noexcept {
  return reinterpret_cast<VkImage>(static_cast<std::uintptr_t>(i.native_handle()));
}
[[nodiscard]] inline VkImageView vulkan_image_view(const image& i) noexcept {
  return reinterpret_cast<VkImageView>(static_cast<std::uintptr_t>(i.native_view()));
}
// A view's VkImageView (image_view::native_handle: a range of an image).
[[nodiscard]] inline VkImageView vulkan_image_view(const image_view& v) noexcept {
  return reinterpret_cast<VkImageView>(static_cast<std::uintptr_t>(v.native_handle()));
}
[[nodiscard]] VkFormat vulkan_format(image_format f) noexcept;
[[nodiscard]] VkImageLayout vulkan_layout(image_layout l) noexcept;
[[nodiscard]] VkAttachmentLoadOp vulkan_load_op(attachment_load op) noexcept;
[[nodiscard]] VkAttachmentStoreOp vulkan_store_op(attachment_store op) noexcept;
// A raster node's attachment as a classic render pass describes it (for an
// engine whose pipeline is made for a VkRenderPass, not dynamic
// rendering; docs/embedding.md, "The engine's own commands in a node"):
// format `f`, one sample, the load and store ops node_image gives it, and
// node_image::layout `l` as both its initial and final layout — the layout
// the render pass's subpass must use it in too — so that the render pass
// transitions nothing and ferrum's barriers around the node stay right.
[[nodiscard]] VkAttachmentDescription vulkan_attachment_description(image_format f, image_layout l,
                                                                    attachment_load load,
                                                                    attachment_store store) noexcept;

// The handles of `d`, or none when `d` is not a Vulkan device.
[[nodiscard]] std::optional<vulkan_native_handles> native_handles(const device& d) noexcept;

// An engine's semaphore of `kind`, made on `d`'s VkDevice, as a ferrum
// semaphore (ferrum/gpu/semaphore.hpp) that submissions and waves may wait on
// and signal; it stays the engine's, which destroys it after this object.
// Errors: invalid_device_option (`d` not a Vulkan device, a null handle).
[[nodiscard]] result<std::unique_ptr<semaphore>> import_vulkan_semaphore(device& d, VkSemaphore handle,
                                                                         semaphore_kind kind);

// How an engine's buffer or image is shared among the device's queue
// families: its VkSharingMode and, for CONCURRENT, the families of its
// create info's pQueueFamilyIndices. import_vulkan_buffer and
// import_vulkan_image record from it the queues that may use the resource
// (arena::queues, image::queues): a wave that would use it on another
// queue is refused (import_not_shared) rather than left to race for it.
// ferrum records no queue family ownership transfer of an engine's
// resource: an EXCLUSIVE one is used only on the queues of the family that
// owns it while waves run (docs/embedding.md, "Async compute").
struct vulkan_sharing {
  VkSharingMode mode = VK_SHARING_MODE_EXCLUSIVE;
  // EXCLUSIVE: the family that owns it; VK_QUEUE_FAMILY_IGNORED for the
  // device's main queue's (vulkan_native_handles::queue_family).
  std::uint32_t owner = VK_QUEUE_FAMILY_IGNORED;
  // CONCURRENT: the families it is shared with, bit i for family i.
  std::uint64_t families = 0;

  // CONCURRENT over `indices` (a create info's queueFamilyIndexCount and
  // pQueueFamilyIndices); EXCLUSIVE, owned by the main queue's family, for
  // VK_SHARING_MODE_EXCLUSIVE. A family index of 64 or more is kept as a
  // bit that no family has, which the import refuses.
  [[nodiscard]] static vulkan_sharing of(VkSharingMode mode, std::uint32_t count,
                                         const std::uint32_t* indices) noexcept {
    vulkan_sharing out{mode, VK_QUEUE_FAMILY_IGNORED, 0};
    if (mode != VK_SHARING_MODE_CONCURRENT) return out;
    for (std::uint32_t i = 0; i < count && indices != nullptr; ++i)
      out.families |= indices[i] < 64 ? std::uint64_t{1} << indices[i] : std::uint64_t{1} << 63;
    return out;
  }
};

// An engine's buffer, made on `d`'s VkDevice, as a ferrum arena of class
// imported (ferrum/gpu/arena.hpp): what a wave names for an imported
// resource of its plan (wave_request::imports), and what ferrum's own
// commands (fill, copy, a kernel's binding) may reach. `bytes` are what
// ferrum may touch, from the buffer's start; `usage` is what the buffer was
// made with, recorded as the arena's usage (arena::usage, buffer_usage
// bits): each command checks what it needs of it (fill and copy transfers,
// a kernel's binding storage: buffer_usage_missing), and a scheduler what
// the plan's accesses of the resource need (a vertex buffer made with
// VERTEX_BUFFER usage alone serves a resource the plan reads as `vertex`);
// with shader-device-address (on a device with bufferDeviceAddress) the
// arena has its device address. The buffer and its memory stay the
// engine's: it destroys them after this object, once the GPU is done with
// every wave that named it. The arena has no host bytes (the engine maps its
// memory as it likes). `sharing`: how the buffer was made to be shared
// (vulkan_sharing; the default: EXCLUSIVE, owned by the main queue's
// family). Errors: invalid_device_option (`d` not a Vulkan device, a null
// handle, a sharing that names a family the device does not have, or is
// CONCURRENT over fewer than two), invalid_arena_size (0 bytes, more than
// the device's max_arena_bytes or the buffer's memory requirements),
// device_lost.
[[nodiscard]] result<std::unique_ptr<arena>> import_vulkan_buffer(device& d, VkBuffer handle, std::size_t bytes,
                                                                  VkBufferUsageFlags usage,
                                                                  const vulkan_sharing& sharing = {});

// An engine's VkImage as the engine made it (the fields of its
// VkImageCreateInfo that ferrum needs: `of` copies them), and optionally the
// engine's VkImageView of the whole image (every level and layer, its own
// format, the identity swizzle): what gpu::import_vulkan_image wraps.
struct vulkan_image_import {
  VkImage image = VK_NULL_HANDLE;
  VkImageType type = VK_IMAGE_TYPE_2D;
  VkFormat format = VK_FORMAT_UNDEFINED;
  VkExtent3D extent{0, 0, 1};
  std::uint32_t mip_levels = 1;
  std::uint32_t array_layers = 1;
  VkSampleCountFlagBits samples = VK_SAMPLE_COUNT_1_BIT;
  VkImageUsageFlags usage = 0;
  // VK_NULL_HANDLE: ferrum makes a view where the usage takes one (sampled,
  // storage, an attachment), and destroys it with the wrapper.
  VkImageView view = VK_NULL_HANDLE;
  // How the engine made it to be shared among queue families.
  vulkan_sharing sharing{};

  // The import of `image`, made by the engine with `info`.
  [[nodiscard]] static vulkan_image_import of(VkImage image, const VkImageCreateInfo& info,
                                              VkImageView view = VK_NULL_HANDLE) noexcept {
    return {image,          info.imageType,
            info.format,    info.extent,
            info.mipLevels, info.arrayLayers,
            info.samples,   info.usage,
            view,           vulkan_sharing::of(info.sharingMode, info.queueFamilyIndexCount, info.pQueueFamilyIndices)};
  }
};

// ferrum's format of a VkFormat (the inverse of vulkan_format); none where
// ferrum has no such format.
[[nodiscard]] std::optional<image_format> image_format_from_vk(VkFormat f) noexcept;
// The image_usage bits of Vulkan usage flags: those ferrum has (sampled,
// storage, color and depth-stencil attachment, transfer-src and -dst);
// other flags (input attachment, transient attachment, ...) have none.
[[nodiscard]] std::uint32_t image_usage_from_vk(VkImageUsageFlags usage) noexcept;

// An engine's image, made on `d`'s VkDevice, as a ferrum image (ferrum/gpu/
// image.hpp): what a wave names for an imported image of its plan
// (wave_request::images, docs/embedding.md, "The engine's VkImages"), and
// what ferrum's commands (a copy, a transition) and native nodes
// (gpu::vulkan_image_handle, vulkan_image_view) reach. Its spec is the
// import's: ferrum's format of `format`, the extent, mips, layers, and the
// image_usage bits of `usage`; its view the engine's `view`, or one ferrum
// makes. The image, its memory and the engine's view stay the engine's:
// destroying the wrapper destroys only a view ferrum made; the engine
// destroys its objects after the wrapper, once the GPU is done with every
// wave that named it (the wave's submitted value). `sharing` says which of
// the device's queues may use it (image::queues): on a device whose
// transfer or async compute queue is of another family than the main one
// (native_handles), an image a node on that queue uses must be made
// VK_SHARING_MODE_CONCURRENT over both, as ferrum's own images are.
// Errors: invalid_device_option (`d` not a Vulkan device, a null image, a
// sharing that names a family the device does not have, or is CONCURRENT
// over fewer than two),
// invalid_image (not a 2D image of depth 1, a VkFormat ferrum has no format
// for, more than one sample, a spec check_image_spec refuses: no usage
// ferrum has, a depth format with color usage, ...), and vkCreateImageView's
// errors (device_lost, out_of_*_memory).
[[nodiscard]] result<std::unique_ptr<image>> import_vulkan_image(device& d, const vulkan_image_import& info);

// Maps a VkResult to ferrum's code: VK_ERROR_DEVICE_LOST to device_lost, the
// out-of-memory results to out_of_device_memory / out_of_host_memory,
// VK_ERROR_INCOMPATIBLE_DRIVER and VK_ERROR_INITIALIZATION_FAILED to
// vulkan_unavailable, VK_ERROR_FEATURE_NOT_PRESENT and
// VK_ERROR_EXTENSION_NOT_PRESENT to vulkan_feature_missing, other errors to
// vulkan_error; VK_SUCCESS to ok.
[[nodiscard]] errc errc_from_vk(VkResult result) noexcept;

}  // namespace ferrum::gpu
