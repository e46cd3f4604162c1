// What every device's kernels over images must show (ferrum/gpu/kernel.hpp),
// run on the null device and on Vulkan: builtin::image_affine reading a
// sampled image and writing a storage image, its texels exact, its layouts
// met; and every refusal of an image kernel or an image operand, with its
// code, recording nothing.
#pragma once

#include "test_namespace.hpp"

#include "gpu_test_support.hpp"

#include "ferrum/gpu/builtin_kernels.hpp"
#include "ferrum/gpu/device.hpp"

#include <array>
#include <bit>
#include <cstdint>

namespace ferrum::test {

inline constexpr std::uint32_t kernel_image_usage = gpu::image_usage::storage | gpu::image_usage::sampled |
                                                    gpu::image_usage::transfer_src | gpu::image_usage::transfer_dst;

// Two rgba32-float images of `width` x `height` (not a multiple of the 8 x 8
// workgroup: the edge is covered) in one block.
struct kernel_images {
  gpu::image_spec spec;
  std::unique_ptr<gpu::image_memory> memory;
};

inline kernel_images make_kernel_images(gpu::device& device, std::uint32_t width = 13, std::uint32_t height = 7) {
  kernel_images k{{image_format::rgba32_float, width, height, 1, 1, kernel_image_usage}, nullptr};
  const gpu::image_requirements needs = require(device.image_requirements(k.spec));
  const std::uint64_t stride = (needs.bytes + needs.alignment - 1) / needs.alignment * needs.alignment;
  const std::array<gpu::placed_image, 2> placed{gpu::placed_image{k.spec, 0}, gpu::placed_image{k.spec, stride}};
  k.memory = require(device.create_image_memory(placed, stride + needs.bytes));
  return k;
}

// Texels 0, 1, 2, ... copied into the source, image_affine (x 3 + 0.5) into
// the target, copied out: every channel exact, twice (the list recorded
// again takes fresh image descriptor sets). 37 x 29 texels are 4292 words:
// the null device's CPU form works through 1024-word blocks, the last one
// partial here.
inline void check_image_kernel(gpu::device& device) {
  kernel_images k = make_kernel_images(device, 37, 29);
  const gpu::image& source = k.memory->at(0);
  const gpu::image& target = k.memory->at(1);
  const std::size_t bytes = copy_bytes(k.spec);
  auto upload = require(device.create_arena(bytes, memory_class::upload));
  auto readback = require(device.create_arena(bytes, memory_class::readback));
  for (std::size_t w = 0; w < bytes / 4; ++w) set_word(*upload, w, std::bit_cast<std::uint32_t>(static_cast<float>(w)));
  auto kernel = require(device.create_kernel(gpu::builtin::image_affine()));
  CHECK(kernel->primary() == gpu::kernel_operand_kind::storage_image);
  CHECK(kernel->secondary() == gpu::kernel_operand_kind::sampled_image);
  auto list = require(device.create_command_list());
  for (const float scale : {3.0f, 5.0f}) {
    const std::array<std::uint32_t, 2> push{std::bit_cast<std::uint32_t>(scale), std::bit_cast<std::uint32_t>(0.5f)};
    const std::uint64_t value = submit(device, *list, [&](gpu::command_list& l) {
      if (upload->staged()) require(l.stage(*upload));
      require(l.transition(source, image_layout::undefined, image_layout::transfer_dst));
      require(l.copy(upload->whole(), source, image_layout::transfer_dst));
      require(l.transition(source, image_layout::transfer_dst, image_layout::shader_read_only));
      require(l.transition(target, image_layout::undefined, image_layout::general));
      require(l.dispatch(*kernel, gpu::image_operand{&target, image_layout::general},
                         gpu::image_operand{&source, image_layout::shader_read_only}, push));
      require(l.transition(target, image_layout::general, image_layout::transfer_src));
      require(l.copy(target, image_layout::transfer_src, readback->whole()));
      if (readback->staged()) require(l.stage(*readback));
    });
    require_reached(device.queue().timeline(), value);
    require(readback->invalidate());
    std::size_t exact = 0;
    for (std::size_t w = 0; w < bytes / 4; ++w)
      if (std::bit_cast<float>(word_at(*readback, w)) == static_cast<float>(w) * scale + 0.5f) ++exact;
    CHECK(exact == bytes / 4);
  }
}

// builtin::image_blend: a 13 x 7 primary holding texels 0, 1, 2, ... blended
// (x 0.5, + secondary x 2) with a 5 x 3 secondary of texels 1000, 1001,
// ..., each texel of the secondary scaled up to the primary's nearest:
// every channel exact.
inline void check_image_blend(gpu::device& device) {
  const gpu::image_spec big{image_format::rgba32_float, 13, 7, 1, 1, kernel_image_usage};
  const gpu::image_spec small{image_format::rgba32_float, 5, 3, 1, 1, kernel_image_usage};
  const gpu::image_requirements needs = require(device.image_requirements(big));
  const std::uint64_t stride = (needs.bytes + needs.alignment - 1) / needs.alignment * needs.alignment;
  const std::array<gpu::placed_image, 2> placed{gpu::placed_image{big, 0}, gpu::placed_image{small, stride}};
  auto memory = require(device.create_image_memory(placed, stride + require(device.image_requirements(small)).bytes));
  const gpu::image& target = memory->at(0);
  const gpu::image& source = memory->at(1);
  const std::size_t bytes = copy_bytes(big), small_bytes = copy_bytes(small);
  auto upload = require(device.create_arena(bytes + small_bytes, memory_class::upload));
  auto readback = require(device.create_arena(bytes, memory_class::readback));
  const auto secondary_word = [](std::size_t w) { return static_cast<float>(1000 + w); };
  for (std::size_t w = 0; w < bytes / 4; ++w) set_word(*upload, w, std::bit_cast<std::uint32_t>(static_cast<float>(w)));
  for (std::size_t w = 0; w < small_bytes / 4; ++w)
    set_word(*upload, bytes / 4 + w, std::bit_cast<std::uint32_t>(secondary_word(w)));
  auto kernel = require(device.create_kernel(gpu::builtin::image_blend()));
  CHECK(kernel->primary() == gpu::kernel_operand_kind::storage_image);
  CHECK(kernel->secondary() == gpu::kernel_operand_kind::sampled_image);
  auto list = require(device.create_command_list());
  const std::array<std::uint32_t, 2> push{std::bit_cast<std::uint32_t>(0.5f), std::bit_cast<std::uint32_t>(2.0f)};
  const std::uint64_t value = submit(device, *list, [&](gpu::command_list& l) {
    if (upload->staged()) require(l.stage(*upload));
    require(l.transition(target, image_layout::undefined, image_layout::transfer_dst));
    require(l.transition(source, image_layout::undefined, image_layout::transfer_dst));
    require(l.copy({upload.get(), 0, bytes}, target, image_layout::transfer_dst));
    require(l.copy({upload.get(), bytes, small_bytes}, source, image_layout::transfer_dst));
    require(l.transition(target, image_layout::transfer_dst, image_layout::general));
    require(l.transition(source, image_layout::transfer_dst, image_layout::shader_read_only));
    require(l.dispatch(*kernel, gpu::image_operand{&target, image_layout::general},
                       gpu::image_operand{&source, image_layout::shader_read_only}, push));
    require(l.transition(target, image_layout::general, image_layout::transfer_src));
    require(l.copy(target, image_layout::transfer_src, readback->whole()));
    if (readback->staged()) require(l.stage(*readback));
  });
  require_reached(device.queue().timeline(), value);
  require(readback->invalidate());
  std::size_t exact = 0;
  for (std::size_t w = 0; w < bytes / 4; ++w) {
    const std::size_t texel = w / 4, x = texel % 13, y = texel / 13;
    const std::size_t from = ((y * 3 / 7) * 5 + x * 5 / 13) * 4 + w % 4;
    if (std::bit_cast<float>(word_at(*readback, w)) == static_cast<float>(w) * 0.5f + secondary_word(from) * 2.0f)
      ++exact;
  }
  CHECK(exact == bytes / 4);
}

// Every refusal of an image kernel at creation and of an image operand at
// dispatch; nothing recorded.
inline void check_image_kernel_errors(gpu::device& device, gpu::device& other) {
  const auto made = [&](gpu::kernel_source s) {
    auto k = device.create_kernel(s);
    return k ? errc::ok : static_cast<errc>(k.error().code.value());
  };
  gpu::kernel_source sampled_primary = gpu::builtin::image_affine();
  sampled_primary.primary = gpu::kernel_operand_kind::sampled_image;
  CHECK(made(sampled_primary) == errc::invalid_kernel);
  gpu::kernel_source too_wide = gpu::builtin::image_affine();
  too_wide.local_size_y = 1024 / too_wide.local_size_x + 1;
  CHECK(made(too_wide) == errc::invalid_kernel);
  gpu::kernel_source no_rows = gpu::builtin::image_affine();
  no_rows.local_size_y = 0;
  CHECK(made(no_rows) == errc::invalid_kernel);
  gpu::kernel_source buffer_rows = gpu::builtin::affine();
  buffer_rows.local_size_y = 2;
  CHECK(made(buffer_rows) == errc::invalid_kernel);

  kernel_images k = make_kernel_images(device);
  kernel_images foreign = make_kernel_images(other);
  const gpu::image& source = k.memory->at(0);
  const gpu::image& target = k.memory->at(1);
  const gpu::image_spec layered{image_format::rgba32_float, 8, 8, 1, 2, kernel_image_usage};
  const gpu::image_spec mipped{image_format::rgba32_float, 8, 8, 2, 1, kernel_image_usage};
  const gpu::image_spec copies_only{
      image_format::rgba32_float, 8, 8, 1, 1, gpu::image_usage::transfer_src | gpu::image_usage::transfer_dst};
  std::array<std::unique_ptr<gpu::image_memory>, 3> odd;
  for (std::size_t i = 0; const gpu::image_spec& s : {layered, mipped, copies_only}) {
    const std::array<gpu::placed_image, 1> placed{gpu::placed_image{s, 0}};
    odd[i++] = require(device.create_image_memory(placed, require(device.image_requirements(s)).bytes));
  }
  auto arena = require(device.create_arena(4096));
  auto image_kernel = require(device.create_kernel(gpu::builtin::image_affine()));
  auto buffer_kernel = require(device.create_kernel(gpu::builtin::affine()));
  gpu::kernel_source mixed = gpu::builtin::image_affine();
  mixed.secondary = gpu::kernel_operand_kind::buffer;
  mixed.spirv = {};  // never run: made by the null device (its C++ form), refused by Vulkan (no SPIR-V)
  auto list = require(device.create_command_list());
  require(list->begin());
  const gpu::image_operand target_op{&target, image_layout::general};
  const gpu::image_operand source_op{&source, image_layout::shader_read_only};
  const std::array<std::uint32_t, 2> push{};
  const auto code = [&](const gpu::kernel& kernel, const gpu::kernel_operand& p, const gpu::kernel_operand& s) {
    auto r = list->dispatch(kernel, p, s, push);
    return r ? errc::ok : static_cast<errc>(r.error().code.value());
  };
  // Operands of the wrong kind.
  CHECK(code(*image_kernel, arena->whole(), source_op) == errc::kernel_operand_mismatch);
  CHECK(code(*image_kernel, target_op, arena->whole()) == errc::kernel_operand_mismatch);
  CHECK(code(*image_kernel, target_op, gpu::arena_range{}) == errc::kernel_operand_mismatch);
  CHECK(code(*image_kernel, gpu::image_operand{}, source_op) == errc::kernel_operand_mismatch);
  CHECK(code(*buffer_kernel, target_op, gpu::arena_range{}) == errc::kernel_operand_mismatch);
  CHECK(code(*buffer_kernel, arena->whole(), source_op) == errc::kernel_operand_mismatch);
  if (auto mixed_kernel = device.create_kernel(mixed)) {
    // An image primary beside an empty buffer secondary: none to bind.
    CHECK(code(**mixed_kernel, target_op, gpu::arena_range{}) == errc::kernel_operand_mismatch);
  }
  // Images a kernel cannot take, or named in another layout than their kind's.
  CHECK(code(*image_kernel, gpu::image_operand{&foreign.memory->at(1), image_layout::general}, source_op) ==
        errc::foreign_object);
  for (const auto& memory : odd) {
    CHECK(code(*image_kernel, gpu::image_operand{&memory->at(0), image_layout::general}, source_op) ==
          errc::invalid_image);
  }
  CHECK(code(*image_kernel, target_op, gpu::image_operand{&odd[2]->at(0), image_layout::shader_read_only}) ==
        errc::invalid_image);
  CHECK(code(*image_kernel, gpu::image_operand{&target, image_layout::shader_read_only}, source_op) ==
        errc::invalid_image);
  CHECK(code(*image_kernel, target_op, gpu::image_operand{&source, image_layout::general}) == errc::invalid_image);
  CHECK(code(*image_kernel, target_op, gpu::image_operand{&source, image_layout::transfer_src}) == errc::invalid_image);
  CHECK(list->size() == 0);
  require(list->end());
  CHECK(list->barriers() == 0);
}

}  // namespace ferrum::test
