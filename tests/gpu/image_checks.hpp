// What every device's images must show (ferrum/gpu/image.hpp), run on the
// null device and on Vulkan: texels written through one image and read
// back exactly, images sharing memory, layout changes in barriers, and
// every refusal with its code.
#pragma once

#include "test_namespace.hpp"

#include "gpu_test_support.hpp"

#include "ferrum/gpu/device.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

namespace ferrum::test {

inline constexpr std::uint32_t image_copies = gpu::image_usage::transfer_src | gpu::image_usage::transfer_dst;

// Two images placed at one offset (never live together) and a third after
// them, in one block: what a lane makes.
struct image_block {
  std::array<gpu::placed_image, 3> placed;
  std::unique_ptr<gpu::image_memory> memory;
};

inline image_block make_image_block(gpu::device& device) {
  image_block b;
  b.placed = {gpu::placed_image{{image_format::rgba8_unorm, 64, 32, 1, 1, image_copies | gpu::image_usage::storage}, 0},
              gpu::placed_image{{image_format::r32_float, 32, 16, 1, 2, image_copies | gpu::image_usage::sampled}, 0},
              gpu::placed_image{{image_format::rgba16_float, 16, 16, 1, 1, image_copies}, 0}};
  std::uint64_t shared = 0;
  for (std::size_t i = 0; i < 2; ++i) {
    const gpu::image_requirements needs = require(device.image_requirements(b.placed[i].spec));
    CHECK(needs.bytes >= copy_bytes(b.placed[i].spec));
    CHECK((needs.alignment & (needs.alignment - 1)) == 0);
    shared = std::max(shared, (needs.bytes + needs.alignment - 1) / needs.alignment * needs.alignment);
  }
  const gpu::image_requirements third = require(device.image_requirements(b.placed[2].spec));
  b.placed[2].offset = (shared + third.alignment - 1) / third.alignment * third.alignment;
  b.memory = require(device.create_image_memory(b.placed, b.placed[2].offset + third.bytes));
  REQUIRE(b.memory->size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(b.memory->at(i).spec() == b.placed[i].spec);
    CHECK(b.memory->at(i).offset() == b.placed[i].offset);
  }
  return b;
}

// Words written into an upload arena, copied into each image in turn (the
// aliased two one after the other) and out into a readback arena: exact.
inline void check_image_round_trip(gpu::device& device) {
  image_block b = make_image_block(device);
  std::uint64_t total = 0;
  for (const gpu::placed_image& p : b.placed) total += copy_bytes(p.spec);
  auto upload = require(device.create_arena(total, memory_class::upload));
  auto readback = require(device.create_arena(total, memory_class::readback));
  for (std::size_t w = 0; w < total / 4; ++w) set_word(*upload, w, 0x3c000000u + static_cast<std::uint32_t>(w));
  auto list = require(device.create_command_list());
  const std::uint64_t value = submit(device, *list, [&](gpu::command_list& l) {
    if (upload->staged()) require(l.stage(*upload));
    std::size_t at = 0;
    for (std::size_t i = 0; i < 3; ++i) {
      const gpu::image& img = b.memory->at(i);
      const std::size_t bytes = copy_bytes(img.spec());
      // The second image takes the first's memory: it starts undefined.
      require(l.transition(img, image_layout::undefined, image_layout::transfer_dst));
      require(l.copy(upload->range(at, bytes), img, image_layout::transfer_dst));
      require(l.transition(img, image_layout::transfer_dst, image_layout::transfer_src));
      require(l.copy(img, image_layout::transfer_src, readback->range(at, bytes)));
      at += bytes;
    }
    if (readback->staged()) require(l.stage(*readback));
  });
  require_reached(device.queue().timeline(), value);
  require(readback->invalidate());
  std::size_t equal = 0;
  for (std::size_t w = 0; w < total / 4; ++w)
    if (word_at(*readback, w) == 0x3c000000u + static_cast<std::uint32_t>(w)) ++equal;
  CHECK(equal == total / 4);
  // Each transition is made in the barrier before its command: one per copy.
  CHECK(list->barriers() == std::size_t{6} + (upload->staged() ? 1u : 0u) + (readback->staged() ? 1u : 0u));
}

// Every refusal of image specs, image memory and image commands.
inline void check_image_errors(gpu::device& device, gpu::device& other) {
  const auto code = [&](const gpu::image_spec& s) {
    auto r = device.image_requirements(s);
    return r ? errc::ok : static_cast<errc>(r.error().code.value());
  };
  const gpu::image_spec good{image_format::rgba8_unorm, 8, 8, 1, 1, image_copies};
  CHECK(code(good) == errc::ok);
  for (gpu::image_spec bad :
       {gpu::image_spec{image_format::rgba8_unorm, 0, 8, 1, 1, image_copies},
        gpu::image_spec{image_format::rgba8_unorm, 8, max_image_extent + 1, 1, 1, image_copies},
        gpu::image_spec{image_format::rgba8_unorm, 8, 8, 1, 0, image_copies},
        gpu::image_spec{image_format::rgba8_unorm, 8, 8, 1, max_image_layers + 1, image_copies},
        gpu::image_spec{image_format::rgba8_unorm, 8, 8, 0, 1, image_copies},
        gpu::image_spec{image_format::rgba8_unorm, 8, 8, 5, 1, image_copies},
        gpu::image_spec{image_format::rgba8_unorm, 8, 8, 1, 1, 0},
        gpu::image_spec{image_format::rgba8_unorm, 8, 8, 1, 1, 1u << 9},
        gpu::image_spec{image_format::d32_float, 8, 8, 1, 1, gpu::image_usage::storage},
        gpu::image_spec{image_format::d32_float, 8, 8, 1, 1, gpu::image_usage::color_attachment},
        gpu::image_spec{image_format::rgba8_unorm, 8, 8, 1, 1, gpu::image_usage::depth_attachment},
        gpu::image_spec{image_format::d24_unorm_s8_uint, 8, 8, 1, 1, gpu::image_usage::color_attachment},
        gpu::image_spec{image_format::bc7_unorm, 8, 8, 1, 1, gpu::image_usage::storage},
        gpu::image_spec{image_format::bc1_rgba_srgb, 8, 8, 1, 1, gpu::image_usage::color_attachment}}) {
    INFO(to_string(bad.format) << " " << bad.width << "x" << bad.height << " mips " << bad.mips << " layers "
                               << bad.layers << " usage " << bad.usage);
    CHECK(code(bad) == errc::invalid_image);
  }
  const gpu::image_requirements needs = require(device.image_requirements(good));
  const std::array<gpu::placed_image, 1> at_zero{gpu::placed_image{good, 0}};
  CHECK(device.create_image_memory({}, needs.bytes).error() == errc::invalid_image);
  CHECK(device.create_image_memory(at_zero, needs.bytes - 1).error() == errc::invalid_image);
  if (needs.alignment > 1) {
    const std::array<gpu::placed_image, 1> misaligned{gpu::placed_image{good, needs.alignment / 2}};
    CHECK(device.create_image_memory(misaligned, needs.bytes * 2).error() == errc::invalid_image);
  }
  const std::array<gpu::placed_image, 1> bad_layout{gpu::placed_image{good, 0, image_layout::shader_read_only}};
  CHECK(device.create_image_memory(bad_layout, needs.bytes).error() == errc::invalid_image);
  const std::array<gpu::placed_image, 1> bad_spec{gpu::placed_image{{image_format::rgba8_unorm, 8, 8, 1, 1, 0}, 0}};
  CHECK(device.create_image_memory(bad_spec, needs.bytes).error() == errc::invalid_image);

  auto memory = require(device.create_image_memory(at_zero, needs.bytes));
  auto foreign = require(other.create_image_memory(at_zero, require(other.image_requirements(good)).bytes));
  const gpu::image& img = memory->at(0);
  auto arena = require(device.create_arena(4 * copy_bytes(good)));
  const gpu::arena_range texels = arena->range(0, copy_bytes(good));
  auto list = require(device.create_command_list());
  CHECK(list->transition(img, image_layout::undefined, image_layout::general).error() == errc::command_list_state);
  require(list->begin());
  CHECK(list->transition(img, image_layout::general, image_layout::undefined).error() == errc::invalid_image);
  CHECK(list->transition(img, image_layout::undefined, image_layout::color_attachment).error() == errc::invalid_image);
  CHECK(list->transition(foreign->at(0), image_layout::undefined, image_layout::general).error() ==
        errc::foreign_object);
  CHECK(list->copy(texels, foreign->at(0), image_layout::transfer_dst).error() == errc::foreign_object);
  CHECK(list->copy(texels, img, image_layout::shader_read_only).error() == errc::invalid_image);
  CHECK(list->copy(img, image_layout::transfer_dst, texels).error() == errc::invalid_image);
  CHECK(list->copy(arena->range(0, copy_bytes(good) - 4), img, image_layout::transfer_dst).error() ==
        errc::copy_size_mismatch);
  CHECK(list->copy(arena->range(3 * copy_bytes(good) + 4, copy_bytes(good)), img, image_layout::transfer_dst).error() ==
        errc::range_out_of_bounds);
  CHECK(list->copy(img, image_layout::transfer_src, gpu::arena_range{}).error() == errc::range_out_of_bounds);
  const std::array<gpu::placed_image, 1> wide{
      gpu::placed_image{{image_format::rgba16_float, 8, 8, 1, 1, image_copies}, 0}};
  auto wide_memory = require(device.create_image_memory(wide, require(device.image_requirements(wide[0].spec)).bytes));
  CHECK(list->copy(arena->range(4, copy_bytes(wide[0].spec)), wide_memory->at(0), image_layout::transfer_dst).error() ==
        errc::misaligned_range);
  const std::array<gpu::placed_image, 1> sampled_only{
      gpu::placed_image{{image_format::rgba8_unorm, 8, 8, 1, 1, gpu::image_usage::sampled}, 0}};
  auto sampled_memory =
      require(device.create_image_memory(sampled_only, require(device.image_requirements(sampled_only[0].spec)).bytes));
  CHECK(list->copy(texels, sampled_memory->at(0), image_layout::transfer_dst).error() == errc::invalid_image);
  CHECK(list->copy(sampled_memory->at(0), image_layout::transfer_src, texels).error() == errc::invalid_image);
  CHECK(list->size() == 0);
  require(list->end());
  CHECK(list->barriers() == 0);  // nothing was recorded, no transition either
}

// A clear zeroes every texel of a color image's layers and of a depth
// image: words copied in, cleared, copied out as zeros. And its refusals.
inline void check_image_clear(gpu::device& device, gpu::device& other) {
  const std::array<gpu::placed_image, 2> placed{
      gpu::placed_image{{image_format::rgba32_float, 8, 4, 1, 2, image_copies}, 0},
      gpu::placed_image{{image_format::d32_float, 8, 4, 1, 1, image_copies}, 0}};
  std::array<std::unique_ptr<gpu::image_memory>, 2> memory;
  for (std::size_t i = 0; i < 2; ++i)
    memory[i] = require(device.create_image_memory(std::span(placed).subspan(i, 1),
                                                   require(device.image_requirements(placed[i].spec)).bytes));
  const std::size_t bytes = copy_bytes(placed[0].spec) + copy_bytes(placed[1].spec);
  auto upload = require(device.create_arena(bytes, memory_class::upload));
  auto readback = require(device.create_arena(bytes, memory_class::readback));
  for (std::size_t w = 0; w < bytes / 4; ++w) set_word(*upload, w, 0x3f800000u);  // 1.0f
  // Depth is cleared on a list with graphics stages only.
  auto list = require(device.create_command_list(queue_kind::compute, gpu::list_stages::graphics));
  const std::uint64_t value = submit(device, *list, [&](gpu::command_list& l) {
    if (upload->staged()) require(l.stage(*upload));
    std::size_t at = 0;
    for (const auto& m : memory) {
      const gpu::image& img = m->at(0);
      const std::size_t size = copy_bytes(img.spec());
      require(l.transition(img, image_layout::undefined, image_layout::transfer_dst));
      require(l.copy(upload->range(at, size), img, image_layout::transfer_dst));
      require(l.clear(img, image_layout::transfer_dst));
      require(l.transition(img, image_layout::transfer_dst, image_layout::transfer_src));
      require(l.copy(img, image_layout::transfer_src, readback->range(at, size)));
      at += size;
    }
    if (readback->staged()) require(l.stage(*readback));
  });
  require_reached(device.queue().timeline(), value);
  require(readback->invalidate());
  std::size_t zero = 0;
  for (std::size_t w = 0; w < bytes / 4; ++w)
    if (word_at(*readback, w) == 0) ++zero;
  CHECK(zero == bytes / 4);

  const gpu::image& img = memory[0]->at(0);
  const gpu::image_spec plain{image_format::rgba8_unorm, 8, 8, 1, 1, gpu::image_usage::sampled};
  const gpu::image_spec bc{image_format::bc1_rgba_unorm, 8, 8, 1, 1, image_copies};
  const std::array<gpu::placed_image, 1> no_dst{gpu::placed_image{plain, 0}};
  const std::array<gpu::placed_image, 1> compressed{gpu::placed_image{bc, 0}};
  auto without = require(device.create_image_memory(no_dst, require(device.image_requirements(plain)).bytes));
  auto blocks = require(device.create_image_memory(compressed, require(device.image_requirements(bc)).bytes));
  auto foreign = require(
      other.create_image_memory(std::span(placed).first(1), require(other.image_requirements(placed[0].spec)).bytes));
  auto refusing = require(device.create_command_list());
  CHECK(refusing->clear(img, image_layout::transfer_dst).error() == errc::command_list_state);
  require(refusing->begin());
  CHECK(refusing->clear(img, image_layout::shader_read_only).error() == errc::invalid_image);
  CHECK(refusing->clear(without->at(0), image_layout::general).error() == errc::invalid_image);
  CHECK(refusing->clear(blocks->at(0), image_layout::transfer_dst).error() == errc::invalid_image);
  CHECK(refusing->clear(foreign->at(0), image_layout::transfer_dst).error() == errc::foreign_object);
  CHECK(refusing->clear(memory[1]->at(0), image_layout::transfer_dst).error() == errc::unsupported_command);
  CHECK(refusing->size() == 0);
  require(refusing->end());
}

// Images made in a layout: a copy out of one made in transfer-src needs no
// transition.
inline void check_image_made_in_layout(gpu::device& device) {
  const gpu::image_spec s{image_format::rgba8_unorm, 16, 8, 1, 1, image_copies};
  const std::array<gpu::placed_image, 1> placed{gpu::placed_image{s, 0, image_layout::transfer_src}};
  auto memory = require(device.create_image_memory(placed, require(device.image_requirements(s)).bytes));
  auto arena = require(device.create_arena(copy_bytes(s), memory_class::readback));
  auto list = require(device.create_command_list());
  require_reached(device.queue().timeline(), submit(device, *list, [&](gpu::command_list& l) {
                    require(l.copy(memory->at(0), image_layout::transfer_src, arena->whole()));
                    if (arena->staged()) require(l.stage(*arena));
                  }));
}

// Texels of formats of every kind (block-compressed, 16-bit depth, one
// byte, packed) copied in and out exactly, each level sized in whole
// blocks (copy_bytes); a depth-stencil image's copies and a copy at an
// offset that is no multiple of 4 refused. Formats the device cannot copy
// are left out (none on the null device).
inline void check_format_round_trip(gpu::device& device) {
  constexpr std::uint32_t copies = image_copies | gpu::image_usage::sampled;
  std::vector<gpu::placed_image> placed;
  for (const gpu::image_spec& s : {gpu::image_spec{image_format::bc7_unorm, 10, 6, 1, 1, copies},
                                   gpu::image_spec{image_format::bc1_rgba_srgb, 5, 5, 1, 2, copies},
                                   gpu::image_spec{image_format::d16_unorm, 6, 2, 1, 1, image_copies},
                                   gpu::image_spec{image_format::r8_unorm, 12, 3, 1, 1, copies},
                                   gpu::image_spec{image_format::b10g11r11_float, 4, 2, 1, 1, copies}})
    if ((device.format_features(s.format) & copies & s.usage) == (copies & s.usage)) placed.push_back({s, 0});
  if (device.kind() == "null") CHECK(placed.size() == 5);
  REQUIRE_FALSE(placed.empty());
  CHECK(copy_bytes(gpu::image_spec{image_format::bc7_unorm, 10, 6, 1, 1, copies}) == 3 * 2 * 16);
  CHECK(copy_bytes(gpu::image_spec{image_format::bc1_rgba_srgb, 5, 5, 1, 2, copies}) == 2 * 2 * 8 * 2);
  std::uint64_t block = 0;
  std::vector<std::uint64_t> at;
  std::uint64_t total = 0;
  for (gpu::placed_image& p : placed) {
    const gpu::image_requirements needs = require(device.image_requirements(p.spec));
    p.offset = (block + needs.alignment - 1) / needs.alignment * needs.alignment;
    block = p.offset + needs.bytes;
    at.push_back(total);
    total += (copy_bytes(p.spec) + 15) / 16 * 16;
  }
  auto memory = require(device.create_image_memory(placed, block));
  auto upload = require(device.create_arena(total, memory_class::upload));
  auto readback = require(device.create_arena(total, memory_class::readback));
  for (std::size_t w = 0; w < total / 4; ++w) set_word(*upload, w, 0x1234u + 0x10001u * static_cast<std::uint32_t>(w));
  auto list = require(device.create_command_list());
  require_reached(device.queue().timeline(), submit(device, *list, [&](gpu::command_list& l) {
                    if (upload->staged()) require(l.stage(*upload));
                    for (std::size_t i = 0; i < placed.size(); ++i) {
                      const gpu::image& img = memory->at(i);
                      const std::uint64_t bytes = copy_bytes(img.spec());
                      require(l.transition(img, image_layout::undefined, image_layout::transfer_dst));
                      require(l.copy(upload->range(at[i], bytes), img, image_layout::transfer_dst));
                      require(l.transition(img, image_layout::transfer_dst, image_layout::transfer_src));
                      require(l.copy(img, image_layout::transfer_src, readback->range(at[i], bytes)));
                    }
                    if (readback->staged()) require(l.stage(*readback));
                  }));
  require(readback->invalidate());
  const std::span<const std::byte> in = std::as_const(*upload).bytes();
  const std::span<const std::byte> out = std::as_const(*readback).bytes();
  for (std::size_t i = 0; i < placed.size(); ++i) {
    INFO(to_string(placed[i].spec.format));
    CHECK(std::memcmp(in.data() + at[i], out.data() + at[i], copy_bytes(placed[i].spec)) == 0);
  }

  auto refused = require(device.create_command_list());
  require(refused->begin());
  for (std::size_t i = 0; i < placed.size(); ++i)
    if (placed[i].spec.format == image_format::r8_unorm)
      CHECK(refused->copy(upload->range(1, copy_bytes(placed[i].spec)), memory->at(i), image_layout::transfer_dst)
                .error() == errc::misaligned_range);
  for (image_format f : {image_format::d24_unorm_s8_uint, image_format::d32_float_s8_uint}) {
    const gpu::image_spec s{f, 4, 4, 1, 1, image_copies};
    if ((device.format_features(f) & image_copies) != image_copies) continue;
    const std::array<gpu::placed_image, 1> one{gpu::placed_image{s, 0}};
    auto ds = require(device.create_image_memory(one, require(device.image_requirements(s)).bytes));
    const error e = refused->copy(upload->range(0, copy_bytes(s)), ds->at(0), image_layout::transfer_dst).error();
    CHECK(e == errc::invalid_image);
    CHECK(e.detail.find("depth-stencil") != std::string::npos);
    CHECK(refused->copy(ds->at(0), image_layout::transfer_src, readback->range(0, copy_bytes(s))).error() ==
          errc::invalid_image);
  }
  CHECK(refused->size() == 0);
  require(refused->end());
}

}  // namespace ferrum::test
