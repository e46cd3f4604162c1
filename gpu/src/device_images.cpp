// device_images.cpp — the checks before a device makes images
// (ferrum/gpu/image.hpp, device::image_requirements, create_image_memory).
#include "ferrum/gpu/device.hpp"

#include <array>
#include <bit>
#include <string>

namespace ferrum::gpu {
namespace {

std::string describe(const image_spec& s) {
  return std::string(to_string(s.format)) + " " + std::to_string(s.width) + "x" + std::to_string(s.height) + "x" +
         std::to_string(s.layers) + ", " + std::to_string(s.mips) + " mips";
}

error refused(const image_spec& s, const std::string& why) {
  return make_error(errc::invalid_image, "image " + describe(s) + ": " + why);
}

}  // namespace

std::string subresources_text(const image_subresources& r) {
  const auto span = [](const char* one, const char* many, std::uint32_t base, std::uint32_t count) {
    if (count == 1) return std::string(one) + " " + std::to_string(base);
    return std::string(many) + " [" + std::to_string(base) + ", " + std::to_string(std::uint64_t{base} + count) + ")";
  };
  return span("mip", "mips", r.base_mip, r.mips) + (r.layers == 1 ? " " : " of ") +
         span("layer", "layers", r.base_layer, r.layers);
}

std::string image_usage_names(std::uint32_t usage) {
  static constexpr std::array<const char*, 6> names{"sampled",          "storage",      "color-attachment",
                                                    "depth-attachment", "transfer-src", "transfer-dst"};
  std::string out;
  for (std::size_t bit = 0; bit < names.size(); ++bit)
    if ((usage & (1u << bit)) != 0) out += (out.empty() ? "" : ",") + std::string(names[bit]);
  return out.empty() ? "none" : out;
}

result<void> check_image_spec(const image_spec& s) {
  if (s.width == 0 || s.height == 0 || s.width > max_image_extent || s.height > max_image_extent)
    return refused(s, "extent outside 1.." + std::to_string(max_image_extent));
  if (s.layers == 0 || s.layers > max_image_layers)
    return refused(s, "layers outside 1.." + std::to_string(max_image_layers));
  const auto levels = static_cast<std::uint32_t>(std::bit_width(std::max(s.width, s.height)));
  if (s.mips == 0 || s.mips > levels) return refused(s, "mips outside 1.." + std::to_string(levels));
  if (s.usage == 0 || (s.usage & ~image_usage::all) != 0)
    return refused(s, "usage " + std::to_string(s.usage) + " (at least one image_usage bit, and no other)");
  if (is_depth(s.format) && (s.usage & (image_usage::storage | image_usage::color_attachment)) != 0)
    return refused(s, "a depth format is neither stored to nor a color attachment");
  if (!is_depth(s.format) && (s.usage & image_usage::depth_attachment) != 0)
    return refused(s, "a color format is no depth attachment");
  if (is_block_compressed(s.format) &&
      (s.usage & ~(image_usage::sampled | image_usage::transfer_src | image_usage::transfer_dst)) != 0)
    return refused(s, "a block-compressed format is only sampled and copied");
  return {};
}

std::string format_feature_names(std::uint32_t features) {
  static constexpr std::array<std::string_view, 8> names{"sampled",          "storage",      "color-attachment",
                                                         "depth-attachment", "transfer-src", "transfer-dst",
                                                         "blit-src",         "blit-dst"};
  std::string out;
  for (std::size_t bit = 0; bit < names.size(); ++bit)
    if ((features & (1u << bit)) != 0) out += (out.empty() ? "" : ", ") + std::string(names[bit]);
  return out.empty() ? "none" : out;
}

result<gpu::image_requirements> device::image_requirements(const image_spec& spec) {
  if (auto r = check_usable(); !r) return r.error();
  if (auto ok = check_image_spec(spec); !ok) return ok.error();
  if (spec.width > limits_.max_image_extent || spec.height > limits_.max_image_extent)
    return refused(spec, "device " + quote_text(name_) + " makes images of at most " +
                             std::to_string(limits_.max_image_extent) + " texels a side");
  if (const std::uint32_t missing = spec.usage & ~format_features(spec.format); missing != 0)
    return make_error(errc::format_unsupported, "image " + describe(spec) + ": device " + quote_text(name_) +
                                                    " has no " + format_feature_names(missing) + " feature for " +
                                                    std::string(to_string(spec.format)));
  return do_image_requirements(spec);
}

result<std::unique_ptr<image_memory>> device::create_image_memory(std::span<const placed_image> images,
                                                                  std::uint64_t bytes) {
  if (auto r = check_usable(); !r) return r.error();
  if (images.empty()) return make_error(errc::invalid_image, "image memory for no image");
  for (std::size_t i = 0; i < images.size(); ++i) {
    const placed_image& p = images[i];
    auto needs = image_requirements(p.spec);
    if (!needs) return needs.error();
    if (p.offset % needs->alignment != 0 || p.offset > bytes || bytes - p.offset < needs->bytes)
      return make_error(errc::invalid_image, "image " + std::to_string(i) + " (" + describe(p.spec) + ") at offset " +
                                                 std::to_string(p.offset) + " needs " + std::to_string(needs->bytes) +
                                                 " bytes at alignment " + std::to_string(needs->alignment) +
                                                 " inside a block of " + std::to_string(bytes));
    if (!usage_allows(p.spec.usage, p.layout))
      return make_error(errc::invalid_image, "image " + std::to_string(i) + " (" + describe(p.spec) +
                                                 ") made in layout " + std::string(to_string(p.layout)) +
                                                 " without the usage it needs");
  }
  return do_create_image_memory(images, bytes);
}

result<std::unique_ptr<image_view>> device::create_image_view(const image& img, const image_subresources& range) {
  if (auto r = check_usable(); !r) return r.error();
  if (&img.device() != this) return make_error(errc::foreign_object, "image view of an image of another device");
  const image_spec& s = img.spec();
  if (!fits(range, s))
    return refused(s, "no view of " + subresources_text(range) + " (the image has " +
                          subresources_text(image_subresources::whole(s)) + ")");
  if ((s.usage & image_usage::viewed) == 0)
    return refused(s, "no view of an image made without sampled, storage or attachment usage");
  return do_create_image_view(img, range);
}

}  // namespace ferrum::gpu
