// window_fixture.hpp — what the presentation tests open: GLFW (once per
// process), a window without a client API on the X server xvfb-run starts,
// its surface, a presentation-enabled Vulkan device with validation, and a
// swapchain on it; skipped without an X server or a Vulkan loader (failed
// under FERRUM_REQUIRE_VULKAN=1).
#pragma once

#include "ferrum/gpu/swapchain.hpp"

#include "vulkan/vulkan_test_support.hpp"

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>

#include <boost/asio/use_future.hpp>

#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>

namespace present_test {

using ferrum::gpu::swapchain;
using ferrum::gpu::swapchain_image;

// GLFW, initialized once for the process; false (skipped, or failed when
// Vulkan is required) without an X server or a Vulkan loader.
inline bool glfw_ready() {
  static const bool ready = [] {
    if (glfwInit() != GLFW_TRUE) return false;
    std::atexit([] { glfwTerminate(); });
    return glfwVulkanSupported() == GLFW_TRUE;
  }();
  if (!ready) {
    if (vulkan_test::vulkan_required()) FAIL("GLFW found no X server or no Vulkan loader (run under xvfb-run -a)");
    WARN("skipped: GLFW found no X server or no Vulkan loader; set FERRUM_REQUIRE_VULKAN=1 to fail instead");
  }
  return ready;
}

// A window, its surface and a presentation-enabled device with validation.
struct window_fixture {
  vulkan_test::session session;
  GLFWwindow* window = nullptr;
  VkSurfaceKHR surface = VK_NULL_HANDLE;
  std::unique_ptr<swapchain> chain;

  // False when the test must end (skipped or failed).
  [[nodiscard]] bool open(int width, int height, bool presentation = true) {
    if (!glfw_ready()) return false;
    ferrum::gpu::vulkan_device_options options;
    std::uint32_t count = 0;
    const char** names = glfwGetRequiredInstanceExtensions(&count);
    REQUIRE(names != nullptr);
    for (std::uint32_t i = 0; i < count; ++i) options.instance_extensions.emplace_back(names[i]);
    options.presentation = presentation;
    if (!session.open(options)) return false;
    glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
    glfwWindowHint(GLFW_RESIZABLE, GLFW_TRUE);
    window = glfwCreateWindow(width, height, "ferrum present test", nullptr, nullptr);
    REQUIRE(window != nullptr);
    const VkInstance instance = ferrum::gpu::native_handles(*session.device)->instance;
    REQUIRE(glfwCreateWindowSurface(instance, window, nullptr, &surface) == VK_SUCCESS);
    return true;
  }

  [[nodiscard]] ferrum::gpu::swapchain_options options(std::uint32_t frames = 2) const {
    ferrum::gpu::swapchain_options o;
    o.surface = surface;
    int w = 0, h = 0;
    glfwGetFramebufferSize(window, &w, &h);
    o.width = static_cast<std::uint32_t>(w);
    o.height = static_cast<std::uint32_t>(h);
    o.frames_in_flight = frames;
    return o;
  }

  // The swapchain first, then the surface, then the device (and its
  // instance), checking validation said nothing.
  void finish() {
    chain.reset();
    if (surface != VK_NULL_HANDLE)
      vkDestroySurfaceKHR(ferrum::gpu::native_handles(*session.device)->instance, surface, nullptr);
    surface = VK_NULL_HANDLE;
    session.finish();
    if (window != nullptr) glfwDestroyWindow(window);
    window = nullptr;
  }

  ~window_fixture() {
    if (window != nullptr) {
      chain.reset();
      if (surface != VK_NULL_HANDLE && session.device)
        vkDestroySurfaceKHR(ferrum::gpu::native_handles(*session.device)->instance, surface, nullptr);
      session.device.reset();
      glfwDestroyWindow(window);
    }
  }
};

// The next image of `chain`, acquired within 20 s.
inline swapchain_image acquire_now(swapchain& chain) {
  auto f = chain.async_acquire(boost::asio::use_future);
  REQUIRE(f.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  return f.get();
}

}  // namespace present_test
