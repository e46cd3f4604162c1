#include "null/null_image.hpp"

#include "null/null_device.hpp"

#include <algorithm>

namespace ferrum::gpu::null_detail {

image_requirements null_image_requirements(const image_spec& spec) noexcept {
  std::uint64_t bytes = 0;
  for (std::uint32_t level = 0; level < spec.mips; ++level)
    bytes +=
        level_bytes(spec.format, std::max(1u, spec.width >> level), std::max(1u, spec.height >> level)) * spec.layers;
  return {(bytes + image_page - 1) / image_page * image_page, image_page};
}

void null_image::check(image_layout expected, const char* command) const noexcept {
  const image_layout actual = layout_.load(std::memory_order_relaxed);
  if (expected == image_layout::undefined || actual == expected) return;
  std::string what;
  try {
    what = std::string(command) + " expects image " + std::string(to_string(spec().format)) + " " +
           std::to_string(spec().width) + "x" + std::to_string(spec().height) + " at offset " +
           std::to_string(offset()) + " in layout " + std::string(to_string(expected)) + ", but it is in " +
           std::string(to_string(actual));
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
    images_.back()->set_layout(p.layout);
    handed.push_back(images_.back().get());
  }
  set_images(handed);
}

}  // namespace ferrum::gpu::null_detail
