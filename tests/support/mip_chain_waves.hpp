// A plan whose nodes reach parts of one image (docs/plan-format.md, "Mip
// levels and layers"), and waves that run it and check its texels against
// a host computation, for the tests of subresources on the null device and
// on Vulkan (one 16x8 bucket):
//
//   node/fill   copies the host's texels from resource/in (upload) into mip 0
//               of image/chain (rgba32-float, 3 mips, the bucket's extent)
//   node/down1  samples mip 0, writes mip 1 = mip 0 x 3 + 0.5 (image_affine,
//               through a view of each level)
//   node/down2  samples mip 1, writes mip 2 = mip 1 x 2 + 1
//   node/flat   samples mip 2, writes image/out (4x2) = mip 2
//   node/read   copies image/out into resource/out (readback)
//
// image_affine maps texel (x, y) to texel (x, y), so out(x, y) =
// (in(x, y) x 3 + 0.5) x 2 + 1 in every channel, exactly (small integers).
#pragma once

#include "image_copy_waves.hpp"
#include "test_namespace.hpp"
#include "wave_outcome.hpp"

#include "ferrum/binding/plan_json.hpp"
#include "ferrum/gpu/builtin_kernels.hpp"

#include <boost/asio/io_context.hpp>

#include <atomic>
#include <bit>
#include <cstring>
#include <memory>
#include <string>

namespace ferrum::test {

inline constexpr std::uint32_t chain_width = 16;
inline constexpr std::uint32_t chain_height = 8;
// Level 2 of the chain, and image/out: 4 x 2 texels of 16 bytes.
inline constexpr std::size_t chain_out_bytes = std::size_t{4} * 2 * 16;

inline ferrum::plan mip_chain_plan() {
  const char* storage =
      R"("storage": {"allocator": "linear-arena", "view": "contiguous", "contract": "c2a8e4f06b1d9c3a7e5f2b8d0c6a4e1f9b3d7c5a2e8f0b6d4c1a9e3f7b5d2c8a"})";
  const std::string text = std::string(R"({
  "format": "ferrum.plan.v2",
  "nodes": [
    { "id": "node/fill", "resources": ["resource/args", "resource/in", "image/chain"], "binding": "resource/args",
      "access": {"resource/args": "read", "resource/in": "read",
                 "image/chain": {"access": "transfer-dst", "mips": [0, 1]}} },
    { "id": "node/down1", "resources": ["image/chain"], "after": ["node/fill"],
      "access": {"image/chain": [{"access": "sampled", "mips": [0, 1]}, {"access": "storage-write", "mips": [1, 1]}]} },
    { "id": "node/down2", "resources": ["image/chain"], "after": ["node/down1"],
      "access": {"image/chain": [{"access": "storage-write", "mips": [2, 1]}, {"access": "sampled", "mips": [1, 1]}]} },
    { "id": "node/flat", "resources": ["image/chain", "image/out"], "after": ["node/down2"],
      "access": {"image/chain": {"access": "sampled", "mips": [2, 1]}, "image/out": "storage-write"} },
    { "id": "node/read", "resources": ["image/out", "resource/out"], "after": ["node/flat"],
      "access": {"image/out": "transfer-src", "resource/out": "write"} }
  ],
  "resources": [
    { "id": "resource/args", "pool": "pool/bindings", "kind": "binding", "node": "node/fill",
      "demand": {"fixed": 16}, "alignment": 16, "lifetime": "invocation", "usage": "binding", "element": "u8",
      "storage": {"allocator": "linear-arena", "view": "contiguous", "contract": "5e1d9a3c7b2f0e8d4a6c1b9f3e7d2a5c8b0f4e6d1a3c9b7f2e5d8a0c4b6f1e3d"} },
    { "id": "resource/in", "pool": "pool/input", "kind": "workspace", "demand": {"fixed": 2048}, "alignment": 16,
      "lifetime": "invocation", "usage": "storage", "element": "f32", )") +
                           storage + R"( },
    { "id": "resource/out", "pool": "pool/output", "kind": "workspace", "demand": {"fixed": 128}, "alignment": 16,
      "lifetime": "invocation", "usage": "storage", "element": "f32", )" +
                           storage + R"( },
    { "id": "image/chain", "pool": "pool/targets", "kind": "workspace", "lifetime": "invocation",
      "image": {"format": "rgba32-float", "extent": "bucket", "mips": 3} },
    { "id": "image/out", "pool": "pool/targets", "kind": "workspace", "lifetime": "invocation",
      "image": {"format": "rgba32-float", "extent": [4, 2]} }
  ],
  "buckets": [
    { "class": "frame", "capacity": [16, 8, 1],
      "budgets": [ {"pool": "pool/bindings", "min": 0, "max": 4096},
                   {"pool": "pool/input", "min": 0, "max": 65536},
                   {"pool": "pool/output", "min": 0, "max": 65536},
                   {"pool": "pool/targets", "min": 0, "max": 1048576} ] }
  ],
  "pools": {"pool/input": {"memory": "upload"}, "pool/output": {"memory": "readback"}},
  "lanes": 2,
  "budget_bytes": 16777216
})";
  return ferrum::parse_plan(text).value();
}

// The host's texel word w of mip 0 in wave `wave`: small integers as floats.
inline float chain_word(std::uint64_t wave, std::size_t w) noexcept {
  return static_cast<float>((wave % 7) * 64 + w % 512);
}

// Each node's commands: copies, and image_affine through the views of the
// parts of image/chain it reaches (node_image::operand). Counts a part it
// does not find, or one without a view where it is part of the image.
struct mip_chain_encoder {
  const gpu::kernel* affine;
  std::atomic<int>* wrong;
  std::span<std::byte>* out;
  std::atomic<std::uint64_t>* last_wave;

  void step(const ferrum::encode_context& c, std::uint32_t to, float a, float b) const {
    const ferrum::node_image* dst = to < 3 ? c.image("image/chain", to) : c.image("image/out");
    const ferrum::node_image* src = c.image("image/chain", to < 3 ? to - 1 : 2);
    if (dst == nullptr || src == nullptr || src->view == nullptr || (to < 3 && dst->view == nullptr)) {
      ++*wrong;
      return;
    }
    const std::array<std::uint32_t, 2> push{std::bit_cast<std::uint32_t>(a), std::bit_cast<std::uint32_t>(b)};
    require(c.commands.dispatch(*affine, dst->operand(), src->operand(), push));
  }

  void operator()(const ferrum::encode_context& c) const {
    switch (c.node_index) {
      case 0: {
        const ferrum::node_resource* in = c.resource("resource/in");
        std::span<std::byte> host = in->bytes().value();
        for (std::size_t w = 0; w < host.size() / 4; ++w) {
          const float v = chain_word(c.wave, w);
          std::memcpy(host.data() + 4 * w, &v, 4);
        }
        const ferrum::node_image* mip0 = c.image("image/chain", 0);
        require(c.commands.copy(in->range, *mip0->image, mip0->layout));
        break;
      }
      case 1:
        return step(c, 1, 3.0f, 0.5f);
      case 2:
        return step(c, 2, 2.0f, 1.0f);
      case 3:
        return step(c, 3, 1.0f, 0.0f);
      default: {
        const ferrum::node_image* image = c.image("image/out");
        const ferrum::node_resource* target = c.resource("resource/out");
        require(c.commands.copy(*image->image, image->layout, target->range));
        *out = target->bytes().value();
        *last_wave = c.wave;
      }
    }
  }
};

// Runs `waves` waves one after another; how many words of resource/out
// differ from the host's computation.
inline std::size_t run_mip_chain_waves(const std::shared_ptr<const ferrum::compiled_program>& program,
                                       ferrum::gpu::device& device, std::size_t waves) {
  auto affine = require(device.create_kernel(gpu::builtin::image_affine()));
  std::atomic<int> wrong{0};
  std::span<std::byte> out;
  std::atomic<std::uint64_t> wave{0};
  mip_chain_encoder encode{affine.get(), &wrong, &out, &wave};
  std::size_t differ = 0;
  run_waves_in_turn(program, device, waves, {chain_width, chain_height, 1}, encode, wave, [&](std::uint64_t id) {
    REQUIRE(out.size() >= chain_out_bytes);
    for (std::size_t word = 0; word < chain_out_bytes / 4; ++word) {
      // Texel (x, y) of out, channel ch, from texel (x, y) of mip 0.
      const std::size_t x = word / 4 % 4, y = word / 16, ch = word % 4;
      const float expected = (chain_word(id, (y * chain_width + x) * 4 + ch) * 3.0f + 0.5f) * 2.0f + 1.0f;
      float v = 0;
      std::memcpy(&v, out.data() + 4 * word, 4);
      if (v != expected) ++differ;
    }
  });
  CHECK(wrong == 0);
  return differ;
}

}  // namespace ferrum::test
