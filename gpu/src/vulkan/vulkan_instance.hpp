// vulkan_instance.hpp — the VkInstance of a Vulkan device: a headless one that
// ferrum creates (optionally with the validation layer and a debug messenger),
// or an engine's that ferrum only uses.
//
//   auto instance = vulkan_instance::create(options);   // owns VkInstance
//   auto borrowed = vulkan_instance::borrow(engine_instance);  // never destroys it
//   vkEnumeratePhysicalDevices((*instance)->handle(), ...);
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include <vulkan/vulkan_core.h>

#include <memory>

namespace ferrum::gpu {

class vulkan_instance {
 public:
  // Creates an instance for Vulkan 1.2 with options.instance_extensions (a
  // window system's, else none). With options.validation, enables VK_LAYER_KHRONOS_validation with
  // synchronization validation and forwards warnings and errors to
  // options.sink (stderr without one). Errors: vulkan_unavailable (no driver,
  // a loader below 1.2), vulkan_feature_missing (validation asked for but not
  // installed, an instance extension not offered), out_of_*_memory, vulkan_error.
  [[nodiscard]] static result<std::unique_ptr<vulkan_instance>> create(const vulkan_device_options& options);

  // Uses an engine's instance without owning it.
  [[nodiscard]] static std::unique_ptr<vulkan_instance> borrow(VkInstance instance);

  vulkan_instance(const vulkan_instance&) = delete;
  vulkan_instance& operator=(const vulkan_instance&) = delete;
  // Destroys the messenger and the instance when ferrum created them; every
  // object made from the instance must be gone.
  ~vulkan_instance();

  [[nodiscard]] VkInstance handle() const noexcept { return instance_; }
  [[nodiscard]] bool owned() const noexcept { return owned_; }
  // The Vulkan version the instance was made for (VkApplicationInfo):
  // 1.3 where the loader has it, else 1.2; 0 for a borrowed one.
  [[nodiscard]] std::uint32_t api_version() const noexcept { return api_version_; }

 private:
  vulkan_instance() = default;

  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT types,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                   void* user) noexcept;

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  bool owned_ = false;
  std::uint32_t api_version_ = 0;
  vulkan_message_sink sink_ = nullptr;
  void* sink_context_ = nullptr;
};

}  // namespace ferrum::gpu
