// ferrum/gpu/arena.hpp — one physical buffer that the CPU writes and the GPU
// reads and writes.
//
// Arenas are made on the cold path (`device::create_arena`) and live as long as
// their owner keeps them; a lane binding target of the scheduler is one arena. The bytes
// are mapped for the whole life of the arena, so `bytes()` is stable: the
// addresses a wave binds are the addresses the next wave of that lane binds.
//
//   ferrum::result<std::unique_ptr<ferrum::gpu::arena>> a = device.create_arena(4096);
//   std::span<std::byte> bytes = (*a)->bytes();
//   command_list.fill((*a)->range(0, 256), 0u);
//
// An arena of a memory class (`create_arena(bytes, memory_class)`, ferrum/
// memory_class.hpp) lives where its class says: a `device` arena has no host
// bytes at all (bytes() is empty, on every device, so a forgotten copy shows
// everywhere); an `upload` or `readback` arena's host bytes are its own
// memory, or — `staged()`, on a discrete GPU or with a device's
// discrete_layout — a second, host-visible buffer that
// command_list::stage copies to (upload) or from (readback) the memory the
// GPU's commands use. A readback arena's GPU writes reach its host bytes
// once `invalidate()` ran after the fence. `create_arena(bytes)` makes an
// unstaged upload arena whose bytes the GPU may also write and the host read.
//
// Host writes need the arena itself (not a const one, nor an arena_range,
// which gives read access only). A *guarded* arena — a scheduler lane's — is
// reached by commands only through the ranges granted to their list
// (command_list::grant): each node's list, its node's own ranges.
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/memory_class.hpp"
#include "ferrum/queue_kind.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ferrum::gpu {

class device;
class arena;

// What a buffer may be used for (a bit each): its Vulkan usage flags. An
// arena a device makes has every one; an engine's buffer
// (import_vulkan_buffer) the ones it was made with. Commands check what they
// need (command_list: fill and copy transfers, a dispatch's buffer storage);
// a scheduler checks an imported buffer against its plan's accesses.
namespace buffer_usage {
inline constexpr std::uint32_t storage = 1u << 0;
inline constexpr std::uint32_t uniform = 1u << 1;
inline constexpr std::uint32_t vertex = 1u << 2;
inline constexpr std::uint32_t index = 1u << 3;
inline constexpr std::uint32_t indirect = 1u << 4;
inline constexpr std::uint32_t transfer_src = 1u << 5;
inline constexpr std::uint32_t transfer_dst = 1u << 6;
inline constexpr std::uint32_t all = (1u << 7) - 1;
}  // namespace buffer_usage

// The bits' names, comma-separated ("storage, transfer-dst"; "none").
[[nodiscard]] inline std::string buffer_usage_names(std::uint32_t usage) {
  constexpr std::array<std::string_view, 7> names{"storage",  "uniform",      "vertex",      "index",
                                                  "indirect", "transfer-src", "transfer-dst"};
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    if ((usage & (1u << i)) != 0) out += (out.empty() ? "" : ", ") + std::string(names[i]);
  return out.empty() ? "none" : out;
}

// A byte range of one arena: what commands read and write.
struct arena_range {
  const gpu::arena* arena = nullptr;
  std::size_t offset = 0;
  std::size_t size = 0;

  [[nodiscard]] bool empty() const noexcept { return arena == nullptr || size == 0; }
};

class arena {
 public:
  arena(const arena&) = delete;
  arena& operator=(const arena&) = delete;
  // Frees the buffer. The owner must know the GPU is done with it (the
  // scheduler destroys a lane's arena only after the lane's last fence).
  virtual ~arena() = default;

  // The host's bytes (empty for a device arena), mapped for the arena's
  // life: host writes before a submit are seen by that submission (through
  // its stage-in copy when staged); GPU writes are seen by the host once
  // the submission's timeline value is reached (and, for a staged or
  // non-coherent readback arena, its stage-out copy ran and invalidate()).
  [[nodiscard]] std::span<std::byte> bytes() noexcept { return bytes_; }
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }
  // The bytes commands reach, whether or not the host has them.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] memory_class cls() const noexcept { return class_; }
  // Whether the host bytes are a buffer of their own (command_list::stage).
  [[nodiscard]] bool staged() const noexcept { return staged_; }
  // What the buffer may be used for (buffer_usage bits): all of it, but
  // for an engine's buffer.
  [[nodiscard]] std::uint32_t usage() const noexcept { return usage_; }
  // The kinds of its device's queues that may use it (queue_bit each): every
  // kind, but for an engine's buffer shared with fewer queue families than
  // the device's queues are of (gpu::vulkan_sharing).
  [[nodiscard]] std::uint32_t queues() const noexcept { return queues_; }

  // Makes what the GPU wrote, up to a reached timeline value, visible in
  // bytes() where the memory is not coherent; nothing where it is. Errors:
  // the device's (vulkan_error, device_lost).
  [[nodiscard]] result<void> invalidate() { return do_invalidate(); }

  // The device's handle of the buffer (a VkBuffer on Vulkan, 0 on the null
  // device), for engines that bind it in their own command buffers.
  [[nodiscard]] std::uint64_t native_handle() const noexcept { return native_handle_; }
  // The buffer's device address (a VkDeviceAddress on a Vulkan device with
  // bufferDeviceAddress enabled; 0 elsewhere), for shaders that take one.
  [[nodiscard]] std::uint64_t device_address() const noexcept { return device_address_; }

  [[nodiscard]] const gpu::device& device() const noexcept { return *device_; }

  // A range of this arena; commands check it against the arena's size.
  [[nodiscard]] arena_range range(std::size_t offset, std::size_t size) const noexcept { return {this, offset, size}; }
  [[nodiscard]] arena_range whole() const noexcept { return {this, 0, size()}; }

  // Guards the arena (on the cold path, before any command reaches it):
  // from then on a command reaches it only through the ranges granted to its
  // list. The scheduler guards its lanes' arenas.
  void guard() noexcept { guarded_ = true; }
  [[nodiscard]] bool guarded() const noexcept { return guarded_; }

 protected:
  // An unstaged arena whose host bytes are all of it.
  arena(const gpu::device& owner, std::span<std::byte> bytes, std::uint64_t native_handle) noexcept
      : arena(owner, bytes, bytes.size(), native_handle, memory_class::upload, false) {}
  arena(const gpu::device& owner, std::span<std::byte> host, std::size_t size, std::uint64_t native_handle,
        memory_class cls, bool staged) noexcept
      : device_(&owner), bytes_(host), size_(size), native_handle_(native_handle), class_(cls), staged_(staged) {}

  virtual result<void> do_invalidate() { return {}; }
  // Set by the device once the buffer is bound (before the arena is handed out).
  void set_device_address(std::uint64_t address) noexcept { device_address_ = address; }
  // Set by the device for an engine's buffer made with less than all.
  void set_usage(std::uint32_t usage) noexcept { usage_ = usage; }
  // Set by the device for an engine's buffer not shared with every queue.
  void set_queues(std::uint32_t kinds) noexcept { queues_ = kinds; }
  friend class null_device;  // share_with

 private:
  const gpu::device* device_;
  std::span<std::byte> bytes_;
  std::size_t size_;
  std::uint64_t native_handle_;
  std::uint64_t device_address_ = 0;
  std::uint32_t usage_ = buffer_usage::all;
  std::uint32_t queues_ = every_queue_kind;
  memory_class class_;
  bool staged_;
  bool guarded_ = false;
};

}  // namespace ferrum::gpu
