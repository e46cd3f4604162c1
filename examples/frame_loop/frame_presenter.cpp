// examples/frame_loop/frame_presenter.cpp — the window (GLFW), its Vulkan
// surface and swapchain, and the encoder that copies a frame into its
// swapchain image (frame_presenter.hpp).
#include "frame_presenter.hpp"

#include "ferrum/gpu/vulkan_device.hpp"

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>

#include <iostream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

namespace frame_loop {
namespace {

// GLFW's last error, as its error callback reported it (main thread only).
std::string glfw_error;

void record_glfw_error(int code, const char* text) {
  glfw_error = std::string(text != nullptr ? text : "unknown") + " (GLFW error " + std::to_string(code) + ")";
}

std::runtime_error glfw_failure(const std::string& what) {
  return std::runtime_error("--present: " + what + (glfw_error.empty() ? std::string() : ": " + glfw_error));
}

}  // namespace

glfw_session::glfw_session() {
  glfwSetErrorCallback(&record_glfw_error);
  if (glfwInit() != GLFW_TRUE) throw glfw_failure("GLFW cannot start (no display to open a window on?)");
  if (glfwVulkanSupported() != GLFW_TRUE) {
    glfwTerminate();
    throw glfw_failure("GLFW finds no Vulkan loader");
  }
}

glfw_session::~glfw_session() { glfwTerminate(); }

std::vector<std::string> glfw_session::instance_extensions() const {
  std::uint32_t count = 0;
  const char** names = glfwGetRequiredInstanceExtensions(&count);
  if (names == nullptr) return {};
  return {names, names + count};
}

frame_presenter::frame_presenter(const glfw_session&, ferrum::gpu::device& device, image_size size,
                                 std::uint32_t frames_in_flight)
    : size_(size) {
  const auto handles = ferrum::gpu::native_handles(device);
  if (!handles) throw std::runtime_error("--present needs a Vulkan device (--device vulkan)");
  instance_ = handles->instance;
  // Vulkan draws; the user does not resize it: its size is the frame's.
  glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
  glfwWindowHint(GLFW_RESIZABLE, GLFW_FALSE);
  window_ = glfwCreateWindow(static_cast<int>(size.width), static_cast<int>(size.height), title, nullptr, nullptr);
  if (window_ == nullptr) throw glfw_failure("cannot open a window");
  if (const VkResult made = glfwCreateWindowSurface(instance_, window_, nullptr, &surface_); made != VK_SUCCESS) {
    glfwDestroyWindow(window_);
    throw glfw_failure("cannot make the window's Vulkan surface (VkResult " + std::to_string(made) + ")");
  }
  try {
    swapchain_ = ferrum::gpu::swapchain::create(device, {.surface = surface_,
                                                         .width = size.width,
                                                         .height = size.height,
                                                         .frames_in_flight = frames_in_flight,
                                                         .vsync = true})
                     .value();
  } catch (...) {
    vkDestroySurfaceKHR(instance_, surface_, nullptr);
    glfwDestroyWindow(window_);
    throw;
  }
  glfwPollEvents();
}

frame_presenter::~frame_presenter() {
  // The swapchain waits for what its frames and presentations still use;
  // the surface goes after it.
  swapchain_.reset();
  vkDestroySurfaceKHR(instance_, surface_, nullptr);
  glfwDestroyWindow(window_);
}

channel_order frame_presenter::order() const noexcept {
  return swapchain_->order() == ferrum::gpu::channel_order::bgra ? channel_order::bgra : channel_order::rgba;
}

ferrum::image_format frame_presenter::format() const noexcept {
  return order() == channel_order::bgra ? ferrum::image_format::bgra8_unorm : ferrum::image_format::rgba8_unorm;
}

void frame_presenter::resize(image_size size) {
  size_ = size;
  glfwSetWindowSize(window_, static_cast<int>(size.width), static_cast<int>(size.height));
  glfwPollEvents();
  swapchain_->resize(size.width, size.height);
}

void frame_presenter::present(const ferrum::gpu::swapchain_image& image) {
  swapchain_->present(image).value();
  const auto now = std::chrono::steady_clock::now();
  if (presented_ != 0) intervals_ms_.push_back(std::chrono::duration<double, std::milli>(now - last_present_).count());
  last_present_ = now;
  ++presented_;
  glfwPollEvents();
}

bool frame_presenter::closed() const noexcept { return glfwWindowShouldClose(window_) == GLFW_TRUE; }

void frame_presenter::hold_until(const std::filesystem::path& file, std::chrono::seconds limit) const {
  // A moment for the last present to reach the X server.
  for (int i = 0; i < 10; ++i) glfwWaitEventsTimeout(0.02);
  std::cout << "ready for screenshot: window '" << title << "', " << size_.width << "x" << size_.height
            << "; waiting for " << file.string() << std::endl;
  const auto until = std::chrono::steady_clock::now() + limit;
  std::error_code ec;
  while (!std::filesystem::exists(file, ec)) {
    if (std::chrono::steady_clock::now() > until)
      throw std::runtime_error("--hold-until: " + file.string() + " did not appear within " +
                               std::to_string(limit.count()) + " s");
    glfwWaitEventsTimeout(0.05);
  }
}

}  // namespace frame_loop
