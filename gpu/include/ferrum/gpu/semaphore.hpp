// ferrum/gpu/semaphore.hpp — semaphores that are not a queue's own timeline:
// an engine's binary or timeline semaphores, a swapchain's, which a
// submission waits on before its commands and signals after them
// (queue::submit's `external`).
//
//   auto ready = device.create_semaphore(ferrum::gpu::semaphore_kind::timeline).value();
//   const ferrum::gpu::semaphore_op wait[] = {{ready.get(), 5, ferrum::gpu::sync_stage::compute}};
//   queue.submit_next(std::array{&list}, {}, {.waits = wait}).value();
//   ready->signal_from_host(5).value();  // the engine's step 5 is done: the list runs
//
// A *binary* semaphore is signalled once and its signal consumed by one
// wait, in submission order, as Vulkan's: every wait needs a signal
// submitted (or, on the null device, made from the host) before it can end.
// A *timeline* semaphore's value only grows; a wait ends once it reached the
// value, a signal sets it.
//
// Made on the cold path by the device (device::create_semaphore), or, on
// Vulkan, wrapping an engine's VkSemaphore (import_vulkan_semaphore). Destroy
// a semaphore only once no submission waiting on or signalling it can still
// run, and before its device.
//
// Thread safety: every member may be called from any thread.
#pragma once

#include "ferrum/error.hpp"

#include <chrono>
#include <cstdint>
#include <span>
#include <string_view>

namespace ferrum::gpu {

class device;

enum class semaphore_kind : std::uint8_t { binary, timeline };
[[nodiscard]] std::string_view to_string(semaphore_kind kind) noexcept;

// The commands of a submission that a wait holds back until the semaphore
// is signalled (Vulkan's wait stage mask): `all` of them, or only those of a
// stage — a swapchain image's wait need hold back only the copy into it, or
// the drawing into it (`color_attachment_output`, for a wait on the compute
// queue of a device with graphics: device_limits::graphics).
// A signal always comes after every command of its submission.
enum class sync_stage : std::uint8_t { all, compute, transfer, color_attachment_output };
[[nodiscard]] std::string_view to_string(sync_stage stage) noexcept;

class semaphore {
 public:
  semaphore(const semaphore&) = delete;
  semaphore& operator=(const semaphore&) = delete;
  virtual ~semaphore() = default;

  [[nodiscard]] semaphore_kind kind() const noexcept { return kind_; }
  [[nodiscard]] const gpu::device& device() const noexcept { return *device_; }
  // The device's handle (a VkSemaphore on Vulkan, 0 on the null device).
  [[nodiscard]] std::uint64_t native_handle() const noexcept { return native_handle_; }

  // --- the host's side -------------------------------------------------------

  // Signals from the host: a timeline semaphore's value becomes `value`
  // (above the current one); a binary semaphore (value 0) is signalled once
  // more, for the null device only (Vulkan has no host signal of binary
  // semaphores). Errors: invalid_semaphore_op (a timeline value not above
  // the current one, a binary value other than 0), unsupported_command (a
  // binary semaphore on Vulkan), device_lost, vulkan_error.
  [[nodiscard]] result<void> signal_from_host(std::uint64_t value);

  // A timeline semaphore's current value; for a binary one of the null
  // device, the signals not consumed by a wait yet. Errors:
  // unsupported_command (a binary semaphore on Vulkan), device_lost,
  // vulkan_error.
  [[nodiscard]] result<std::uint64_t> value() const;

  // Blocks until value() reaches `value` (true) or `timeout` passes (false).
  // Errors: as value().
  [[nodiscard]] result<bool> wait_from_host(std::uint64_t value, std::chrono::nanoseconds timeout) const;

 protected:
  semaphore(const gpu::device& owner, semaphore_kind kind, std::uint64_t native_handle) noexcept
      : device_(&owner), kind_(kind), native_handle_(native_handle) {}

  virtual result<void> do_signal_from_host(std::uint64_t value) = 0;
  virtual result<std::uint64_t> do_value() const = 0;
  virtual result<bool> do_wait_from_host(std::uint64_t value, std::chrono::nanoseconds timeout) const = 0;

 private:
  const gpu::device* device_;
  semaphore_kind kind_;
  std::uint64_t native_handle_;
};

// One wait or signal of a submission on a semaphore: a timeline semaphore's
// value (above 0), or a binary semaphore with value 0. `stage` is what a wait
// holds back.
struct semaphore_op {
  gpu::semaphore* on = nullptr;
  std::uint64_t value = 0;
  sync_stage stage = sync_stage::all;
};

// A submission's semaphores besides the queues' timelines: waited on before
// its commands, signalled once they all completed (before the queue's own
// timeline value is reached, on the null device).
struct external_sync {
  std::span<const semaphore_op> waits{};
  std::span<const semaphore_op> signals{};

  [[nodiscard]] bool empty() const noexcept { return waits.empty() && signals.empty(); }
};

// Why `op` cannot be waited on or signalled on `owner`'s queues (`role` and
// `index` name it: "wait 2"), or nothing: a null semaphore, one of another
// device (foreign_object), a binary one with a value or a timeline one at 0
// (invalid_semaphore_op).
[[nodiscard]] result<void> check_semaphore_op(const semaphore_op& op, const gpu::device& owner, std::string_view role,
                                              std::size_t index);

}  // namespace ferrum::gpu
