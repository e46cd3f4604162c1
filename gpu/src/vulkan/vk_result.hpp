// vk_result.hpp — the one place where a VkResult becomes a ferrum error, and
// where a Vulkan version becomes text.
//
// Every Vulkan call of the device checks its VkResult and, on failure, returns
// make_vk_error(result, "vkCreateBuffer") (or a more specific message), so the
// mapping to ferrum::errc (errc_from_vk, declared in
// ferrum/gpu/vulkan_device.hpp) lives in vk_result.cpp alone.
//
//   if (VkResult r = vkCreateBuffer(device, &info, nullptr, &buffer); r != VK_SUCCESS)
//     return make_vk_error(r, "vkCreateBuffer");
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include <vulkan/vulkan_core.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace ferrum::gpu {

// The enumerator's name ("VK_ERROR_DEVICE_LOST"), or "VkResult(<n>)" for one
// this table does not know.
[[nodiscard]] std::string vk_result_name(VkResult result);

// The error for `result` returned by `what` (a call name, optionally with
// context): code errc_from_vk(result), detail "<what> returned <name>".
[[nodiscard]] error make_vk_error(VkResult result, std::string_view what);

// "1.3.239" for VK_MAKE_API_VERSION(0, 1, 3, 239).
[[nodiscard]] std::string vk_version_text(std::uint32_t version);

}  // namespace ferrum::gpu
