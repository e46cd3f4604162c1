#include "vulkan/vk_result.hpp"

#include <string>

namespace ferrum::gpu {

errc errc_from_vk(VkResult result) noexcept {
  // Positive results (VK_TIMEOUT, VK_NOT_READY, VK_INCOMPLETE, ...) are
  // successful completion codes in Vulkan; callers that care test for them.
  if (result >= 0) return errc::ok;
  switch (result) {
    case VK_ERROR_DEVICE_LOST:
      return errc::device_lost;
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    // Mapping fails when the host has no address space left for the range.
    case VK_ERROR_MEMORY_MAP_FAILED:
      return errc::out_of_host_memory;
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    // Descriptor pools are device objects; their exhaustion and fragmentation
    // are out-of-memory conditions of the device (the device grows its pools,
    // so these surface only when a fresh pool cannot satisfy a request).
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_FRAGMENTED_POOL:
    case VK_ERROR_FRAGMENTATION:
      return errc::out_of_device_memory;
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_INITIALIZATION_FAILED:
      return errc::vulkan_unavailable;
    case VK_ERROR_FEATURE_NOT_PRESENT:
    case VK_ERROR_EXTENSION_NOT_PRESENT:
      return errc::vulkan_feature_missing;
    default:
      return errc::vulkan_error;
  }
}

std::string vk_result_name(VkResult result) {
  switch (result) {
#define FERRUM_VK_RESULT_NAME(name) \
  case name:                        \
    return #name;
    FERRUM_VK_RESULT_NAME(VK_SUCCESS)
    FERRUM_VK_RESULT_NAME(VK_NOT_READY)
    FERRUM_VK_RESULT_NAME(VK_TIMEOUT)
    FERRUM_VK_RESULT_NAME(VK_EVENT_SET)
    FERRUM_VK_RESULT_NAME(VK_EVENT_RESET)
    FERRUM_VK_RESULT_NAME(VK_INCOMPLETE)
    FERRUM_VK_RESULT_NAME(VK_ERROR_OUT_OF_HOST_MEMORY)
    FERRUM_VK_RESULT_NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    FERRUM_VK_RESULT_NAME(VK_ERROR_INITIALIZATION_FAILED)
    FERRUM_VK_RESULT_NAME(VK_ERROR_DEVICE_LOST)
    FERRUM_VK_RESULT_NAME(VK_ERROR_MEMORY_MAP_FAILED)
    FERRUM_VK_RESULT_NAME(VK_ERROR_LAYER_NOT_PRESENT)
    FERRUM_VK_RESULT_NAME(VK_ERROR_EXTENSION_NOT_PRESENT)
    FERRUM_VK_RESULT_NAME(VK_ERROR_FEATURE_NOT_PRESENT)
    FERRUM_VK_RESULT_NAME(VK_ERROR_INCOMPATIBLE_DRIVER)
    FERRUM_VK_RESULT_NAME(VK_ERROR_TOO_MANY_OBJECTS)
    FERRUM_VK_RESULT_NAME(VK_ERROR_FORMAT_NOT_SUPPORTED)
    FERRUM_VK_RESULT_NAME(VK_ERROR_FRAGMENTED_POOL)
    FERRUM_VK_RESULT_NAME(VK_ERROR_UNKNOWN)
    FERRUM_VK_RESULT_NAME(VK_ERROR_OUT_OF_POOL_MEMORY)
    FERRUM_VK_RESULT_NAME(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    FERRUM_VK_RESULT_NAME(VK_ERROR_FRAGMENTATION)
    FERRUM_VK_RESULT_NAME(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    FERRUM_VK_RESULT_NAME(VK_ERROR_VALIDATION_FAILED_EXT)
    FERRUM_VK_RESULT_NAME(VK_ERROR_INVALID_SHADER_NV)
#undef FERRUM_VK_RESULT_NAME
    default:
      return "VkResult(" + std::to_string(static_cast<int>(result)) + ")";
  }
}

error make_vk_error(VkResult result, std::string_view what) {
  errc code = errc_from_vk(result);
  // A caller only builds an error for a failure; a success code reaching here
  // (a VK_TIMEOUT the caller treats as failure) is still reported as one.
  if (code == errc::ok) code = errc::vulkan_error;
  return make_error(code, std::string(what) + " returned " + vk_result_name(result));
}

std::string vk_version_text(std::uint32_t version) {
  return std::to_string(VK_API_VERSION_MAJOR(version)) + "." + std::to_string(VK_API_VERSION_MINOR(version)) + "." +
         std::to_string(VK_API_VERSION_PATCH(version));
}

}  // namespace ferrum::gpu
