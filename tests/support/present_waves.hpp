// examples/plans/present.json, a ferrum.plan.v2 plan whose images are the
// engine's (an `imported` pool), and the engine side of its waves, for the
// tests of imported images on the null device and of a swapchain's image as
// a plan resource on Vulkan (one 16x8 bucket, frame@16x8x1):
//
//   node/draw     copies the wave's texels from resource/in (upload) into
//                 image/present (transfer-dst)
//   node/check    copies image/present and image/engine out into
//                 resource/out (readback; transfer-src)
//   node/present  presents image/present: ferrum puts it in present-src
//
// image/engine is read first: it holds what the engine put in it, in the
// layout the wave names.
#pragma once

#include "example_plans.hpp"
#include "gpu_test_support.hpp"
#include "test_namespace.hpp"

#include "ferrum/binding/image_access.hpp"
#include "ferrum/scheduler/scheduler.hpp"

#include <atomic>
#include <cstring>
#include <span>

namespace ferrum::test {

inline constexpr std::uint32_t present_width = 16;
inline constexpr std::uint32_t present_height = 8;
inline constexpr std::size_t present_bytes = std::size_t{present_width} * present_height * 4;

// examples/plans/present.json, its images of `format`.
inline ferrum::plan present_plan(image_format format = image_format::rgba8_unorm) {
  ferrum::plan p = load_source_plan("examples/plans/present.json");
  for (resource_descriptor& r : p.resources)
    if (r.image) r.image->format = format;
  return p;
}

// The words wave `w` draws, and those the engine put in its image.
inline std::uint32_t drawn_word(std::uint64_t wave, std::size_t word) {
  return static_cast<std::uint32_t>(0x40000000u | (wave & 0xfff) << 16 | word);
}
inline std::uint32_t engine_word(std::size_t word) { return static_cast<std::uint32_t>(0x7e000000u | word); }

// An image of its own memory on `device`, as an engine makes one.
inline std::unique_ptr<gpu::image_memory> engine_image(gpu::device& device, const gpu::image_spec& spec) {
  const gpu::image_requirements needs = require(device.image_requirements(spec));
  const gpu::placed_image placed{spec, 0};
  return require(device.create_image_memory(std::span(&placed, 1), needs.bytes));
}

// Fills `image` with engine_word()s by a list of the engine's, leaving it in
// transfer-dst (what the waves name).
inline void fill_engine_image(gpu::device& device, const gpu::image& image) {
  auto upload = require(device.create_arena(present_bytes, memory_class::upload));
  for (std::size_t w = 0; w < present_bytes / 4; ++w) set_word(*upload, w, engine_word(w));
  auto list = require(device.create_command_list());
  const std::uint64_t value = submit(device, *list, [&](gpu::command_list& l) {
    if (upload->staged()) require(l.stage(*upload));
    require(l.transition(image, image_layout::undefined, image_layout::transfer_dst));
    require(l.copy(upload->whole(), image, image_layout::transfer_dst));
  });
  require_reached(device.queue().timeline(), value);
}

// The nodes of present.json. Counts a node that finds no image, the engine's
// image other than `engine`, or an image in another layout than
// its access needs.
struct present_encoder {
  std::atomic<int>* wrong;
  const gpu::image* engine;

  void operator()(const ferrum::encode_context& c) const {
    for (const ferrum::node_image& i : c.images)
      if (i.image == nullptr || i.layout != ferrum::layout_of(i.access) ||
          (i.id->view() == "image/engine" && i.image != engine))
        ++*wrong;
    const ferrum::node_image* present = c.image("image/present");
    if (present == nullptr) return (void)++*wrong;
    if (c.node_index == 0) {
      const ferrum::node_resource* in = c.resource("resource/in");
      std::span<std::byte> host = in->bytes().value();
      for (std::size_t w = 0; w < present_bytes / 4; ++w) {
        const std::uint32_t v = drawn_word(c.wave, w);
        std::memcpy(host.data() + 4 * w, &v, 4);
      }
      // Replayed lists record nothing; the host's texels are the wave's.
      if (!c.replay) require(c.commands.copy(in->range, *present->image, present->layout));
    } else if (c.node_index == 1 && !c.replay) {
      const ferrum::node_resource* out = c.resource("resource/out");
      require(c.commands.copy(*present->image, present->layout, {out->range.arena, out->range.offset, present_bytes}));
      const ferrum::node_image* from_engine = c.image("image/engine");
      require(c.commands.copy(*from_engine->image, from_engine->layout,
                              {out->range.arena, out->range.offset + present_bytes, present_bytes}));
    }
  }
};

// How many words of a wave's resource/out differ from what it drew and
// what the engine's image holds.
inline std::size_t present_out_differs(std::span<const std::byte> out, std::uint64_t wave) {
  std::size_t differ = 0;
  for (std::size_t w = 0; w < present_bytes / 4; ++w) {
    std::uint32_t drawn = 0, engine = 0;
    std::memcpy(&drawn, out.data() + 4 * w, 4);
    std::memcpy(&engine, out.data() + present_bytes + 4 * w, 4);
    if (drawn != drawn_word(wave, w)) ++differ;
    if (engine != engine_word(w)) ++differ;
  }
  return differ;
}

}  // namespace ferrum::test
