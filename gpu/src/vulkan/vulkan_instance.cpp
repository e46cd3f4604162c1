#include "vulkan/vulkan_instance.hpp"

#include "vulkan/vk_result.hpp"

#include <array>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace ferrum::gpu {
namespace {

constexpr const char* validation_layer = "VK_LAYER_KHRONOS_validation";

// The two-call enumeration idiom: a count, then the items; VK_INCOMPLETE means
// the set grew in between (a layer was installed), so ask again.
result<std::vector<VkLayerProperties>> instance_layers() {
  std::vector<VkLayerProperties> layers;
  for (;;) {
    std::uint32_t count = 0;
    if (VkResult r = vkEnumerateInstanceLayerProperties(&count, nullptr); r != VK_SUCCESS)
      return make_vk_error(r, "vkEnumerateInstanceLayerProperties");
    layers.resize(count);
    const VkResult r = vkEnumerateInstanceLayerProperties(&count, layers.data());
    if (r == VK_INCOMPLETE) continue;
    if (r != VK_SUCCESS) return make_vk_error(r, "vkEnumerateInstanceLayerProperties");
    layers.resize(count);
    return layers;
  }
}

result<std::vector<VkExtensionProperties>> instance_extensions(const char* layer) {
  std::vector<VkExtensionProperties> extensions;
  for (;;) {
    std::uint32_t count = 0;
    if (VkResult r = vkEnumerateInstanceExtensionProperties(layer, &count, nullptr); r != VK_SUCCESS)
      return make_vk_error(r, "vkEnumerateInstanceExtensionProperties");
    extensions.resize(count);
    const VkResult r = vkEnumerateInstanceExtensionProperties(layer, &count, extensions.data());
    if (r == VK_INCOMPLETE) continue;
    if (r != VK_SUCCESS) return make_vk_error(r, "vkEnumerateInstanceExtensionProperties");
    extensions.resize(count);
    return extensions;
  }
}

template <class Properties>
bool has_name(const std::vector<Properties>& items, const char* name) {
  for (const Properties& item : items) {
    if constexpr (requires { item.layerName; }) {
      if (std::strcmp(item.layerName, name) == 0) return true;
    } else {
      if (std::strcmp(item.extensionName, name) == 0) return true;
    }
  }
  return false;
}

}  // namespace

result<std::unique_ptr<vulkan_instance>> vulkan_instance::create(const vulkan_device_options& options) {
  // vkEnumerateInstanceVersion is Vulkan 1.1; a 1.0 loader would not export
  // it, but the loader we link against is newer than ferrum's minimum.
  std::uint32_t loader_version = 0;
  if (VkResult r = vkEnumerateInstanceVersion(&loader_version); r != VK_SUCCESS)
    return make_vk_error(r, "vkEnumerateInstanceVersion");
  if (loader_version < VK_API_VERSION_1_2)
    return make_error(errc::vulkan_unavailable,
                      "the Vulkan loader supports " + vk_version_text(loader_version) + "; ferrum needs 1.2");

  std::unique_ptr<vulkan_instance> self(new vulkan_instance);
  self->owned_ = true;
  self->sink_ = options.sink;
  self->sink_context_ = options.sink_context;

  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  const void* next = nullptr;

  // Synchronization validation is off by default in the layer; it is what
  // checks the barriers between dispatches, fills and copies.
  static constexpr std::array<VkValidationFeatureEnableEXT, 1> enabled_features{
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{};
  VkDebugUtilsMessengerCreateInfoEXT messenger_info{};
  if (options.validation) {
    auto available_layers = instance_layers();
    if (!available_layers) return available_layers.error();
    if (!has_name(*available_layers, validation_layer))
      return make_error(errc::vulkan_feature_missing, std::string(validation_layer) + " is not installed");
    // Both extensions are implemented by the validation layer itself, so they
    // are looked up among its extensions (debug_utils also by the loader).
    auto layer_extensions = instance_extensions(validation_layer);
    if (!layer_extensions) return layer_extensions.error();
    auto loader_extensions = instance_extensions(nullptr);
    if (!loader_extensions) return loader_extensions.error();
    const auto available = [&](const char* name) {
      return has_name(*layer_extensions, name) || has_name(*loader_extensions, name);
    };
    if (!available(VK_EXT_DEBUG_UTILS_EXTENSION_NAME))
      return make_error(errc::vulkan_feature_missing, VK_EXT_DEBUG_UTILS_EXTENSION_NAME " is not available");
    layers.push_back(validation_layer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);

    messenger_info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    messenger_info.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                                 VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                 VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    messenger_info.pfnUserCallback = &vulkan_instance::on_message;
    messenger_info.pUserData = self.get();
    // A messenger create info chained to VkInstanceCreateInfo reports what
    // happens inside vkCreateInstance and vkDestroyInstance, which the
    // messenger object (made from the instance) cannot see.
    next = &messenger_info;

    if (available(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME)) {
      extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
      features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
      features.pNext = next;
      features.enabledValidationFeatureCount = static_cast<std::uint32_t>(enabled_features.size());
      features.pEnabledValidationFeatures = enabled_features.data();
      next = &features;
    }
  }

  // The caller's extensions (a window system's surfaces), each offered by
  // the loader or an implicit layer.
  if (!options.instance_extensions.empty()) {
    auto loader_extensions = instance_extensions(nullptr);
    if (!loader_extensions) return loader_extensions.error();
    for (const std::string& name : options.instance_extensions) {
      if (!has_name(*loader_extensions, name.c_str()))
        return make_error(
            errc::vulkan_feature_missing,
            "instance extension " + name + " (vulkan_device_options::instance_extensions) is not offered");
      bool listed = false;
      for (const char* enabled : extensions) listed = listed || name == enabled;
      if (!listed) extensions.push_back(name.c_str());
    }
  }

  VkApplicationInfo application{};
  application.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  application.pApplicationName = "ferrum";
  application.pEngineName = "ferrum";
  // The highest version ferrum uses: instance-level use of anything newer
  // would be invalid even where the device supports it. 1.3 for dynamic
  // rendering (raster nodes' draws), where the loader has it.
  self->api_version_ = loader_version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2;
  application.apiVersion = self->api_version_;

  VkInstanceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  info.pNext = next;
  info.pApplicationInfo = &application;
  info.enabledLayerCount = static_cast<std::uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  // No ICD at all makes the loader return VK_ERROR_INCOMPATIBLE_DRIVER, which
  // maps to vulkan_unavailable.
  if (VkResult r = vkCreateInstance(&info, nullptr, &self->instance_); r != VK_SUCCESS) {
    self->instance_ = VK_NULL_HANDLE;
    return make_vk_error(r, "vkCreateInstance");
  }

  if (options.validation) {
    // Extension commands are not exported by the loader: fetch them.
    const auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(self->instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (create_messenger == nullptr)
      return make_error(errc::vulkan_feature_missing, "vkCreateDebugUtilsMessengerEXT is not available");
    messenger_info.pNext = nullptr;
    if (VkResult r = create_messenger(self->instance_, &messenger_info, nullptr, &self->messenger_); r != VK_SUCCESS) {
      self->messenger_ = VK_NULL_HANDLE;
      return make_vk_error(r, "vkCreateDebugUtilsMessengerEXT");
    }
  }
  return self;
}

std::unique_ptr<vulkan_instance> vulkan_instance::borrow(VkInstance instance) {
  std::unique_ptr<vulkan_instance> self(new vulkan_instance);
  self->instance_ = instance;
  return self;
}

vulkan_instance::~vulkan_instance() {
  if (!owned_ || instance_ == VK_NULL_HANDLE) return;
  if (messenger_ != VK_NULL_HANDLE) {
    const auto destroy_messenger = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy_messenger != nullptr) destroy_messenger(instance_, messenger_, nullptr);
  }
  vkDestroyInstance(instance_, nullptr);
}

VKAPI_ATTR VkBool32 VKAPI_CALL vulkan_instance::on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                           VkDebugUtilsMessageTypeFlagsEXT types,
                                                           const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                           void* user) noexcept {
  (void)types;
  const auto* self = static_cast<const vulkan_instance*>(user);
  const bool is_error = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0;
  const char* text = data != nullptr && data->pMessage != nullptr ? data->pMessage : "";
  if (self != nullptr && self->sink_ != nullptr) {
    self->sink_(self->sink_context_, vulkan_message{is_error, text});
  } else {
    std::fprintf(stderr, "ferrum: vulkan %s: %s\n", is_error ? "error" : "warning", text);
  }
  // VK_FALSE: the call that triggered the message goes on (VK_TRUE is
  // reserved for layer development).
  return VK_FALSE;
}

}  // namespace ferrum::gpu
