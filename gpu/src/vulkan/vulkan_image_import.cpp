// vulkan_image_import.cpp — an engine's VkImage as a ferrum image
// (gpu::import_vulkan_image, ferrum/gpu/vulkan_device.hpp).
#include "vulkan/vulkan_device.hpp"
#include "vulkan/vulkan_image.hpp"
#include "vulkan/vulkan_sharing.hpp"

#include <string>

namespace ferrum::gpu {
namespace {

// The engine's image, and the view ferrum made of it (none when the engine
// gave its own, or the usage takes none): only that view is ferrum's.
class vulkan_imported_image final : public vulkan_image {
 public:
  vulkan_imported_image(const gpu::device& owner, const image_spec& spec, VkDevice device, VkImage handle,
                        VkImageView view, bool owns_view, std::uint32_t queues) noexcept
      : vulkan_image(owner, placed_image{spec, 0}, handle, view),
        device_(device),
        owned_view_(owns_view ? view : VK_NULL_HANDLE) {
    set_queues(queues);
  }
  vulkan_imported_image(const vulkan_imported_image&) = delete;
  vulkan_imported_image& operator=(const vulkan_imported_image&) = delete;
  ~vulkan_imported_image() override {
    if (owned_view_ != VK_NULL_HANDLE) vkDestroyImageView(device_, owned_view_, nullptr);
  }

 private:
  VkDevice device_;
  VkImageView owned_view_;
};

std::string formats_named() {
  std::string out;
  for (const image_format f : image_formats) {
    if (!out.empty()) out += ", ";
    out += std::string(to_string(f)) + " (" + std::to_string(static_cast<int>(vulkan_format(f))) + ")";
  }
  return out;
}

}  // namespace

std::optional<image_format> image_format_from_vk(VkFormat f) noexcept {
  // Every format ferrum has, by its VkFormat: a format added to
  // image_formats and vulkan_format is found here too.
  for (const image_format candidate : image_formats)
    if (vulkan_format(candidate) == f) return candidate;
  return std::nullopt;
}

std::uint32_t image_usage_from_vk(VkImageUsageFlags usage) noexcept {
  std::uint32_t out = 0;
  for (std::uint32_t bit = 1; (bit & image_usage::all) != 0; bit <<= 1)
    if ((usage & vk_usage(bit)) != 0) out |= bit;
  return out;
}

result<std::unique_ptr<image>> import_vulkan_image(device& d, const vulkan_image_import& info) {
  const std::string what = "import_vulkan_image: ";
  auto* v = dynamic_cast<vulkan_device*>(&d);
  if (v == nullptr)
    return make_error(errc::invalid_device_option, what + "device " + quote_text(d.name()) + " is not a Vulkan device");
  if (info.image == VK_NULL_HANDLE) return make_error(errc::invalid_device_option, what + "a null image");
  if (info.type != VK_IMAGE_TYPE_2D || info.extent.depth != 1)
    return make_error(errc::invalid_image, what + "VkImageType " + std::to_string(static_cast<int>(info.type)) +
                                               " of depth " + std::to_string(info.extent.depth) +
                                               "; ferrum's images are 2D (VK_IMAGE_TYPE_2D, depth 1)");
  const std::optional<image_format> format = image_format_from_vk(info.format);
  if (!format)
    return make_error(errc::invalid_image, what + "VkFormat " + std::to_string(static_cast<int>(info.format)) +
                                               " is none of ferrum's formats: " + formats_named());
  if (info.samples != VK_SAMPLE_COUNT_1_BIT)
    return make_error(errc::invalid_image, what + std::to_string(static_cast<int>(info.samples)) +
                                               " samples; ferrum's images are single-sampled (VK_SAMPLE_COUNT_1_BIT)");
  const image_spec spec{*format,         info.extent.width, info.extent.height,
                        info.mip_levels, info.array_layers, image_usage_from_vk(info.usage)};
  if (auto ok = check_image_spec(spec); !ok) {
    error e = ok.error();
    e.detail = what + e.detail + " (VkImageUsageFlags " + std::to_string(info.usage) + ")";
    return e;
  }
  const auto queues = shared_queue_kinds(info.sharing, queue_families_of(v->native()), what);
  if (!queues) return queues.error();
  const VkDevice device = v->native().device;
  VkImageView view = info.view;
  const bool made_view = view == VK_NULL_HANDLE;
  if (made_view) {
    auto made = make_vk_image_view(device, info.image, spec);
    if (!made) {
      error e = made.error();
      e.detail = what + e.detail;
      return e;
    }
    view = *made;
  }
  return std::unique_ptr<image>(new vulkan_imported_image(d, spec, device, info.image, view, made_view, *queues));
}

}  // namespace ferrum::gpu
