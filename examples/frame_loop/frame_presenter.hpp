// examples/frame_loop/frame_presenter.hpp — --present: the frames shown in a
// window. GLFW opens it (no client API: Vulkan draws), a Vulkan surface on
// it, and a ferrum::gpu::swapchain (ferrum/gpu/swapchain.hpp) at the frame
// size; each frame's wave imports an acquired swapchain image as the plan's
// image/present (frame_plan.hpp) and copies its frame into it, and the
// frame is presented once its wave completed (main.cpp).
//
//   frame_loop::glfw_session glfw;                       // before the device
//   options.instance_extensions = glfw.instance_extensions();
//   options.presentation = true;
//   frame_loop::frame_presenter presenter(glfw, *device, {256, 256}, 3);
//   ferrum::gpu::swapchain_image image = co_await presenter.swapchain().async_acquire(token);
//   // submit the wave (importing image.image as image/present, waiting on
//   // image.acquired, signalling image.presentable), then:
//   presenter.present(image);
//
// Nothing here runs without --present: GLFW is linked, but never started,
// so the headless path needs no display. GLFW's calls (all but the
// swapchain's) must come from the thread that made the glfw_session: the
// example's completions' thread, its main thread.
#pragma once

#include "frame_kernels.hpp"
#include "frame_renderer.hpp"

#include "ferrum/gpu/device.hpp"
#include "ferrum/gpu/swapchain.hpp"
#include "ferrum/image.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

struct GLFWwindow;

namespace frame_loop {

// GLFW, started (glfwInit) for this object's life. Throws std::runtime_error
// with GLFW's reason when it cannot start (no display: DISPLAY unset) or
// finds no Vulkan loader.
class glfw_session {
 public:
  glfw_session();
  glfw_session(const glfw_session&) = delete;
  glfw_session& operator=(const glfw_session&) = delete;
  ~glfw_session();

  // The instance extensions GLFW's window surfaces need
  // (glfwGetRequiredInstanceExtensions): vulkan_device_options::instance_extensions.
  // Empty when no Vulkan driver here makes window surfaces.
  [[nodiscard]] std::vector<std::string> instance_extensions() const;
};

class frame_presenter {
 public:
  // The window's title, by which the screenshot test finds it (xwininfo -name).
  static constexpr const char* title = "ferrum frame_loop";

  // Opens a window of `size` (not resizable by the user: its size is the
  // frame's) and makes its surface and a swapchain of `frames_in_flight`
  // acquisitions on `device`, which must be a Vulkan device made with
  // presentation on and `glfw`'s instance extensions. Throws
  // std::runtime_error saying what failed, ferrum::error_exception with the
  // swapchain's error.
  frame_presenter(const glfw_session& glfw, ferrum::gpu::device& device, image_size size,
                  std::uint32_t frames_in_flight);
  frame_presenter(const frame_presenter&) = delete;
  frame_presenter& operator=(const frame_presenter&) = delete;
  // The swapchain (once its frames are done), the surface, the window.
  ~frame_presenter();

  [[nodiscard]] ferrum::gpu::swapchain& swapchain() noexcept { return *swapchain_; }
  // The byte order the frames' last pass must write (the swapchain's images'),
  // and the images' format (a UNORM one: the swapchain takes no other).
  [[nodiscard]] channel_order order() const noexcept;
  [[nodiscard]] ferrum::image_format format() const noexcept;

  // --resize-at: the window becomes `size` and the swapchain's next
  // acquisition recreates it at that size. Call it when no image acquired
  // is still to be presented.
  void resize(image_size size);

  // Presents `image`, whose wave has been submitted, then polls the
  // window's events. Throws ferrum::error_exception with the swapchain's
  // error.
  void present(const ferrum::gpu::swapchain_image& image);

  // Whether the window was asked to close (its close button).
  [[nodiscard]] bool closed() const noexcept;

  // Keeps the window shown, its events polled, until `file` exists: prints
  // "ready for screenshot" (with the window's title and size) on stdout
  // first. Throws std::runtime_error when `limit` passed first.
  void hold_until(const std::filesystem::path& file, std::chrono::seconds limit) const;

  // Milliseconds between successive presents.
  [[nodiscard]] const std::vector<double>& present_intervals_ms() const noexcept { return intervals_ms_; }
  [[nodiscard]] std::uint64_t presented() const noexcept { return presented_; }

 private:
  GLFWwindow* window_ = nullptr;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkSurfaceKHR surface_ = VK_NULL_HANDLE;
  std::unique_ptr<ferrum::gpu::swapchain> swapchain_;
  image_size size_;
  std::uint64_t presented_ = 0;
  std::chrono::steady_clock::time_point last_present_{};
  std::vector<double> intervals_ms_;
};

}  // namespace frame_loop
