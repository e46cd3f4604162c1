#include "null/null_image.hpp"

#include "null/null_device.hpp"

#include <algorithm>

namespace ferrum::gpu::null_detail {

namespace {

// The bytes of level `level` of one layer.
std::uint64_t spec_level_bytes(const image_spec& spec, std::uint32_t level) noexcept {
  return level_bytes(spec.format, std::max(1u, spec.width >> level), std::max(1u, spec.height >> level));
}

}  // namespace

image_requirements null_image_requirements(const image_spec& spec) noexcept {
  std::uint64_t bytes = 0;
  for (std::uint32_t level = 0; level < spec.mips; ++level) bytes += spec_level_bytes(spec, level) * spec.layers;
  return {(bytes + image_page - 1) / image_page * image_page, image_page};
}

null_image::null_image(const gpu::device& owner, null_device_impl& reporter, const placed_image& placed,
                       std::span<std::byte> bytes)
    : image(owner, placed.spec, placed.offset, 0, 0),
      reporter_(&reporter),
      bytes_(bytes),
      layouts_(std::make_unique<std::atomic<image_layout>[]>(std::size_t{placed.spec.mips} * placed.spec.layers)) {
  set_layout(placed.layout, image_subresources::whole(placed.spec));
}

std::span<std::byte> null_image::texels(std::uint32_t mip, std::uint32_t layer) const noexcept {
  std::uint64_t at = 0;
  for (std::uint32_t level = 0; level < mip; ++level) at += spec_level_bytes(spec(), level) * spec().layers;
  const std::uint64_t size = spec_level_bytes(spec(), mip);
  return bytes_.subspan(at + size * layer, size);
}

image_extent null_image::extent(std::uint32_t mip) const noexcept {
  return {std::max(1u, spec().width >> mip), std::max(1u, spec().height >> mip)};
}

void null_image::set_layout(image_layout l, const image_subresources& range) const noexcept {
  for (std::uint32_t mip = range.base_mip; mip < range.base_mip + range.mips; ++mip)
    for (std::uint32_t layer = range.base_layer; layer < range.base_layer + range.layers; ++layer)
      layout_at(mip, layer).store(l, std::memory_order_relaxed);
}

void null_image::check(image_layout expected, const image_subresources& range, const char* command) const noexcept {
  if (expected == image_layout::undefined) return;
  std::size_t met = 0;  // subresources in another layout
  std::uint32_t first_mip = 0;
  std::uint32_t first_layer = 0;
  image_layout actual = expected;
  for (std::uint32_t mip = range.base_mip; mip < range.base_mip + range.mips; ++mip) {
    for (std::uint32_t layer = range.base_layer; layer < range.base_layer + range.layers; ++layer) {
      const image_layout l = layout_at(mip, layer).load(std::memory_order_relaxed);
      if (l == expected) continue;
      if (met++ == 0) {
        first_mip = mip;
        first_layer = layer;
        actual = l;
      }
    }
  }
  if (met == 0) return;
  std::string what;
  try {
    what = std::string(command) + " expects image " + std::string(to_string(spec().format)) + " " +
           std::to_string(spec().width) + "x" + std::to_string(spec().height) + " at offset " +
           std::to_string(offset()) + ", mip " + std::to_string(first_mip) + " layer " + std::to_string(first_layer) +
           ", in layout " + std::string(to_string(expected)) + ", but it is in " + std::string(to_string(actual));
    if (met > 1) what += " (and " + std::to_string(met - 1) + " more of its subresources in another)";
  } catch (...) {
    // Out of memory for the words: the count still goes up.
  }
  reporter_->report_image_layout(std::move(what));
}

null_image_memory::null_image_memory(const gpu::device& owner, null_device_impl& reporter,
                                     std::span<const placed_image> images, std::uint64_t bytes)
    : image_memory(bytes), storage_(std::make_unique<std::byte[]>(bytes)) {
  std::vector<const image*> handed;
  for (const placed_image& p : images) {
    const std::uint64_t size = null_image_requirements(p.spec).bytes;
    images_.push_back(std::make_unique<null_image>(owner, reporter, p, std::span(storage_.get() + p.offset, size)));
    handed.push_back(images_.back().get());
  }
  set_images(handed);
}

}  // namespace ferrum::gpu::null_detail
