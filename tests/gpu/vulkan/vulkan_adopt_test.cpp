// Adopt mode: an engine's own instance, device and queue, used by ferrum and
// destroyed by the engine afterwards.
#include "ferrum/error.hpp"
#include "ferrum/gpu/builtin_kernels.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include "vulkan_test_support.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <mutex>
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
