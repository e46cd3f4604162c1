// examples/plans/image_copies.json, a ferrum.plan.v2 plan of images that
// only copies reach, and waves that run it and check the texels, for the
// tests of images in lanes on the null device and on Vulkan (one 16x8
// bucket, frame@16x8x1):
//
//   node/fill.a  copies texels from resource/in (upload) into image/a and
//                image/history (transfer-dst)
//   node/read.a  copies image/a out into resource/out (readback)
//   node/fill.b  copies texels into image/b (transfer-dst)
//   node/read.b  copies image/b and image/history out (transfer-src)
//
// Each a binding node, after the one before. image/a and image/b (r32-float,
// pool/targets, interval) are never live together; image/history
// (rgba8-unorm, pool/history) is persistent.
#pragma once

#include "example_plans.hpp"
#include "gpu_test_support.hpp"
#include "plan_builder.hpp"
#include "test_namespace.hpp"
#include "wave_outcome.hpp"

#include "ferrum/binding/image_access.hpp"

#include <boost/asio/io_context.hpp>

#include <atomic>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace ferrum::test {

inline constexpr std::uint32_t image_width = 16;
inline constexpr std::uint32_t image_height = 8;
// Each image's texels: r32-float and rgba8-unorm alike.
inline constexpr std::size_t image_bytes = std::size_t{image_width} * image_height * 4;

// examples/plans/image_copies.json with `lanes` lanes.
inline ferrum::plan image_copy_plan(std::uint32_t lanes) {
  ferrum::plan p = load_source_plan("examples/plans/image_copies.json");
  p.lanes = lanes;
  return p;
}

// The plan with image/a, image/b and image/history of other formats of 4
// bytes a texel (each copied byte for byte as the words the waves check).
inline ferrum::plan with_image_formats(ferrum::plan p, image_format a, image_format b, image_format history) {
  for (ferrum::resource_descriptor& r : p.resources) {
    if (r.id.view() == "image/a") r.image->format = a;
    if (r.id.view() == "image/b") r.image->format = b;
    if (r.id.view() == "image/history") r.image->format = history;
  }
  return p;
}

// Where each image's texels go in resource/in and resource/out.
inline std::size_t section_of(std::string_view image) {
  if (image == "image/a") return 0;
  if (image == "image/b") return 1;
  return 2;
}

inline std::uint32_t texel_word(std::uint64_t wave, std::size_t section, std::size_t word) {
  return static_cast<std::uint32_t>((section + 1) << 28 | (wave & 0xfff) << 16 | word);
}

// Copies each image the node writes in from its section of resource/in
// (the host writes the wave's texels there first), and each it reads out
// into its section of resource/out, naming the layout the node's access
// needs. Keeps what read.b's resource/out is on the host, and the wave.
struct image_copier {
  std::atomic<int>* wrong;
  std::span<std::byte>* out;
  std::atomic<std::uint64_t>* last_wave;

  void operator()(const ferrum::encode_context& c) const {
    for (const ferrum::node_image& i : c.images) {
      if (i.layout != ferrum::layout_of(i.access) || i.image == nullptr) ++*wrong;
      const std::size_t section = section_of(i.id->view());
      if (i.access == ferrum::resource_access::transfer_dst) {
        const ferrum::node_resource* in = c.resource("resource/in");
        std::span<std::byte> host = in->bytes().value();
        for (std::size_t w = 0; w < image_bytes / 4; ++w) {
          const std::uint32_t v = texel_word(c.wave, section, w);
          std::memcpy(host.data() + section * image_bytes + 4 * w, &v, 4);
        }
        require(c.commands.copy({in->range.arena, in->range.offset + section * image_bytes, image_bytes}, *i.image,
                                i.layout));
      } else {
        const ferrum::node_resource* target = c.resource("resource/out");
        require(c.commands.copy(*i.image, i.layout,
                                {target->range.arena, target->range.offset + section * image_bytes, image_bytes}));
      }
    }
    if (c.node_index == 3) {
      *out = c.resource("resource/out")->bytes().value();
      *last_wave = c.wave;
    }
  }
};

// Runs `waves` waves of `extent` one after another on a scheduler over
// `device`, each encoded by `encode`; after each, `check(wave)` with the
// wave's id, which the encoder left in `wave`. With `images`, each wave
// names the engine's images (wave_request::images), each in the layout
// the wave before left it (the report's).
template <class Encoder, class Check>
void run_waves_in_turn(const std::shared_ptr<const ferrum::compiled_program>& program, ferrum::gpu::device& device,
                       std::size_t waves, ferrum::bucket_capacity extent, Encoder& encode,
                       const std::atomic<std::uint64_t>& wave, Check&& check,
                       std::vector<ferrum::imported_image>* images = nullptr) {
  boost::asio::io_context context;
  auto scheduler =
      ferrum::scheduler::create(program, device, context.get_executor(), {.fence_timeout = std::chrono::seconds(60)})
          .value();
  for (std::size_t w = 0; w < waves; ++w) {
    ferrum::wave_request request{"frame", extent};
    if (images != nullptr) request.images = *images;
    auto done = sched_test::submit(*scheduler, encode, request);
    context.restart();
    context.run();
    const sched_test::outcome o = sched_test::get(done, std::chrono::seconds(60));
    INFO(o.report.message);
    REQUIRE_FALSE(o.ec);
    if (images != nullptr) images->assign(o.report.images().begin(), o.report.images().end());
    check(wave.load());
  }
}

// Runs `waves` waves one after another on `program`; how many texels each
// wave read back differ from what it wrote (the history's: what the same
// wave wrote, as fill.a writes it before read.b reads it).
inline std::size_t run_image_waves(const std::shared_ptr<const ferrum::compiled_program>& program,
                                   ferrum::gpu::device& device, std::size_t waves) {
  std::atomic<int> wrong{0};
  std::span<std::byte> out;
  std::atomic<std::uint64_t> wave{0};
  image_copier encode{&wrong, &out, &wave};
  std::size_t differ = 0;
  run_waves_in_turn(program, device, waves, {image_width, image_height, 1}, encode, wave, [&](std::uint64_t id) {
    for (std::size_t section = 0; section < 3; ++section)
      for (std::size_t word = 0; word < image_bytes / 4; ++word) {
        std::uint32_t v = 0;
        std::memcpy(&v, out.data() + section * image_bytes + 4 * word, 4);
        if (v != texel_word(id, section, word)) ++differ;
      }
  });
  CHECK(wrong == 0);
  return differ;
}

}  // namespace ferrum::test
