// ferrum/gpu/event.hpp — a split barrier's signal: a command list sets it
// after the commands a later list must wait for, and that list waits for
// it before its own, so that the commands in between run on (Vulkan's
// VkEvent; docs/design.md, "Barriers", split barriers).
//
// Made on the cold path (device::create_event), unsignaled, and used on one
// queue: command_list::set_event signals it once every earlier command of
// the scope's `before` stages completed (their writes among its accesses
// made available); command_list::wait_event holds the list's later commands
// of the scope's `after` stages until it is signaled, the writes visible to
// `after`'s accesses; command_list::reset_event unsignals it. A set and its
// waits give the same scope (Vulkan's synchronization2 requires it), and an
// event is set only while unsignaled (a set of a signaled one orders
// nothing): reset it after its last wait, before it is set again.
//
//   auto e = device.create_event().value();
//   producer.set_event(*e, scope);    // after the producer's commands
//   consumer.wait_event(*e, scope);   // before the consumer's
//   last.barrier();                   // every wait done
//   last.reset_event(*e);             // ready for the next submission
//
// Destroy an event only once no submission that sets, waits for or resets
// it can still run, and before its device.
#pragma once

namespace ferrum::gpu {

class device;

class event {
 public:
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  virtual ~event() = default;

  [[nodiscard]] const gpu::device& device() const noexcept { return *device_; }

 protected:
  explicit event(const gpu::device& owner) noexcept : device_(&owner) {}

 private:
  const gpu::device* device_;
};

}  // namespace ferrum::gpu
