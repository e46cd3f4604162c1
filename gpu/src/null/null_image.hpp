// null_image.hpp (private) — images on the null device: a block of host
// memory (null_image_memory) with each image's texels at its offset, level
// after level, tightly packed; and the layout each image is in, which the
// queue's workers change and check as they run commands (null_queue.cpp).
#pragma once

#include "ferrum/gpu/image.hpp"

#include <atomic>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace ferrum::gpu::null_detail {

class null_device_impl;

// The null device's sizes: every mip level's texels, rounded up to 4 KiB,
// at 4 KiB alignment, as a GPU's pages (so that a lane places images by
// the device's sizes, not their texels, on this device too).
inline constexpr std::uint64_t image_page = 4096;
[[nodiscard]] image_requirements null_image_requirements(const image_spec& spec) noexcept;

class null_image final : public image {
 public:
  null_image(const gpu::device& owner, null_device_impl& reporter, const placed_image& placed,
             std::span<std::byte> bytes) noexcept
      : image(owner, placed.spec, placed.offset, 0, 0), reporter_(&reporter), bytes_(bytes) {}

  // Level 0, every layer: what a copy moves.
  [[nodiscard]] std::span<std::byte> texels() const noexcept { return bytes_.first(copy_bytes(spec())); }

  // On a worker: a command that expects the image in `expected` (any, for
  // undefined) meets it in its layout; a difference is counted on the
  // device, with what the command was (`command`).
  void check(image_layout expected, const char* command) const noexcept;
  void set_layout(image_layout l) const noexcept { layout_.store(l, std::memory_order_relaxed); }

 private:
  null_device_impl* reporter_;
  std::span<std::byte> bytes_;
  // Relaxed: the queues' submissions order the commands that change it.
  mutable std::atomic<image_layout> layout_{image_layout::undefined};
};

class null_image_memory final : public image_memory {
 public:
  // Zero-filled host memory of `bytes` bytes holding `images`.
  null_image_memory(const gpu::device& owner, null_device_impl& reporter, std::span<const placed_image> images,
                    std::uint64_t bytes);

 private:
  std::unique_ptr<std::byte[]> storage_;
  std::vector<std::unique_ptr<null_image>> images_;
};

}  // namespace ferrum::gpu::null_detail
