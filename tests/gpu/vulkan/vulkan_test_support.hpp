// Helpers for tests that run on the Vulkan device: a device with validation
// on whose messages are recorded (every test checks that none came), skipping
// where there is no Vulkan driver, and waiting with a time limit. The layers'
// synchronization validation checks hazards between command buffers and
// submissions too — between a wave's nodes — which Debian 12's layers do
// only where VK_LAYER_ENABLES asks (cmake/ferrum_sanitizers.cmake sets it for
// every test): a session fails without it.
//
//   vulkan_test::session s;
//   if (!s.open()) return;          // skipped (no driver) or failed
//   ... use *s.device ...
//   s.finish();                      // destroys the device, checks no message
#pragma once

#include "gpu_test_support.hpp"

#include "ferrum/gpu/async_wait.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vulkan_test {

// Validation messages, recorded from any thread.
class message_log {
 public:
  // A vulkan_message_sink; `context` is the log.
  static void record(void* context, const ferrum::gpu::vulkan_message& message) noexcept {
    auto* log = static_cast<message_log*>(context);
    if (layer_fault(message.text)) return;
    try {
      const std::lock_guard lock(log->mutex_);
      log->messages_.push_back(std::string(message.error ? "error: " : "warning: ") + std::string(message.text));
    } catch (...) {
      // Out of memory while recording: counted, so the test still fails.
      log->lost_.store(true);
    }
  }

  [[nodiscard]] bool empty() const {
    const std::lock_guard lock(mutex_);
    return messages_.empty() && !lost_.load();
  }

  [[nodiscard]] std::string text() const {
    const std::lock_guard lock(mutex_);
    std::string all;
    for (const std::string& m : messages_) all += m + "\n";
    return all;
  }

 private:
  // A fault inside the validation layers themselves, not a report about
  // ferrum's use of Vulkan, so it is left out of the log. The only entry:
  // Debian 12's layers (1.3.239) time out in their own timeline-semaphore
  // state tracker when a host signal races a host wait (the layer's message
  // says "This is most likely a validation bug"; KhronosGroup/
  // Vulkan-ValidationLayers#8461, fixed by #8519 in 2024). Reproduced here
  // under load: `ctest --preset asan -R "vulkan semaphores" --repeat
  // until-fail:25` with a busy core failed within 25 runs, each after the
  // layer's 10 s wait.
  [[nodiscard]] static bool layer_fault(std::string_view text) noexcept {
    return text.find("UNASSIGNED-VkSemaphore-state-timeout") != std::string_view::npos;
  }

  mutable std::mutex mutex_;
  std::vector<std::string> messages_;
  std::atomic<bool> lost_{false};
};

// The layers' setting that checks hazards at submission, between command
// buffers and submissions.
inline constexpr std::string_view submit_time_check = "VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT";

// Whether VK_LAYER_ENABLES asks the layers for it.
inline bool submit_time_validation() {
  const char* value = std::getenv("VK_LAYER_ENABLES");
  return value != nullptr && std::string_view(value).find(submit_time_check) != std::string_view::npos;
}

// Whether a validation log reports what a missing barrier leaves: a hazard
// (synchronization validation), or an image in another layout than a
// command needs (the layout change the barrier made).
inline bool reports_missing_barrier(std::string_view log) {
  return log.find("SYNC-HAZARD-") != std::string_view::npos ||
         log.find("UNASSIGNED-CoreValidation-DrawState-InvalidImageLayout") != std::string_view::npos;
}

// Whether the environment demands a Vulkan device (CI sets FERRUM_REQUIRE_VULKAN=1).
inline bool vulkan_required() {
  const char* value = std::getenv("FERRUM_REQUIRE_VULKAN");
  return value != nullptr && std::string_view(value) == "1";
}

// For a failed device creation: a missing driver skips the test (with a
// warning) unless Vulkan is required; anything else fails it. Returns false.
inline bool skip_or_fail(const ferrum::error& e) {
  if (e == ferrum::errc::vulkan_unavailable && !vulkan_required()) {
    WARN("skipped: no usable Vulkan driver (" << e.what() << "); set FERRUM_REQUIRE_VULKAN=1 to fail instead");
    return false;
  }
  FAIL("creating the Vulkan device failed: " << e.what());
  return false;
}

inline ferrum::gpu::vulkan_device_options validating(message_log& log) {
  ferrum::gpu::vulkan_device_options options;
  options.validation = true;
  options.sink = &message_log::record;
  options.sink_context = &log;
  return options;
}

// A Vulkan device with validation on and the log of its messages.
struct session {
  message_log log;
  std::unique_ptr<ferrum::gpu::device> device;

  // Creates the device; false when the test must end (skipped or failed).
  [[nodiscard]] bool open() { return open(ferrum::gpu::vulkan_device_options{}); }

  // The same with `options`, validation added.
  [[nodiscard]] bool open(ferrum::gpu::vulkan_device_options options) {
    const ferrum::gpu::vulkan_device_options checked = validating(log);
    options.validation = checked.validation;
    options.sink = checked.sink;
    options.sink_context = checked.sink_context;
    auto created = ferrum::gpu::create_vulkan_device(options);
    if (!created) return skip_or_fail(created.error());
    if (!submit_time_validation())
      FAIL(
          "the validation layers would check hazards within each command buffer only, not between a wave's "
          "nodes: run under ctest, or set VK_LAYER_ENABLES="
          << submit_time_check);
    device = std::move(*created);
    return true;
  }

  // The same with discrete_layout as `discrete` says: the discrete GPU's
  // memory layout forced on any device, or the device's own.
  [[nodiscard]] bool open_layout(bool discrete) {
    ferrum::gpu::vulkan_device_options options;
    options.discrete_layout = discrete;
    return open(options);
  }

  // Destroys the device and returns what validation reported, for a test
  // that expects a report.
  [[nodiscard]] std::string finish_reported() {
    device.reset();
    return log.text();
  }

  // Destroys the device, then checks that validation reported nothing.
  void finish() {
    device.reset();
    INFO(log.text());
    CHECK(log.empty());
  }
};

using test::require;
using test::require_reached;
using test::resubmit;
using test::set_word;
using test::submit;
using test::wait_for;
using test::word_at;

}  // namespace vulkan_test
