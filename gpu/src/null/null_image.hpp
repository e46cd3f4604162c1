// null_image.hpp (private) — images on the null device: a block of host
// memory (null_image_memory) with each image's texels at its offset, level
// after level (each level every layer, one after another), tightly packed;
// the layout each subresource of an image is in (a byte each: at most 15
// levels of 256 layers), which the queue's workers change and check as
// they run commands (null_queue.cpp); and views, which are their range.
#pragma once

#include "ferrum/gpu/image.hpp"
#include "ferrum/gpu/kernel.hpp"

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
  // Every subresource in `placed.layout`.
  null_image(const gpu::device& owner, null_device_impl& reporter, const placed_image& placed,
             std::span<std::byte> bytes);

  // Level 0, every layer: what a copy moves.
  [[nodiscard]] std::span<std::byte> texels() const noexcept { return bytes_.first(copy_bytes(spec())); }
  // Level `mip` of layer `layer`, and that level's extent.
  [[nodiscard]] std::span<std::byte> texels(std::uint32_t mip, std::uint32_t layer) const noexcept;
  [[nodiscard]] image_extent extent(std::uint32_t mip) const noexcept;

  // On a worker: a command that expects `range` of the image in `expected`
  // (any, for undefined) meets each of its subresources in its layout; a
  // command that meets any in another is counted once on the device, with
  // what the command was (`command`) and the first such subresource.
  void check(image_layout expected, const image_subresources& range, const char* command) const noexcept;
  void set_layout(image_layout l, const image_subresources& range) const noexcept;

 private:
  [[nodiscard]] std::atomic<image_layout>& layout_at(std::uint32_t mip, std::uint32_t layer) const noexcept {
    return layouts_[std::size_t{mip} * spec().layers + layer];
  }

  null_device_impl* reporter_;
  std::span<std::byte> bytes_;
  // Per subresource, mip-major. Relaxed: the queues' submissions order the
  // commands that change them.
  std::unique_ptr<std::atomic<image_layout>[]> layouts_;
};

// A view on the null device: its range, which a dispatch reaches.
class null_image_view final : public image_view {
 public:
  null_image_view(const gpu::image& img, const image_subresources& range) noexcept : image_view(img, range, 0) {}
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
