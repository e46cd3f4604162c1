#include "vulkan/vulkan_device.hpp"

#include "vulkan/vk_result.hpp"
#include "vulkan/vulkan_arena.hpp"
#include "vulkan/vulkan_command_list.hpp"
#include "vulkan/vulkan_event.hpp"
#include "vulkan/vulkan_image.hpp"
#include "vulkan/vulkan_kernel.hpp"
#include "vulkan/vulkan_semaphore.hpp"
#include "vulkan/vulkan_sharing.hpp"
#include "vulkan/vulkan_timestamp_pool.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace ferrum::gpu {
namespace {

// vkCmdPipelineBarrier2 of `device`, on which synchronization2 is enabled
// (looked up: a loader older than 1.3 does not export it; null where the
// driver does not give it, and barriers then use vkCmdPipelineBarrier).
PFN_vkCmdPipelineBarrier2 pipeline_barrier2(VkDevice device) noexcept {
  return reinterpret_cast<PFN_vkCmdPipelineBarrier2>(vkGetDeviceProcAddr(device, "vkCmdPipelineBarrier2"));
}

// synchronization2's event commands of `device` (as pipeline_barrier2).
vk_event_functions event_functions(VkDevice device) noexcept {
  vk_event_functions f;
  f.set = reinterpret_cast<PFN_vkCmdSetEvent2>(vkGetDeviceProcAddr(device, "vkCmdSetEvent2"));
  f.wait = reinterpret_cast<PFN_vkCmdWaitEvents2>(vkGetDeviceProcAddr(device, "vkCmdWaitEvents2"));
  f.reset = reinterpret_cast<PFN_vkCmdResetEvent2>(vkGetDeviceProcAddr(device, "vkCmdResetEvent2"));
  return f;
}

// Shutdown waits this many times 100 ms for the last submission before it
// idles the queue or device instead.
constexpr int drain_attempts = 50;
constexpr std::uint64_t drain_wait_ns = 100'000'000;

// The one-time timestamp calibration keeps the tightest of this many
// submissions, each waited for at most calibration_wait_ns.
constexpr int calibration_attempts = 5;
constexpr std::uint64_t calibration_wait_ns = 5'000'000'000;

static_assert((range_push_words + max_kernel_push_words) * sizeof(std::uint32_t) ==
              vulkan_kernel_layouts::push_constant_bytes);

}  // namespace

vulkan_device_objects::~vulkan_device_objects() {
  if (device != VK_NULL_HANDLE) {
    descriptors.reset();
    kernel_layouts.reset();
    if (wake != VK_NULL_HANDLE) vkDestroySemaphore(device, wake, nullptr);
    for (const queue_objects& q : queues)
      if (q.timeline != VK_NULL_HANDLE) vkDestroySemaphore(device, q.timeline, nullptr);
    // An engine's device (adopt mode) is the engine's to destroy.
    if (owns_device) vkDestroyDevice(device, nullptr);
  }
  // The instance outlives every object made from it.
  instance.reset();
}

result<std::unique_ptr<device>> vulkan_device::start(std::unique_ptr<vulkan_device_objects> objects) {
  vulkan_device_objects& o = *objects;
  for (vulkan_device_objects::queue_objects& q : o.queues) {
    auto timeline = create_timeline_semaphore(o.device, "timeline");
    if (!timeline) return timeline.error();
    q.timeline = *timeline;
  }
  auto wake = create_timeline_semaphore(o.device, "wake-up");
  if (!wake) return wake.error();
  o.wake = *wake;

  auto layouts = vulkan_kernel_layouts::create(o.device);
  if (!layouts) return layouts.error();
  o.kernel_layouts = std::move(*layouts);
  o.descriptors =
      std::make_unique<vulkan_descriptor_pool>(o.device, o.kernel_layouts->set_layout(kernel_operand_kind::buffer));

  try {
    return std::unique_ptr<device>(new vulkan_device(std::move(objects)));
  } catch (const std::system_error& e) {
    return make_error(errc::out_of_host_memory, std::string("starting the fence waiter thread: ") + e.what());
  }
}

vulkan_device::vulkan_device(std::unique_ptr<vulkan_device_objects> objects)
    : device(objects->physical.name, "vulkan", objects->physical.limits),
      objects_(std::move(objects)),
      waiter_(objects_->device, objects_->wake, objects_->wait_any),
      clock_(objects_->device, objects_->physical.timestamp_valid_bits, objects_->physical.timestamp_period,
             objects_->calibrated_timestamps) {
  const vulkan_physical_device& physical = objects_->physical;
  for (image_format f : image_formats)
    set_format_features(f, is_block_compressed(f) && !objects_->texture_compression_bc
                               ? 0
                               : vulkan_format_features(physical.handle, f));
  if (physical.timestamp_valid_bits == 0 || physical.timestamp_period <= 0) {
    set_timestamp_clock({false, "its queue family reports no valid timestamp bits", std::chrono::nanoseconds(0)});
  } else {
    set_timestamp_clock({true, clock_.calibrated() ? "VK_EXT_calibrated_timestamps" : "one-time calibration",
                         std::chrono::nanoseconds(0)});
  }
  const std::vector<vulkan_device_objects::queue_objects>& queues = objects_->queues;
  const bool show_host_waits = submit_time_validation_requested();
  for (std::size_t i = 0; i < queues.size(); ++i) {
    auto& t = *timelines_.emplace_back(std::make_unique<vulkan_timeline>());
    host_wait_fences* host_waits =
        show_host_waits ? host_waits_.emplace_back(std::make_unique<host_wait_fences>(objects_->device)).get()
                        : nullptr;
    const std::size_t watched = waiter_.watch(queues[i].timeline, t, host_waits);
    // Adopt mode has one queue, the engine's, whose lock guards it.
    std::mutex* engine_lock = i == 0 ? objects_->queue_mutex : nullptr;
    const queue_kind kind = i == 0                          ? queue_kind::compute
                            : i == objects_->transfer_queue ? queue_kind::transfer
                                                            : queue_kind::async_compute;
    queues_.push_back(std::make_unique<vulkan_queue>(
        *this, t,
        vulkan_queue::context{queues[i].queue, queues[i].family, queues[i].timeline, engine_lock, &waiter_, watched,
                              host_waits, objects_->device},
        i, kind));
    t.attach(&waiter_, watched);
  }
  set_queues({queues_.front().get(), queues_[objects_->transfer_queue].get(), queues_[objects_->async_queue].get()});
  waiter_.start();
}

vulkan_device::~vulkan_device() {
  // The fence waiter goes first, so that from here on this thread is the only
  // one of ferrum's inside a Vulkan call on this device; the waits it would
  // have completed are completed below.
  for (const auto& t : timelines_) t->attach(nullptr);
  waiter_.stop();
  drain();
  // The GPU is idle: what owners retired while it might still run goes now,
  // before the Vulkan objects it was made from.
  release_retired();
  calibration_timestamp_.reset();
  // Everything submitted is done (or the device is lost): complete the waits
  // on those values with success, then fail the rest, on values never
  // submitted, so that no waiter is left hanging.
  for (std::size_t i = 0; i < timelines_.size(); ++i) {
    std::uint64_t reached = 0;
    if (vkGetSemaphoreCounterValue(objects_->device, objects_->queues[i].timeline, &reached) == VK_SUCCESS)
      timelines_[i]->advance(reached);
    timelines_[i]->fail(make_error_code(errc::device_shut_down));
  }
  // The members go in reverse order: the queues, the timelines (no wait
  // pending), the waiter (stopped), then the Vulkan objects.
}

void vulkan_device::drain() noexcept {
  VkResult r = VK_SUCCESS;
  // Queue by queue, all sharing one bound: a queue waiting on another
  // finishes once that one has.
  int attempt = 0;
  for (std::size_t i = 0; i < queues_.size() && r == VK_SUCCESS; ++i) {
    const std::uint64_t last = queues_[i]->last_submitted();
    if (last == 0) continue;
    r = VK_TIMEOUT;
    for (; attempt < drain_attempts && r == VK_TIMEOUT; ++attempt)
      r = wait_timeline_semaphore(objects_->device, objects_->queues[i].timeline, last, drain_wait_ns);
  }
  // After a loss the device runs nothing more and objects may be destroyed.
  // Where each submission also signals a fence (host_wait_fences.hpp), the
  // driver may still be signalling the last one after its semaphore:
  // lavapipe's queue thread was seen to crash when the device was destroyed
  // then, so the device (or queue) is idled below too.
  if (r == VK_ERROR_DEVICE_LOST || (r == VK_SUCCESS && host_waits_.empty())) return;
  // Still running (a hung submission), the wait itself failed, or fences
  // may still be signalled: memory the GPU may still use must not be freed,
  // so wait without a bound. Only the engine may idle its whole device, so
  // in adopt mode ferrum idles the queue it submits to, under the engine's
  // lock (queues are externally synchronized).
  if (objects_->owns_device) {
    (void)vkDeviceWaitIdle(objects_->device);  // VK_SUCCESS or a loss: done either way
    return;
  }
  // Adopt mode has the engine's queue, and its async queue where given.
  for (std::size_t i = 1; i < objects_->queues.size(); ++i) (void)vkQueueWaitIdle(objects_->queues[i].queue);
  std::optional<std::lock_guard<std::mutex>> engine_lock;
  if (objects_->queue_mutex != nullptr) engine_lock.emplace(*objects_->queue_mutex);
  (void)vkQueueWaitIdle(objects_->queues.front().queue);  // VK_SUCCESS or a loss: done either way
}

vulkan_arena::context vulkan_device::arena_context() const noexcept {
  vulkan_arena::context c{objects_->device, &objects_->physical.memory, objects_->descriptors.get()};
  c.discrete_layout = objects_->discrete_layout;
  c.buffer_device_address = objects_->buffer_device_address;
  // Every distinct family of the device's queues (up to three: compute,
  // transfer, async compute): more than one makes arenas concurrent.
  c.families[0] = objects_->queues.front().family;
  for (const vulkan_device_objects::queue_objects& q : objects_->queues) {
    const auto end = c.families.begin() + c.family_count;
    if (std::find(c.families.begin(), end, q.family) == end) c.families[c.family_count++] = q.family;
  }
  return c;
}

result<std::unique_ptr<arena>> vulkan_device::do_create_arena(std::size_t bytes, std::optional<memory_class> cls) {
  auto made = vulkan_arena::create(*this, arena_context(), bytes, cls);
  if (!made) return made.error();
  if (static_cast<const vulkan_arena&>(**made).zeroed_on_gpu()) {
    if (auto r = zero_on_gpu(*made); !r) return r.error();
  }
  return made;
}

result<std::unique_ptr<kernel>> vulkan_device::do_create_kernel(const kernel_source& source) {
  return vulkan_kernel::create(*this, objects_->device,
                               objects_->kernel_layouts->pipeline_layout(source.primary, source.secondary), source);
}

result<gpu::image_requirements> vulkan_device::do_image_requirements(const image_spec& spec) {
  return vulkan_image_requirements(arena_context(), spec);
}

result<std::unique_ptr<image_memory>> vulkan_device::do_create_image_memory(std::span<const placed_image> images,
                                                                            std::uint64_t bytes) {
  auto made = vulkan_image_memory::create(*this, arena_context(), images, bytes);
  if (!made) return made.error();
  if (std::any_of(images.begin(), images.end(),
                  [](const placed_image& p) { return p.layout != image_layout::undefined; })) {
    if (auto r = set_up_layouts(images, *made); !r) return r.error();
  }
  return made;
}

result<std::unique_ptr<image_view>> vulkan_device::do_create_image_view(const image& img,
                                                                        const image_subresources& range) {
  // The base class checked the image is this device's (a vulkan_image) and
  // that its usage takes a view.
  const VkImage handle = static_cast<const vulkan_image&>(img).handle();
  auto view = make_vk_image_view(objects_->device, handle, img.spec(), range);
  if (!view) return view.error();
  return std::unique_ptr<image_view>(std::make_unique<vulkan_range_view>(objects_->device, img, range, *view));
}

result<std::unique_ptr<command_list>> vulkan_device::do_create_command_list(queue_kind kind, list_stages stages) {
  const vulkan_physical_device& physical = objects_->physical;
  const auto& q = static_cast<const vulkan_queue&>(queue(kind));
  vulkan_command_list::context c;
  c.device = objects_->device;
  // The pool's family is the queue's: its buffers may be submitted only to
  // queues of that family.
  c.queue_family = q.family();
  c.layouts = objects_->kernel_layouts.get();
  c.max_workgroups = limits().max_workgroups;
  // Where the layers check hazards between submissions (host_waits_), they
  // are shown each dispatch's operand range.
  if (!host_waits_.empty()) c.exact_operands_alignment = std::max<VkDeviceSize>(1, physical.storage_offset_alignment);
  // The compute queue's family, or the async queue's when it is a further
  // queue of that family, has graphics where the device has it.
  c.graphics = q.family() == physical.queue_family && physical.graphics_family;
  const bool transfer = q.index() != 0 && q.index() == objects_->transfer_queue;
  const bool async = q.index() != 0 && q.index() == objects_->async_queue;
  if (transfer && physical.transfer_only_family) {
    c.transfer_only = true;
    c.no_timestamps = "the transfer queue's family has neither graphics nor compute, which copying query results needs";
  } else if ((transfer ? physical.transfer_timestamp_valid_bits
              : async  ? physical.async_timestamp_valid_bits
                       : physical.timestamp_valid_bits) == 0) {
    c.no_timestamps = "its queue family reports no valid timestamp bits";
  }
  c.graphics_stages = stages == list_stages::graphics;
  c.barrier2 = objects_->pipeline_barrier2;
  const vk_event_functions& events = objects_->event_functions;
  if (events.set != nullptr && events.wait != nullptr && events.reset != nullptr) c.events = &events;
  return vulkan_command_list::create(*this, kind, stages, c);
}

result<std::unique_ptr<semaphore>> vulkan_device::do_create_semaphore(semaphore_kind kind) {
  auto handle = kind == semaphore_kind::binary ? create_binary_semaphore(objects_->device, "binary")
                                               : create_timeline_semaphore(objects_->device, "timeline");
  if (!handle) return handle.error();
  return std::unique_ptr<semaphore>(new vulkan_semaphore(*this, objects_->device, *handle, kind, true));
}

result<std::unique_ptr<event>> vulkan_device::do_create_event() {
  VkEventCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO;
  // Only command buffers set and reset it (synchronization2's flag).
  if (objects_->pipeline_barrier2 != nullptr) info.flags = VK_EVENT_CREATE_DEVICE_ONLY_BIT;
  VkEvent handle = VK_NULL_HANDLE;
  if (VkResult r = vkCreateEvent(objects_->device, &info, nullptr, &handle); r != VK_SUCCESS)
    return make_vk_error(r, "event: vkCreateEvent");
  return std::unique_ptr<event>(new vulkan_event(*this, objects_->device, handle));
}

result<std::unique_ptr<timestamp_pool>> vulkan_device::do_create_timestamp_pool(std::uint32_t slots,
                                                                                timestamp_clock& clock) {
  if (!clock_anchored_) {
    auto uncertainty = clock_.calibrated() ? clock_.recalibrate() : calibrate_once();
    if (!uncertainty) return uncertainty.error();
    clock.uncertainty = *uncertainty;
    clock_anchored_ = true;
  }
  return make_timestamp_pool(slots);
}

result<std::unique_ptr<timestamp_pool>> vulkan_device::make_timestamp_pool(std::uint32_t slots) {
  auto results = do_create_arena(std::size_t{slots} * vulkan_timestamp_pool::slot_bytes, std::nullopt);
  if (!results) return results.error();
  return vulkan_timestamp_pool::create(*this, objects_->device, clock_, std::move(*results), slots);
}

result<std::chrono::nanoseconds> vulkan_device::calibrate_once() {
  using clock_type = std::chrono::steady_clock;
  auto pool = make_timestamp_pool(1);
  if (!pool) return pool.error();
  calibration_timestamp_ = std::move(*pool);
  std::optional<clock_type::duration> best;
  for (int attempt = 0; attempt < calibration_attempts; ++attempt) {
    // A list per attempt: the semaphore wait below tells this thread that
    // the GPU is done with it (so it may go), but the device's timeline
    // learns it later, from the fence waiter, and begin() would wait for
    // that.
    auto list = do_create_command_list(queue_kind::compute, list_stages::compute);
    if (!list) return list.error();
    command_list& l = **list;
    if (auto r = l.begin(); !r) return r.error();
    if (auto r = l.timestamp(*calibration_timestamp_, 0); !r) return r.error();
    if (auto r = l.end(); !r) return r.error();
    command_list* const lists[] = {&l};
    const clock_type::time_point before = clock_type::now();
    auto value = queue().submit_next(lists);
    if (!value) return value.error();
    const VkResult waited = compute_queue().host_wait(*value, calibration_wait_ns);
    const clock_type::time_point after = clock_type::now();
    if (waited != VK_SUCCESS) {
      // The GPU may still run the list: it goes once its value is reached.
      retire(std::move(*list), *value);
      const std::string what = "timestamp calibration: waiting for value " + std::to_string(*value);
      if (waited == VK_TIMEOUT) return make_error(errc::vulkan_error, what + ": not reached in 5 s");
      return make_vk_error(waited, what);
    }
    const std::optional<std::uint64_t> ticks =
        static_cast<const vulkan_timestamp_pool&>(*calibration_timestamp_).ticks(0);
    if (!ticks) return make_error(errc::timestamp_unavailable, "timestamp calibration: the timestamp was not copied");
    // The GPU wrote the timestamp somewhere between the two CPU readings: the
    // middle is off by at most half the round trip.
    if (!best || after - before < *best) {
      best = after - before;
      clock_.anchor(*ticks, before + (after - before) / 2);
    }
  }
  return std::chrono::duration_cast<std::chrono::nanoseconds>(*best / 2);
}

vulkan_native_handles vulkan_device::native() const noexcept {
  const vulkan_device_objects& o = *objects_;
  const vulkan_device_objects::queue_objects& compute = o.queues.front();
  const vulkan_device_objects::queue_objects& transfer = o.queues[o.transfer_queue];
  const vulkan_device_objects::queue_objects& async = o.queues[o.async_queue];
  return {o.instance->handle(), o.physical.handle, o.device,          compute.queue, compute.family, compute.timeline,
          transfer.queue,       transfer.family,   transfer.timeline, async.queue,   async.family,   async.timeline};
}

std::optional<vulkan_native_handles> native_handles(const device& d) noexcept {
  if (const auto* v = dynamic_cast<const vulkan_device*>(&d)) return v->native();
  return std::nullopt;
}

result<std::unique_ptr<semaphore>> import_vulkan_semaphore(device& d, VkSemaphore handle, semaphore_kind kind) {
  const auto* v = dynamic_cast<const vulkan_device*>(&d);
  if (v == nullptr)
    return make_error(errc::invalid_device_option,
                      "import_vulkan_semaphore: device " + quote_text(d.name()) + " is not a Vulkan device");
  if (handle == VK_NULL_HANDLE)
    return make_error(errc::invalid_device_option, "import_vulkan_semaphore: a null handle");
  return std::unique_ptr<semaphore>(new vulkan_semaphore(d, v->native().device, handle, kind, false));
}

result<std::unique_ptr<arena>> import_vulkan_buffer(device& d, VkBuffer handle, std::size_t bytes,
                                                    VkBufferUsageFlags usage, const vulkan_sharing& sharing) {
  auto* v = dynamic_cast<vulkan_device*>(&d);
  const std::string what = "import_vulkan_buffer: ";
  if (v == nullptr)
    return make_error(errc::invalid_device_option, what + "device " + quote_text(d.name()) + " is not a Vulkan device");
  if (handle == VK_NULL_HANDLE) return make_error(errc::invalid_device_option, what + "a null handle");
  if (d.lost()) return make_error(errc::device_lost, what + "device " + quote_text(d.name()));
  if (bytes == 0 || bytes > d.limits().max_arena_bytes)
    return make_error(errc::invalid_arena_size, what + std::to_string(bytes) + " bytes; the device allows 1 to " +
                                                    std::to_string(d.limits().max_arena_bytes));
  // What the buffer may be used for, as ferrum's bits: each command checks
  // what it needs (a kernel binds it as a storage buffer, fill and copy use
  // it in transfers), a scheduler what its plan's accesses need.
  std::uint32_t bits = 0;
  for (const auto& [flag, bit] : {std::pair{VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, buffer_usage::storage},
                                  {VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT, buffer_usage::uniform},
                                  {VK_BUFFER_USAGE_VERTEX_BUFFER_BIT, buffer_usage::vertex},
                                  {VK_BUFFER_USAGE_INDEX_BUFFER_BIT, buffer_usage::index},
                                  {VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT, buffer_usage::indirect},
                                  {VK_BUFFER_USAGE_TRANSFER_SRC_BIT, buffer_usage::transfer_src},
                                  {VK_BUFFER_USAGE_TRANSFER_DST_BIT, buffer_usage::transfer_dst}})
    if ((usage & flag) != 0) bits |= bit;
  const auto queues = shared_queue_kinds(sharing, queue_families_of(v->native()), what);
  if (!queues) return queues.error();
  return vulkan_arena::adopt(d, v->arena_context(), handle, bytes, bits, *queues,
                             (usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT) != 0);
}

result<std::unique_ptr<device>> create_vulkan_device(const vulkan_device_options& options) {
  auto objects = std::make_unique<vulkan_device_objects>();
  auto instance = vulkan_instance::create(options);
  if (!instance) return instance.error();
  objects->instance = std::move(*instance);
  auto physical = pick_physical_device(objects->instance->handle(), options.device_name);
  if (!physical) return physical.error();
  objects->physical = std::move(*physical);

  // One VkDeviceQueueCreateInfo per family (queueFamilyIndex must be unique
  // among them): the compute family's with one queue, or two when transfer
  // takes its second, and the transfer family's when it has its own.
  // The async compute queue likewise: its family's with one queue, or a
  // further queue of the compute family.
  const vulkan_physical_device& chosen = objects->physical;
  const std::array<float, 3> priorities{1.0f, 1.0f, 1.0f};
  std::array<VkDeviceQueueCreateInfo, 3> queue_infos{};
  std::uint32_t queue_info_count = 0;
  const auto take = [&](std::uint32_t family, std::uint32_t index) {
    VkDeviceQueueCreateInfo* info = nullptr;
    for (std::uint32_t k = 0; k < queue_info_count; ++k)
      if (queue_infos[k].queueFamilyIndex == family) info = &queue_infos[k];
    if (info == nullptr) {
      info = &queue_infos[queue_info_count++];
      info->sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
      info->queueFamilyIndex = family;
      info->pQueuePriorities = priorities.data();
    }
    info->queueCount = std::max(info->queueCount, index + 1);
  };
  take(chosen.queue_family, 0);
  take(chosen.transfer_family, chosen.transfer_queue_index);
  take(chosen.async_family, chosen.async_queue_index);
  // Timeline semaphores are core in 1.2 but still a feature to enable;
  // buffer device addresses (for engines' shaders in native nodes) where
  // the device has them.
  VkPhysicalDeviceVulkan12Features offered12{};
  offered12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  VkPhysicalDeviceFeatures2 offered{};
  offered.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  offered.pNext = &offered12;
  vkGetPhysicalDeviceFeatures2(objects->physical.handle, &offered);
  VkPhysicalDeviceVulkan12Features features12{};
  features12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  features12.timelineSemaphore = VK_TRUE;
  features12.bufferDeviceAddress = offered12.bufferDeviceAddress;
  // Dynamic rendering (Vulkan 1.3), for raster nodes' draws, where the
  // instance and the device have 1.3 and its family has graphics.
  const bool vulkan13 = objects->instance->api_version() >= VK_API_VERSION_1_3;
  const bool raster = vulkan13 && objects->physical.dynamic_rendering && objects->physical.graphics_family;
  // Synchronization2 (Vulkan 1.3) for barriers of precise stages and
  // accesses (vulkan_barrier.hpp), where the instance and the device have it.
  const bool synchronization2 = vulkan13 && objects->physical.synchronization2;
  VkPhysicalDeviceVulkan13Features features13{};
  features13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
  features13.dynamicRendering = raster ? VK_TRUE : VK_FALSE;
  features13.synchronization2 = synchronization2 ? VK_TRUE : VK_FALSE;
  if (raster || synchronization2) features12.pNext = &features13;
  // Block-compressed images (the bc* formats) where the device has them.
  VkPhysicalDeviceFeatures features{};
  features.textureCompressionBC = offered.features.textureCompressionBC;
  VkDeviceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  info.pNext = &features12;
  info.pEnabledFeatures = &features;
  info.queueCreateInfoCount = queue_info_count;
  info.pQueueCreateInfos = queue_infos.data();
  // Calibrated timestamps put GPU times on steady_clock without a
  // calibration submission, where the device offers them.
  const bool calibrated = options.calibration == vulkan_device_options::timestamp_calibration::automatic &&
                          calibrates_monotonic(objects->instance->handle(), objects->physical.handle);
  if (options.presentation && !objects->physical.offers_swapchain)
    return make_error(errc::vulkan_feature_missing, "device " + quote_text(objects->physical.name) + " lacks " +
                                                        VK_KHR_SWAPCHAIN_EXTENSION_NAME +
                                                        " (vulkan_device_options::presentation)");
  std::array<const char*, 2> extensions{};
  std::uint32_t extension_count = 0;
  if (calibrated) extensions[extension_count++] = calibrated_timestamps_extension;
  if (options.presentation) extensions[extension_count++] = VK_KHR_SWAPCHAIN_EXTENSION_NAME;
  if (extension_count != 0) {
    info.enabledExtensionCount = extension_count;
    info.ppEnabledExtensionNames = extensions.data();
  }
  if (VkResult r = vkCreateDevice(objects->physical.handle, &info, nullptr, &objects->device); r != VK_SUCCESS) {
    objects->device = VK_NULL_HANDLE;
    return make_vk_error(r, "vkCreateDevice on " + quote_text(objects->physical.name));
  }
  objects->owns_device = true;
  objects->calibrated_timestamps = calibrated;
  objects->presentation = options.presentation;
  objects->discrete_layout = options.discrete_layout;
  objects->wait_any = options.wait_any;
  objects->buffer_device_address = features12.bufferDeviceAddress == VK_TRUE;
  objects->texture_compression_bc = features.textureCompressionBC == VK_TRUE;
  objects->physical.limits.graphics = raster;
  if (synchronization2) {
    objects->pipeline_barrier2 = pipeline_barrier2(objects->device);
    objects->event_functions = event_functions(objects->device);
  }
  vulkan_device_objects::queue_objects compute;
  compute.family = chosen.queue_family;
  vkGetDeviceQueue(objects->device, compute.family, 0, &compute.queue);
  objects->queues.push_back(compute);
  if (chosen.separate_transfer_queue()) {
    // Untested on lavapipe (one queue): the path of GPUs with a copy engine
    // or a second compute queue.
    vulkan_device_objects::queue_objects transfer;
    transfer.family = chosen.transfer_family;
    vkGetDeviceQueue(objects->device, transfer.family, chosen.transfer_queue_index, &transfer.queue);
    objects->queues.push_back(transfer);
    objects->transfer_queue = 1;
  }
  if (chosen.separate_async_queue()) {
    // Untested on lavapipe (one queue): the path of GPUs with a compute
    // family beside the main one, or a further queue of it.
    vulkan_device_objects::queue_objects async;
    async.family = chosen.async_family;
    vkGetDeviceQueue(objects->device, async.family, chosen.async_queue_index, &async.queue);
    objects->async_queue = objects->queues.size();
    objects->queues.push_back(async);
  }
  return vulkan_device::start(std::move(objects));
}

result<std::unique_ptr<device>> adopt_vulkan_device(const vulkan_adopt_info& info) {
  const char* missing = info.instance == VK_NULL_HANDLE          ? "instance"
                        : info.physical_device == VK_NULL_HANDLE ? "physical_device"
                        : info.device == VK_NULL_HANDLE          ? "device"
                        : info.queue == VK_NULL_HANDLE           ? "queue"
                                                                 : nullptr;
  if (missing != nullptr)
    return make_error(errc::invalid_device_option, std::string("adopt_vulkan_device: ") + missing + " is null");
  auto physical = describe_physical_device(info.physical_device, info.queue_family);
  if (!physical) return physical.error();

  auto objects = std::make_unique<vulkan_device_objects>();
  objects->instance = vulkan_instance::borrow(info.instance);
  objects->physical = std::move(*physical);
  objects->device = info.device;
  objects->owns_device = false;
  // The engine's one queue runs both kinds.
  vulkan_device_objects::queue_objects engine_queue;
  engine_queue.queue = info.queue;
  engine_queue.family = info.queue_family;
  objects->queues.push_back(engine_queue);
  if (info.async_queue != VK_NULL_HANDLE) {
    if (info.async_queue == info.queue)
      return make_error(errc::invalid_device_option,
                        "adopt_vulkan_device: async_queue is the engine's queue (leave it null to share that queue)");
    std::uint32_t family_count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(info.physical_device, &family_count, nullptr);
    std::vector<VkQueueFamilyProperties> families(family_count);
    vkGetPhysicalDeviceQueueFamilyProperties(info.physical_device, &family_count, families.data());
    if (info.async_queue_family >= family_count ||
        (families[info.async_queue_family].queueFlags & VK_QUEUE_COMPUTE_BIT) == 0)
      return make_error(errc::invalid_device_option,
                        "adopt_vulkan_device: async_queue_family " + std::to_string(info.async_queue_family) +
                            " has no compute (the device has " + std::to_string(family_count) + " families)");
    vulkan_device_objects::queue_objects async;
    async.queue = info.async_queue;
    async.family = info.async_queue_family;
    objects->physical.async_family = info.async_queue_family;
    objects->physical.async_queue_index = 1;  // not the engine's queue: a queue of its own
    objects->physical.async_timestamp_valid_bits = families[info.async_queue_family].timestampValidBits;
    objects->async_queue = objects->queues.size();
    objects->queues.push_back(async);
  }
  objects->queue_mutex = info.queue_mutex;
  objects->calibrated_timestamps = info.calibrated_timestamps;
  objects->buffer_device_address = info.buffer_device_address;
  objects->texture_compression_bc = info.texture_compression_bc;
  objects->physical.limits.graphics = info.dynamic_rendering && objects->physical.graphics_family;
  if (info.synchronization2) {
    objects->pipeline_barrier2 = pipeline_barrier2(objects->device);
    objects->event_functions = event_functions(objects->device);
  }
  return vulkan_device::start(std::move(objects));
}

}  // namespace ferrum::gpu
