// Adopt mode: an engine's own instance, device and queue, used by ferrum and
// destroyed by the engine afterwards.
#include "ferrum/error.hpp"
#include "ferrum/gpu/builtin_kernels.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include "event_lists.hpp"
#include "vulkan_test_support.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

using namespace vulkan_test;

namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL record_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                              VkDebugUtilsMessageTypeFlagsEXT,
                                              const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  message_log::record(user, {(severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0,
                             data != nullptr && data->pMessage != nullptr ? data->pMessage : ""});
  return VK_FALSE;
}

// What an engine made: an instance with validation (its messages into `log`),
// a device with timeline semaphores and a compute queue.
struct engine {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  std::uint32_t queue_family = 0;
  std::mutex queue_mutex;

  engine() = default;
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;
  ~engine() {
    if (device != VK_NULL_HANDLE) vkDestroyDevice(device, nullptr);
    if (messenger != VK_NULL_HANDLE) {
      auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
      destroy(instance, messenger, nullptr);
    }
    if (instance != VK_NULL_HANDLE) vkDestroyInstance(instance, nullptr);
  }

  // False when the test must end (skipped or failed).
  bool start(message_log& log) {
    static constexpr std::array<VkValidationFeatureEnableEXT, 1> sync{
        VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkDebugUtilsMessengerCreateInfoEXT messenger_info{};
    messenger_info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    messenger_info.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                                 VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                 VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    messenger_info.pfnUserCallback = &record_message;
    messenger_info.pUserData = &log;
    VkValidationFeaturesEXT features{};
    features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
    features.pNext = &messenger_info;
    features.enabledValidationFeatureCount = static_cast<std::uint32_t>(sync.size());
    features.pEnabledValidationFeatures = sync.data();
    VkApplicationInfo application{};
    application.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    application.pApplicationName = "ferrum adopt test";
    application.apiVersion = VK_API_VERSION_1_2;
    const std::array<const char*, 1> layers{"VK_LAYER_KHRONOS_validation"};
    const std::array<const char*, 2> extensions{VK_EXT_DEBUG_UTILS_EXTENSION_NAME,
                                                VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
    VkInstanceCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    info.pNext = &features;
    info.pApplicationInfo = &application;
    info.enabledLayerCount = static_cast<std::uint32_t>(layers.size());
    info.ppEnabledLayerNames = layers.data();
    info.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
    info.ppEnabledExtensionNames = extensions.data();
    const VkResult created = vkCreateInstance(&info, nullptr, &instance);
    if (created != VK_SUCCESS) {
      instance = VK_NULL_HANDLE;
      return skip_or_fail(ferrum::make_error(ferrum::gpu::errc_from_vk(created), "the test's vkCreateInstance"));
    }
    auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
    REQUIRE(create_messenger != nullptr);
    messenger_info.pNext = nullptr;
    REQUIRE(create_messenger(instance, &messenger_info, nullptr, &messenger) == VK_SUCCESS);

    std::uint32_t count = 0;
    REQUIRE(vkEnumeratePhysicalDevices(instance, &count, nullptr) == VK_SUCCESS);
    std::vector<VkPhysicalDevice> devices(count);
    REQUIRE(vkEnumeratePhysicalDevices(instance, &count, devices.data()) == VK_SUCCESS);
    for (VkPhysicalDevice candidate : devices) {
      VkPhysicalDeviceProperties properties{};
      vkGetPhysicalDeviceProperties(candidate, &properties);
      if (properties.apiVersion < VK_API_VERSION_1_2) continue;
      std::uint32_t families = 0;
      vkGetPhysicalDeviceQueueFamilyProperties(candidate, &families, nullptr);
      std::vector<VkQueueFamilyProperties> family_properties(families);
      vkGetPhysicalDeviceQueueFamilyProperties(candidate, &families, family_properties.data());
      for (std::uint32_t f = 0; f < families; ++f) {
        if ((family_properties[f].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0) {
          physical_device = candidate;
          queue_family = f;
          break;
        }
      }
      if (physical_device != VK_NULL_HANDLE) break;
    }
    if (physical_device == VK_NULL_HANDLE)
      return skip_or_fail(ferrum::make_error(ferrum::errc::vulkan_unavailable, "no Vulkan 1.2 device with compute"));

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info{};
    queue_info.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    queue_info.queueFamilyIndex = queue_family;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkPhysicalDeviceVulkan12Features features12{};
    features12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    features12.timelineSemaphore = VK_TRUE;
    VkDeviceCreateInfo device_info{};
    device_info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    device_info.pNext = &features12;
    device_info.queueCreateInfoCount = 1;
    device_info.pQueueCreateInfos = &queue_info;
    REQUIRE(vkCreateDevice(physical_device, &device_info, nullptr, &device) == VK_SUCCESS);
    vkGetDeviceQueue(device, queue_family, 0, &queue);
    return true;
  }

  [[nodiscard]] ferrum::gpu::vulkan_adopt_info adopt_info() {
    return {instance, physical_device, device, queue, queue_family, &queue_mutex};
  }
};

}  // namespace

TEST_CASE("vulkan: an adopted engine device runs a kernel and leaves the engine's objects alive", "[vulkan]") {
  message_log log;
  {
    engine e;
    if (!e.start(log)) return;
    {
      auto device = require(ferrum::gpu::adopt_vulkan_device(e.adopt_info()));
      CHECK(device->kind() == "vulkan");
      auto arena = require(device->create_arena(4096));
      auto writer = require(device->create_kernel(ferrum::gpu::builtin::write_pattern()));
      auto list = require(device->create_command_list());
      const std::array<std::uint32_t, 1> push{21};
      const std::uint64_t value = submit(*device, *list, [&](ferrum::gpu::command_list& l) {
        require(l.dispatch(*writer, arena->range(1024, 2048), {}, push));
      });
      require_reached(device->queue().timeline(), value);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < 1024; ++i) {
        const std::uint32_t expected =
            i >= 256 && i < 768 ? ferrum::gpu::builtin::pattern_word(21, static_cast<std::uint32_t>(i - 256)) : 0u;
        wrong += word_at(*arena, i) != expected ? 1 : 0;
      }
      CHECK(wrong == 0);
      // The engine sees its own handles, and ferrum's timeline semaphore at
      // the value ferrum reached, e.g. for its own submissions to wait on.
      const auto native = ferrum::gpu::native_handles(*device);
      REQUIRE(native.has_value());
      CHECK(native->device == e.device);
      CHECK(native->queue == e.queue);
      // The engine's one queue runs both kinds of work.
      CHECK(device->queue_count() == 1);
      CHECK(&device->queue(ferrum::queue_kind::transfer) == &device->queue());
      CHECK(native->transfer_queue == e.queue);
      CHECK(native->transfer_timeline == native->timeline);
      CHECK(native->instance == e.adopt_info().instance);
      std::uint64_t counter = 0;
      CHECK(vkGetSemaphoreCounterValue(e.device, native->timeline, &counter) == VK_SUCCESS);
      CHECK(counter >= value);
      list.reset();
      writer.reset();
      arena.reset();
    }
    // ferrum is gone; the engine's device and queue still work.
    {
      const std::lock_guard lock(e.queue_mutex);
      CHECK(vkQueueWaitIdle(e.queue) == VK_SUCCESS);
    }
    CHECK(vkDeviceWaitIdle(e.device) == VK_SUCCESS);
  }
  INFO(log.text());
  CHECK(log.empty());
}

TEST_CASE("vulkan: adopting a queue family without compute gives invalid_device_option", "[vulkan]") {
  message_log log;
  {
    engine e;
    if (!e.start(log)) return;
    ferrum::gpu::vulkan_adopt_info info = e.adopt_info();
    info.queue_family = 1000;
    auto device = ferrum::gpu::adopt_vulkan_device(info);
    REQUIRE_FALSE(device.has_value());
    CHECK(device.error() == ferrum::errc::invalid_device_option);
  }
  INFO(log.text());
  CHECK(log.empty());
}

TEST_CASE("vulkan: an adopted async queue that is the engine's queue, or of no compute family, is refused",
          "[vulkan]") {
  message_log log;
  {
    engine e;
    if (!e.start(log)) return;
    ferrum::gpu::vulkan_adopt_info same = e.adopt_info();
    same.async_queue = same.queue;
    auto refused = ferrum::gpu::adopt_vulkan_device(same);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error() == ferrum::errc::invalid_device_option);
    CHECK_THAT(refused.error().what(), Catch::Contains("async_queue is the engine's queue"));
    ferrum::gpu::vulkan_adopt_info no_family = e.adopt_info();
    // Any handle other than the engine's queue: refused for its family
    // before it is used.
    no_family.async_queue = reinterpret_cast<VkQueue>(std::uintptr_t{1});
    no_family.async_queue_family = 1000;
    refused = ferrum::gpu::adopt_vulkan_device(no_family);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error() == ferrum::errc::invalid_device_option);
    CHECK_THAT(refused.error().what(), Catch::Contains("async_queue_family 1000 has no compute"));
    // Without one, async compute runs on the engine's queue.
    auto device = require(ferrum::gpu::adopt_vulkan_device(e.adopt_info()));
    CHECK(&device->queue(ferrum::queue_kind::async_compute) == &device->queue());
    CHECK(ferrum::gpu::native_handles(*device)->async_queue == e.adopt_info().queue);
  }
  INFO(log.text());
  CHECK(log.empty());
}

namespace {

// The engine's own work on its queue: a host-visible buffer it fills with a
// value per submission (vkCmdFillBuffer), made visible to the host, and a
// fence it waits for; every submission takes the engine's queue lock.
struct engine_filler {
  engine& e;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  std::uint32_t* words = nullptr;
  static constexpr VkDeviceSize bytes = 4096;

  explicit engine_filler(engine& owner) : e(owner) {
    VkBufferCreateInfo buffer_info{};
    buffer_info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    buffer_info.size = bytes;
    buffer_info.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    REQUIRE(vkCreateBuffer(e.device, &buffer_info, nullptr, &buffer) == VK_SUCCESS);
    VkMemoryRequirements needs{};
    vkGetBufferMemoryRequirements(e.device, buffer, &needs);
    VkPhysicalDeviceMemoryProperties properties{};
    vkGetPhysicalDeviceMemoryProperties(e.physical_device, &properties);
    constexpr VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    std::uint32_t type = properties.memoryTypeCount;
    for (std::uint32_t t = 0; t < properties.memoryTypeCount && type == properties.memoryTypeCount; ++t)
      if ((needs.memoryTypeBits & (1u << t)) != 0 && (properties.memoryTypes[t].propertyFlags & host) == host) type = t;
    REQUIRE(type < properties.memoryTypeCount);
    VkMemoryAllocateInfo allocate{};
    allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    allocate.allocationSize = needs.size;
    allocate.memoryTypeIndex = type;
    REQUIRE(vkAllocateMemory(e.device, &allocate, nullptr, &memory) == VK_SUCCESS);
    REQUIRE(vkBindBufferMemory(e.device, buffer, memory, 0) == VK_SUCCESS);
    void* mapped = nullptr;
    REQUIRE(vkMapMemory(e.device, memory, 0, bytes, 0, &mapped) == VK_SUCCESS);
    words = static_cast<std::uint32_t*>(mapped);
    VkCommandPoolCreateInfo pool_info{};
    pool_info.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool_info.queueFamilyIndex = e.queue_family;
    REQUIRE(vkCreateCommandPool(e.device, &pool_info, nullptr, &pool) == VK_SUCCESS);
    VkCommandBufferAllocateInfo command_info{};
    command_info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    command_info.commandPool = pool;
    command_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    command_info.commandBufferCount = 1;
    REQUIRE(vkAllocateCommandBuffers(e.device, &command_info, &commands) == VK_SUCCESS);
    VkFenceCreateInfo fence_info{};
    fence_info.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    REQUIRE(vkCreateFence(e.device, &fence_info, nullptr, &fence) == VK_SUCCESS);
  }
  engine_filler(const engine_filler&) = delete;
  engine_filler& operator=(const engine_filler&) = delete;
  ~engine_filler() {
    vkDestroyFence(e.device, fence, nullptr);
    vkDestroyCommandPool(e.device, pool, nullptr);
    vkDestroyBuffer(e.device, buffer, nullptr);
    vkFreeMemory(e.device, memory, nullptr);
  }

  // Fills the buffer with `value` and waits for it; false if a call failed.
  // `contended` counts the submissions that found ferrum holding the lock.
  bool fill(std::uint32_t value, std::atomic<int>& contended) {
    if (vkResetCommandBuffer(commands, 0) != VK_SUCCESS) return false;
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    if (vkBeginCommandBuffer(commands, &begin) != VK_SUCCESS) return false;
    vkCmdFillBuffer(commands, buffer, 0, bytes, value);
    VkMemoryBarrier to_host{};
    to_host.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0,
                         nullptr, 0, nullptr);
    if (vkEndCommandBuffer(commands) != VK_SUCCESS) return false;
    VkSubmitInfo submit_info{};
    submit_info.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit_info.commandBufferCount = 1;
    submit_info.pCommandBuffers = &commands;
    {
      std::unique_lock lock(e.queue_mutex, std::try_to_lock);
      if (!lock.owns_lock()) {
        ++contended;
        lock.lock();
      }
      if (vkQueueSubmit(e.queue, 1, &submit_info, fence) != VK_SUCCESS) return false;
    }
    if (vkWaitForFences(e.device, 1, &fence, VK_TRUE, 5'000'000'000) != VK_SUCCESS) return false;
    return vkResetFences(e.device, 1, &fence) == VK_SUCCESS;
  }
};

}  // namespace

TEST_CASE("vulkan: the engine submits to the shared queue under its lock while ferrum submits, both sides' data right",
          "[vulkan]") {
  message_log log;
  {
    engine e;
    if (!e.start(log)) return;
    auto device = require(ferrum::gpu::adopt_vulkan_device(e.adopt_info()));
    auto arena = require(device->create_arena(4096));
    auto writer = require(device->create_kernel(ferrum::gpu::builtin::write_pattern()));
    auto list = require(device->create_command_list());
    // The engine's thread: its own submissions, in a loop, each checked.
    std::atomic<bool> stop{false};
    std::atomic<int> contended{0};
    int engine_fills = 0;
    std::size_t engine_wrong = 0;
    bool engine_failed = false;
    std::thread engine_thread([&] {
      engine_filler filler(e);
      for (std::uint32_t k = 1; !stop.load(); ++k) {
        if (!filler.fill(0xe0000000u + k, contended)) {
          engine_failed = true;
          return;
        }
        for (std::size_t i = 0; i < engine_filler::bytes / 4; ++i) engine_wrong += filler.words[i] != 0xe0000000u + k;
        ++engine_fills;
      }
    });
    // ferrum's side: dispatches through the same queue, each checked, until
    // the engine has met ferrum's hold on the lock (bounded in time).
    std::size_t ferrum_wrong = 0;
    int ferrum_submissions = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (std::uint32_t push_value = 1;
         ferrum_submissions < 50 || (contended.load() == 0 && std::chrono::steady_clock::now() < deadline);
         ++push_value) {
      const std::array<std::uint32_t, 1> push{push_value};
      const std::uint64_t value = submit(*device, *list, [&](ferrum::gpu::command_list& l) {
        require(l.dispatch(*writer, arena->range(0, 4096), {}, push));
      });
      require_reached(device->queue().timeline(), value);
      for (std::size_t i = 0; i < 1024; ++i)
        ferrum_wrong +=
            word_at(*arena, i) != ferrum::gpu::builtin::pattern_word(push_value, static_cast<std::uint32_t>(i));
      ++ferrum_submissions;
      if (engine_failed) break;
    }
    stop = true;
    engine_thread.join();
    INFO(ferrum_submissions << " ferrum submissions, " << engine_fills << " engine fills, " << contended.load()
                            << " engine submissions found the lock held");
    CHECK_FALSE(engine_failed);
    CHECK(engine_fills > 0);
    CHECK(contended.load() > 0);
    CHECK(ferrum_wrong == 0);
    CHECK(engine_wrong == 0);
    list.reset();
    writer.reset();
    arena.reset();
  }
  INFO(log.text());
  CHECK(log.empty());
}

TEST_CASE("vulkan: an adopted device without synchronization2 records precise barriers with vkCmdPipelineBarrier",
          "[vulkan][barriers]") {
  // The engine enables no synchronization2 (vulkan_adopt_info leaves it
  // off): a list's barriers between its commands and a scoped opening keep
  // validation silent and the data right; an opening without the copy's
  // transfer stage is reported.
  namespace stages = ferrum::stages;
  namespace accesses = ferrum::accesses;
  for (const bool weak : {false, true}) {
    INFO((weak ? "after-scope without the copy's transfer stage" : "the right scope"));
    message_log log;
    {
      engine e;
      if (!e.start(log)) return;
      auto device = require(ferrum::gpu::adopt_vulkan_device(e.adopt_info()));
      auto a = require(device->create_arena(4096));
      auto affine = require(device->create_kernel(ferrum::gpu::builtin::affine()));
      auto produce = require(device->create_command_list());
      auto consume = require(device->create_command_list());
      const std::array granted{a->whole()};
      produce->grant(granted);
      consume->grant(granted);
      require(produce->begin(ferrum::gpu::list_opening::by_hazards));
      require(produce->fill(a->range(0, 1024), 3u));
      require(produce->dispatch(*affine, a->range(0, 1024), {}, std::array<std::uint32_t, 2>{2, 1}));
      require(produce->end());
      const ferrum::sync_scope copy_stage{weak ? stages::compute_shader : stages::transfer, accesses::transfer_read};
      require(consume->begin(ferrum::barrier_scope{{stages::compute_shader, accesses::storage_write}, copy_stage}));
      require(consume->copy(a->range(0, 1024), a->range(2048, 1024)));
      require(consume->end());
      ferrum::gpu::command_list* const lists[] = {produce.get(), consume.get()};
      require_reached(device->queue().timeline(), require(device->queue().submit_next(lists)));
      CHECK(word_at(*a, 512) == 7u);
    }
    INFO(log.text());
    CHECK((log.text().find("SYNC-HAZARD-READ-AFTER-WRITE") != std::string::npos) == weak);
    if (!weak) CHECK(log.empty());
  }
}

TEST_CASE("vulkan: an adopted device without synchronization2 records events with vkCmdSetEvent and vkCmdWaitEvents",
          "[vulkan][barriers][split]") {
  for (const bool weak : {false, true}) {
    INFO((weak ? "a wait without the copy's transfer stage" : "the right scope"));
    message_log log;
    {
      engine e;
      if (!e.start(log)) return;
      auto device = require(ferrum::gpu::adopt_vulkan_device(e.adopt_info()));
      CHECK(vulkan_test::run_event_lists(*device, weak) == 7u);
    }
    INFO(log.text());
    CHECK((log.text().find("SYNC-HAZARD-READ-AFTER-WRITE") != std::string::npos) == weak);
    if (!weak) CHECK(log.empty());
  }
}
