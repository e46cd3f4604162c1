// What every device's ranges of images must show (image_subresources,
// image_view), run on the null device and on Vulkan: a kernel writing one
// level of a mip chain from the level above it through views, a layer of an
// array image reached through a view after a transition of a range of
// layers, and every refusal of a view, a ranged transition and a kernel
// operand through a view, with its code, recording nothing.
#pragma once

#include "image_kernel_checks.hpp"

#include <array>
#include <bit>
#include <cstdint>
#include <memory>

namespace ferrum::test {

// Images of `specs` in one block, one after another.
template <std::size_t N>
std::unique_ptr<gpu::image_memory> make_images(gpu::device& device, const std::array<gpu::image_spec, N>& specs) {
  std::array<gpu::placed_image, N> placed;
  std::uint64_t end = 0;
  for (std::size_t i = 0; i < N; ++i) {
    const gpu::image_requirements needs = require(device.image_requirements(specs[i]));
    const std::uint64_t at = (end + needs.alignment - 1) / needs.alignment * needs.alignment;
    placed[i] = {specs[i], at};
    end = at + needs.bytes;
  }
  return require(device.create_image_memory(placed, end));
}

inline constexpr gpu::image_subresources level(std::uint32_t mip) noexcept { return {mip, 1, 0, 1}; }
inline constexpr gpu::image_subresources layer(std::uint32_t l) noexcept { return {0, 1, l, 1}; }

// Words 0, 1, 2, ... as floats into an upload arena of `bytes`.
inline std::unique_ptr<gpu::arena> counting_upload(gpu::device& device, std::size_t bytes) {
  auto upload = require(device.create_arena(bytes, memory_class::upload));
  for (std::size_t w = 0; w < bytes / 4; ++w) set_word(*upload, w, std::bit_cast<std::uint32_t>(static_cast<float>(w)));
  return upload;
}

inline std::array<std::uint32_t, 2> affine_push(float a, float b) noexcept {
  return {std::bit_cast<std::uint32_t>(a), std::bit_cast<std::uint32_t>(b)};
}

// An rgba32-float image of 3 levels, 16 x 12: level 0 copied in (and only
// it put in transfer-dst, then shader-read-only), level 1 alone put in
// general from undefined; image_affine writes level 1 from level 0 (x 3 +
// 0.5) through a view of each, then, level 1 put in shader-read-only, copies
// it (x 1 + 0) into an image of one level, copied out: texel (x, y) of
// level 1 is level 0's (x, y) x 3 + 0.5, every channel. Level 2 is never
// touched.
inline void check_image_mip_kernel(gpu::device& device) {
  const gpu::image_spec chain{image_format::rgba32_float, 16, 12, 3, 1, kernel_image_usage};
  const gpu::image_spec flat{image_format::rgba32_float, 8, 6, 1, 1, kernel_image_usage};
  auto memory = make_images(device, std::array{chain, flat});
  const gpu::image& mips = memory->at(0);
  const gpu::image& out = memory->at(1);
  auto view0 = require(device.create_image_view(mips, level(0)));
  auto view1 = require(device.create_image_view(mips, level(1)));
  CHECK(&view1->image() == &mips);
  CHECK(view1->range() == level(1));
  auto upload = counting_upload(device, copy_bytes(chain));
  auto readback = require(device.create_arena(copy_bytes(flat), memory_class::readback));
  auto kernel = require(device.create_kernel(gpu::builtin::image_affine()));
  auto list = require(device.create_command_list());
  const std::uint64_t value = submit(device, *list, [&](gpu::command_list& l) {
    if (upload->staged()) require(l.stage(*upload));
    require(l.transition(mips, image_layout::undefined, image_layout::transfer_dst, level(0)));
    require(l.copy(upload->whole(), mips, image_layout::transfer_dst));
    require(l.transition(mips, image_layout::transfer_dst, image_layout::shader_read_only, level(0)));
    require(l.transition(mips, image_layout::undefined, image_layout::general, level(1)));
    require(l.dispatch(*kernel, gpu::image_operand{&mips, image_layout::general, view1.get()},
                       gpu::image_operand{&mips, image_layout::shader_read_only, view0.get()}, affine_push(3, 0.5f)));
    require(l.transition(mips, image_layout::general, image_layout::shader_read_only, level(1)));
    require(l.transition(out, image_layout::undefined, image_layout::general));
    require(l.dispatch(*kernel, gpu::image_operand{&out, image_layout::general},
                       gpu::image_operand{&mips, image_layout::shader_read_only, view1.get()}, affine_push(1, 0)));
    require(l.transition(out, image_layout::general, image_layout::transfer_src));
    require(l.copy(out, image_layout::transfer_src, readback->whole()));
    if (readback->staged()) require(l.stage(*readback));
  });
  require_reached(device.queue().timeline(), value);
  require(readback->invalidate());
  std::size_t exact = 0;
  for (std::size_t y = 0; y < flat.height; ++y)
    for (std::size_t x = 0; x < flat.width; ++x)
      for (std::size_t c = 0; c < 4; ++c) {
        const auto source = static_cast<float>((y * chain.width + x) * 4 + c);
        if (std::bit_cast<float>(word_at(*readback, (y * flat.width + x) * 4 + c)) == source * 3 + 0.5f) ++exact;
      }
  CHECK(exact == copy_bytes(flat) / 4);
}

// An rgba32-float image of 4 layers, 8 x 8: every layer copied in, layers
// [1, 3) put in shader-read-only, layer 2 read through a view of it
// (image_affine, x 2 + 1) into an image of one layer; then layers [1, 3)
// back to transfer-dst and every layer to transfer-src, and copied out
// whole: the layer range met where each transition expects it, every
// layer's texels as copied in. A view of two layers is a 2D-array view.
inline void check_image_layer_views(gpu::device& device) {
  const gpu::image_spec layered{image_format::rgba32_float, 8, 8, 1, 4, kernel_image_usage};
  const gpu::image_spec flat{image_format::rgba32_float, 8, 8, 1, 1, kernel_image_usage};
  auto memory = make_images(device, std::array{layered, flat});
  const gpu::image& array = memory->at(0);
  const gpu::image& out = memory->at(1);
  const gpu::image_subresources middle{0, 1, 1, 2};
  auto two = require(device.create_image_view(array, middle));
  CHECK(two->range() == middle);
  auto view2 = require(device.create_image_view(array, layer(2)));
  CHECK(view2->range() == layer(2));
  const std::size_t layer_words = copy_bytes(flat) / 4;
  auto upload = counting_upload(device, copy_bytes(layered));
  auto readback = require(device.create_arena(copy_bytes(layered) + copy_bytes(flat), memory_class::readback));
  auto kernel = require(device.create_kernel(gpu::builtin::image_affine()));
  auto list = require(device.create_command_list());
  const std::uint64_t value = submit(device, *list, [&](gpu::command_list& l) {
    if (upload->staged()) require(l.stage(*upload));
    require(l.transition(array, image_layout::undefined, image_layout::transfer_dst));
    require(l.copy(upload->whole(), array, image_layout::transfer_dst));
    require(l.transition(array, image_layout::transfer_dst, image_layout::shader_read_only, middle));
    require(l.transition(out, image_layout::undefined, image_layout::general));
    require(l.dispatch(*kernel, gpu::image_operand{&out, image_layout::general},
                       gpu::image_operand{&array, image_layout::shader_read_only, view2.get()}, affine_push(2, 1)));
    require(l.transition(array, image_layout::shader_read_only, image_layout::transfer_dst, middle));
    require(l.transition(array, image_layout::transfer_dst, image_layout::transfer_src));
    require(l.transition(out, image_layout::general, image_layout::transfer_src));
    require(l.copy(array, image_layout::transfer_src, readback->range(0, copy_bytes(layered))));
    require(l.copy(out, image_layout::transfer_src, readback->range(copy_bytes(layered), copy_bytes(flat))));
    if (readback->staged()) require(l.stage(*readback));
  });
  require_reached(device.queue().timeline(), value);
  require(readback->invalidate());
  std::size_t kept = 0;
  for (std::size_t w = 0; w < copy_bytes(layered) / 4; ++w)
    if (std::bit_cast<float>(word_at(*readback, w)) == static_cast<float>(w)) ++kept;
  CHECK(kept == copy_bytes(layered) / 4);
  std::size_t exact = 0;
  for (std::size_t w = 0; w < layer_words; ++w) {
    const auto source = static_cast<float>(2 * layer_words + w);
    if (std::bit_cast<float>(word_at(*readback, 4 * layer_words + w)) == source * 2 + 1) ++exact;
  }
  CHECK(exact == layer_words);
}

// Every refusal of a view, a ranged transition and a kernel operand through
// a view; nothing recorded.
inline void check_image_range_errors(gpu::device& device, gpu::device& other) {
  const gpu::image_spec chain{image_format::rgba32_float, 16, 16, 3, 4, kernel_image_usage};
  const gpu::image_spec flat{image_format::rgba32_float, 16, 16, 1, 1, kernel_image_usage};
  const gpu::image_spec copies_only{image_format::rgba32_float, 16, 16, 1, 1, image_copies};
  auto memory = make_images(device, std::array{chain, flat, copies_only});
  auto foreign = make_images(other, std::array{flat});
  const gpu::image& mips = memory->at(0);
  const gpu::image& target = memory->at(1);
  const auto view_code = [&](const gpu::image& img, const gpu::image_subresources& range) {
    auto v = device.create_image_view(img, range);
    return v ? errc::ok : static_cast<errc>(v.error().code.value());
  };
  CHECK(view_code(mips, {2, 1, 3, 1}) == errc::ok);
  CHECK(view_code(foreign->at(0), level(0)) == errc::foreign_object);
  for (const gpu::image_subresources& bad :
       {gpu::image_subresources{0, 0, 0, 1}, gpu::image_subresources{0, 1, 0, 0}, gpu::image_subresources{3, 1, 0, 1},
        gpu::image_subresources{1, 3, 0, 1}, gpu::image_subresources{0, 1, 4, 1},
        gpu::image_subresources{0, 1, 2, 3}}) {
    INFO(gpu::subresources_text(bad));
    CHECK(view_code(mips, bad) == errc::invalid_image);
  }
  CHECK(view_code(memory->at(2), level(0)) == errc::invalid_image);
  auto mip0 = require(device.create_image_view(mips, level(0)));
  auto two_mips = require(device.create_image_view(mips, {0, 2, 0, 1}));
  auto two_layers = require(device.create_image_view(mips, {1, 1, 0, 2}));
  auto of_target = require(device.create_image_view(target, level(0)));

  auto kernel = require(device.create_kernel(gpu::builtin::image_affine()));
  auto list = require(device.create_command_list());
  require(list->begin());
  const auto transition_code = [&](image_layout to, const gpu::image_subresources& range) {
    auto r = list->transition(mips, image_layout::undefined, to, range);
    return r ? errc::ok : static_cast<errc>(r.error().code.value());
  };
  CHECK(transition_code(image_layout::general, {3, 1, 0, 1}) == errc::invalid_image);
  CHECK(transition_code(image_layout::general, {0, 1, 0, 0}) == errc::invalid_image);
  CHECK(transition_code(image_layout::general, {0, 1, 3, 2}) == errc::invalid_image);
  CHECK(transition_code(image_layout::color_attachment, level(1)) == errc::invalid_image);
  const auto dispatch_code = [&](const gpu::image_operand& primary, const gpu::image_operand& secondary) {
    auto r = list->dispatch(*kernel, primary, secondary, affine_push(1, 0));
    return r ? errc::ok : static_cast<errc>(r.error().code.value());
  };
  const gpu::image_operand source{&mips, image_layout::shader_read_only, mip0.get()};
  // A view of another image than the operand's; of more than one level or layer.
  CHECK(dispatch_code({&target, image_layout::general, mip0.get()}, source) == errc::invalid_image);
  CHECK(dispatch_code({&target, image_layout::general}, {&target, image_layout::shader_read_only, mip0.get()}) ==
        errc::invalid_image);
  CHECK(dispatch_code({&mips, image_layout::general, of_target.get()}, source) == errc::invalid_image);
  CHECK(dispatch_code({&mips, image_layout::general, two_mips.get()}, source) == errc::invalid_image);
  CHECK(dispatch_code({&target, image_layout::general}, {&mips, image_layout::shader_read_only, two_layers.get()}) ==
        errc::invalid_image);
  // An image of several levels and layers without a view.
  CHECK(dispatch_code({&target, image_layout::general}, {&mips, image_layout::shader_read_only}) ==
        errc::invalid_image);
  CHECK(list->size() == 0);
  require(list->end());
  CHECK(list->barriers() == 0);
}

}  // namespace ferrum::test
