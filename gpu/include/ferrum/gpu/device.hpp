// ferrum/gpu/device.hpp — what the scheduler needs from a GPU: arenas, kernels,
// command lists, timestamp pools and its queues, each with its timeline.
//
// Two devices implement it: the null device (ferrum/gpu/null_device.hpp), a
// CPU thread playing the GPU with deterministic fault injection, and the
// Vulkan device (ferrum/gpu/vulkan_device.hpp). Objects are made on the cold
// path; the hot path only records, submits and waits.
//
//   auto dev = ferrum::gpu::null_device::create({});
//   auto arena = (*dev)->create_arena(1 << 20);
//   auto list = (*dev)->create_command_list();
//   auto copy = (*dev)->create_command_list(ferrum::queue_kind::transfer);
//   ferrum::gpu::queue& transfer = (*dev)->queue(ferrum::queue_kind::transfer);
//
// Each kind of queue (ferrum/queue_kind.hpp) maps onto one of the device's
// distinct queues: the null device gives each kind a queue of its own (or
// one for both), a Vulkan device uses a transfer queue where the GPU offers
// one and runs both kinds on one queue where it does not. Arenas, kernels and
// timestamp pools serve every queue.
//
// A device can be *lost* (Vulkan's VK_ERROR_DEVICE_LOST, or an injected fault):
// from then on every operation fails with device_lost and every pending wait
// completes with it; nothing hangs. Destroying a device finishes or fails the
// work in flight and completes every pending wait (device_shut_down) before
// returning; arenas, kernels and lists must be destroyed before their device.
//
// Thread safety: every member may be called from any thread.
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/arena.hpp"
#include "ferrum/gpu/command_list.hpp"
#include "ferrum/gpu/event.hpp"
#include "ferrum/gpu/image.hpp"
#include "ferrum/gpu/kernel.hpp"
#include "ferrum/gpu/queue.hpp"
#include "ferrum/gpu/semaphore.hpp"
#include "ferrum/gpu/timestamp_pool.hpp"
#include "ferrum/queue_kind.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ferrum::gpu {

struct device_limits {
  // The largest arena the device makes.
  std::size_t max_arena_bytes = 0;
  // The most workgroups one dispatch launches (a shader loops over the rest).
  std::uint32_t max_workgroups = 0;
  // The widest and tallest image the device makes (at most
  // ferrum::max_image_extent).
  std::uint32_t max_image_extent = ferrum::max_image_extent;
  // Whether the compute queue's family has graphics: whether lists of
  // list_stages::graphics (raster nodes' draws) may be made.
  bool graphics = false;
};

// Anything else an owner hands to device::retire: its destructor runs once
// the GPU is done with what it names (a scheduler lane's contents, with the
// engine's state over them).
class retirable {
 public:
  retirable() = default;
  retirable(const retirable&) = delete;
  retirable& operator=(const retirable&) = delete;
  virtual ~retirable() = default;
};

class device {
 public:
  device(const device&) = delete;
  device& operator=(const device&) = delete;
  virtual ~device() = default;

  // "null", or the Vulkan physical device's name ("llvmpipe (LLVM 15.0.6, 256 bits)").
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  // "null" or "vulkan".
  [[nodiscard]] std::string_view kind() const noexcept { return kind_; }
  [[nodiscard]] const device_limits& limits() const noexcept { return limits_; }

  // A mapped arena of `bytes` bytes, zero-filled. Errors: invalid_arena_size,
  // device_lost, out_of_device_memory, out_of_host_memory, vulkan_error.
  [[nodiscard]] result<std::unique_ptr<arena>> create_arena(std::size_t bytes);
  // An arena of `cls` (arena.hpp): device memory the host does not touch;
  // upload memory the host writes (staged where the device has no
  // device-local memory the host can map, or with discrete_layout);
  // readback memory the host reads (staged on a discrete GPU or with
  // discrete_layout). Zero-filled: on Vulkan, memory not mapped for the
  // host (a device arena's, a staged arena's device-local buffer) by a fill
  // submitted to the compute queue, which takes its next timeline value,
  // and waited for. Errors: as create_arena(bytes); invalid_memory_class
  // for `imported`, which is an engine's buffer (gpu::import_vulkan_buffer).
  [[nodiscard]] result<std::unique_ptr<arena>> create_arena(std::size_t bytes, memory_class cls);

  // What the device can do with images of format `f` (format_feature bits,
  // optimal tiling): on Vulkan what vkGetPhysicalDeviceFormatProperties
  // reports, asked once when the device is made; on the null device every
  // feature but those null_device_options::withheld_features holds back.
  [[nodiscard]] std::uint32_t format_features(image_format f) const noexcept {
    const auto i = static_cast<std::size_t>(f);
    return i < format_features_.size() ? format_features_[i] : 0;
  }

  // The image memory an image of `spec` takes (ferrum/gpu/image.hpp).
  // Errors: invalid_image (check_image_spec's, or wider or taller than
  // limits().max_image_extent), format_unsupported (a usage whose feature
  // the format lacks on this device: format_features), device_lost.
  [[nodiscard]] result<gpu::image_requirements> image_requirements(const image_spec& spec);

  // One block of `bytes` bytes of device-local memory holding `images`, each
  // bound at its offset (inside the block, at its requirements' alignment;
  // images may overlap), with a view of the whole image, each in its
  // placed layout once this returns (on Vulkan, by a list of transitions
  // submitted to the compute queue with its next value and waited for, as
  // an arena's zero-fill is). Errors: invalid_image (a spec as image_requirements, an
  // image outside the block or misaligned, no image), out_of_device_memory,
  // out_of_host_memory, vulkan_feature_missing (no memory type holds them
  // all), device_lost, vulkan_error; invalid_image also for a placed
  // layout its usage does not allow (usage_allows).
  [[nodiscard]] result<std::unique_ptr<image_memory>> create_image_memory(std::span<const placed_image> images,
                                                                          std::uint64_t bytes);

  // A view of `range` of `img` (gpu::image_view: a VkImageView of it on
  // Vulkan), for a kernel to reach one level of one layer (image_operand::
  // view) or an engine its own commands. Errors: foreign_object (an image
  // of another device), invalid_image (a range that does not fit the image,
  // an image whose usage takes no view: none of sampled, storage or an
  // attachment), device_lost and the device's allocation errors.
  [[nodiscard]] result<std::unique_ptr<image_view>> create_image_view(const image& img,
                                                                      const image_subresources& range);

  // The device's form of `source`. Errors: invalid_kernel (no code for this
  // device, bad SPIR-V, local_size_x outside 1..1024),
  // push_constants_too_large, device_lost.
  [[nodiscard]] result<std::unique_ptr<kernel>> create_kernel(const kernel_source& source);

  // A command list for the queue that runs `kind`, to be reused across
  // submissions to that queue, whose commands use `stages`
  // (list_stages). Errors: unsupported_command (graphics stages on the
  // transfer queue, or on a device without graphics: device_limits::
  // graphics), device_lost and the device's allocation errors.
  [[nodiscard]] result<std::unique_ptr<command_list>> create_command_list(queue_kind kind = queue_kind::compute,
                                                                          list_stages stages = list_stages::compute);

  // A semaphore of `kind` (ferrum/gpu/semaphore.hpp) that this device's
  // submissions may wait on and signal: unsignalled, a timeline one at 0.
  // Errors: device_lost and the device's allocation errors.
  [[nodiscard]] result<std::unique_ptr<semaphore>> create_semaphore(semaphore_kind kind);

  // An event (ferrum/gpu/event.hpp), unsignaled, for the lists of one of
  // this device's queues to set, wait for and reset. Errors: device_lost
  // and the device's allocation errors.
  [[nodiscard]] result<std::unique_ptr<event>> create_event();

  // Whether and how the device times its queue's commands
  // (ferrum/gpu/timestamp_pool.hpp).
  [[nodiscard]] timestamp_clock timestamps() const;

  // A pool of `slots` timestamp slots (the first pool may calibrate the
  // device's clock: a submission on the Vulkan device without
  // VK_EXT_calibrated_timestamps). Errors: timestamps_unsupported (saying
  // why), invalid_device_option (zero slots, or more than 2^32 - 1),
  // device_lost, the device's allocation errors.
  [[nodiscard]] result<std::unique_ptr<timestamp_pool>> create_timestamp_pool(std::size_t slots);

  // The compute queue: queue(queue_kind::compute).
  [[nodiscard]] gpu::queue& queue() noexcept { return *by_kind_[0]; }
  [[nodiscard]] const gpu::queue& queue() const noexcept { return *by_kind_[0]; }

  // The queue that runs `kind` (possibly the same for both kinds).
  [[nodiscard]] gpu::queue& queue(queue_kind kind) noexcept { return *by_kind_[index_of(kind)]; }
  [[nodiscard]] const gpu::queue& queue(queue_kind kind) const noexcept { return *by_kind_[index_of(kind)]; }

  // How many distinct queues the device has (1 or more).
  [[nodiscard]] std::size_t queue_count() const noexcept { return queues_.size(); }
  // Distinct queue `i` (below queue_count()); queue_at(0) is the compute queue.
  [[nodiscard]] gpu::queue& queue_at(std::size_t i) noexcept { return *queues_[i]; }
  [[nodiscard]] const gpu::queue& queue_at(std::size_t i) const noexcept { return *queues_[i]; }

  // Whether the device was lost (any queue's timeline failed with
  // device_lost; a loss fails every queue's).
  [[nodiscard]] bool lost() const noexcept;

  // Keeps `a` (or `list`, or `timestamps`) alive until every wait of `until` is
  // reached (a wait on a queue of another device never is), then destroys
  // it; whatever is left goes when the device has drained its work. For
  // owners that must go while the GPU may still use their memory (a
  // scheduler destroyed with a lane in quarantine).
  void retire(std::unique_ptr<arena> a, std::span<const queue_wait> until);
  void retire(std::unique_ptr<command_list> list, std::span<const queue_wait> until);
  void retire(std::unique_ptr<timestamp_pool> timestamps, std::span<const queue_wait> until);
  // The same, until `q`'s timeline reaches `value`.
  void retire(std::unique_ptr<arena> a, const gpu::queue& q, std::uint64_t value);
  void retire(std::unique_ptr<command_list> list, const gpu::queue& q, std::uint64_t value);
  void retire(std::unique_ptr<timestamp_pool> timestamps, const gpu::queue& q, std::uint64_t value);
  // The same, until the compute queue's timeline reaches `value`.
  void retire(std::unique_ptr<arena> a, std::uint64_t value);
  void retire(std::unique_ptr<command_list> list, std::uint64_t value);
  void retire(std::unique_ptr<timestamp_pool> timestamps, std::uint64_t value);
  // Any other object (a retirable), until the compute queue reaches `value`.
  void retire(std::unique_ptr<retirable> object, std::uint64_t value);

 protected:
  // A device with one queue running every kind.
  device(std::string name, std::string_view kind, device_limits limits, gpu::queue& q)
      : device(std::move(name), kind, limits) {
    set_queues({&q, &q, &q});
  }
  // A device whose queues the subclass's constructor names with set_queues.
  device(std::string name, std::string_view kind, device_limits limits)
      : name_(std::move(name)), kind_(kind), limits_(limits) {}

  // The queue of each kind (indexed by index_of(kind)); the distinct ones, in
  // order of first appearance, are queue_at(0), queue_at(1), ... and each's
  // index() must be its position there. Called once, by the constructor.
  void set_queues(const std::array<gpu::queue*, queue_kind_count>& by_kind);

  // Destroys everything retired. Each device's destructor calls it once the
  // GPU is idle, before destroying what the retired objects were made from.
  void release_retired() noexcept;

  // Device parts, called after the checks above passed.
  // `cls`, or nullopt for create_arena(bytes)'s arena.
  virtual result<std::unique_ptr<arena>> do_create_arena(std::size_t bytes, std::optional<memory_class> cls) = 0;
  virtual result<std::unique_ptr<kernel>> do_create_kernel(const kernel_source& source) = 0;
  // Called with `spec` checked (check_image_spec).
  virtual result<gpu::image_requirements> do_image_requirements(const image_spec& spec) = 0;
  // Called with every spec checked and placed inside the block at its alignment.
  virtual result<std::unique_ptr<image_memory>> do_create_image_memory(std::span<const placed_image> images,
                                                                       std::uint64_t bytes) = 0;
  // Called with `range` fitting `img`, an image of this device whose usage takes a view.
  virtual result<std::unique_ptr<image_view>> do_create_image_view(const image& img,
                                                                   const image_subresources& range) = 0;
  virtual result<std::unique_ptr<command_list>> do_create_command_list(queue_kind kind, list_stages stages) = 0;
  virtual result<std::unique_ptr<semaphore>> do_create_semaphore(semaphore_kind kind) = 0;
  virtual result<std::unique_ptr<event>> do_create_event() = 0;
  // Called under the device's timestamp lock, with the timestamps supported;
  // may refine `clock` (a calibration's uncertainty).
  virtual result<std::unique_ptr<timestamp_pool>> do_create_timestamp_pool(std::uint32_t slots,
                                                                           timestamp_clock& clock) = 0;

  // What format_features(f) says (every feature until set); set by the
  // device's constructor.
  void set_format_features(image_format f, std::uint32_t features) noexcept {
    format_features_[static_cast<std::size_t>(f)] = features & format_feature::all;
  }

  // What timestamps() says until a pool refines it; set by the device's
  // constructor.
  void set_timestamp_clock(const timestamp_clock& clock) noexcept { timestamps_ = clock; }

 private:
  result<std::unique_ptr<arena>> make_arena(std::size_t bytes, std::optional<memory_class> cls);
  [[nodiscard]] result<void> check_usable() const;

  struct retired_object {
    std::vector<queue_wait> until;
    std::unique_ptr<gpu::arena> memory;
    std::unique_ptr<command_list> list;
    std::unique_ptr<timestamp_pool> timestamps;
    std::unique_ptr<retirable> object;
  };
  void retire(retired_object object);

  std::string name_;
  std::string_view kind_;
  device_limits limits_;
  std::array<std::uint32_t, image_format_count> format_features_ = [] {
    std::array<std::uint32_t, image_format_count> all{};
    all.fill(format_feature::all);
    return all;
  }();
  std::array<gpu::queue*, queue_kind_count> by_kind_{};
  std::vector<gpu::queue*> queues_;
  mutable std::mutex timestamps_mutex_;
  timestamp_clock timestamps_;
  std::mutex retired_mutex_;
  std::vector<retired_object> retired_;
};

}  // namespace ferrum::gpu
