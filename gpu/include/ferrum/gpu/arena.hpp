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
// Host writes need the arena itself (not a const one, nor an arena_range,
// which gives read access only). A *guarded* arena — a scheduler lane's — is
// reached by commands only through the ranges granted to their list
// (command_list::grant): each node's list, its node's own ranges.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace ferrum::gpu {

class device;
class arena;

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

  // The mapped bytes, host-visible and coherent: host writes before a submit
  // are seen by that submission; GPU writes are seen by the host once the
  // submission's timeline value is reached.
  [[nodiscard]] std::span<std::byte> bytes() noexcept { return bytes_; }
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_.size(); }

  // The device's handle of the buffer (a VkBuffer on Vulkan, 0 on the null
  // device), for engines that bind it in their own command buffers.
  [[nodiscard]] std::uint64_t native_handle() const noexcept { return native_handle_; }

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
  arena(const gpu::device& owner, std::span<std::byte> bytes, std::uint64_t native_handle) noexcept
      : device_(&owner), bytes_(bytes), native_handle_(native_handle) {}

 private:
  const gpu::device* device_;
  std::span<std::byte> bytes_;
  std::uint64_t native_handle_;
  bool guarded_ = false;
};

}  // namespace ferrum::gpu
