// examples/plans/deferred_frame.json, an engine's deferred frame as one
// ferrum.plan.v2 plan, and waves that run it and check what the engine's
// image holds against a host computation, exactly, for the tests of the
// frame on the null device and on Vulkan (one 16x8 bucket):
//
//   node/upload          the host's light input (resource/in, upload) into
//                        image/light.in (rgba32-float)
//   node/shadow.cascadeI draws cascade I into layer I of image/shadow
//                        (d32-float, 16x16, 3 layers): raster
//   node/gbuffer         draws albedo (rgba8-srgb), normals (rg16-float) and
//                        depth-stencil (d32-float-s8-uint): raster
//   node/lighting        hdr = light.in x 2 + 1, then, where the raster
//                        nodes drew, + albedo x 4 + normal x 2 + depth x 8
//                        + shadow layer I x 2^I (image_affine, image_blend)
//   node/bloom.*         image/bloom (rgba32-float, bucket/2, 3 mips): mip 0
//                        = hdr x 0.5, mip i+1 = mip i x 0.5 down; up, mip i
//                        += mip i+1 (scaled up: image_blend)
//   node/taa             taa = hdr + bloom mip 0 x 0.25, then the TAA term
//                        (taa_blend below) with image/taa.previous, the
//                        history of image/taa: what the wave before wrote
//   node/tonemap         the engine's image/frame (imported) = taa x 0.5 + 1
//   node/readback        image/frame into resource/out (readback)
//
// The null device records no native commands: its raster nodes draw
// nothing, so there lighting takes light.in alone and the check covers the
// compute and transfer path. A device that draws (Vulkan) takes
// `deferred_raster`: the engine's rendering in the raster nodes, which
// clears each attachment and draws over half of it, to the values below;
// lighting then samples every one, so the check covers what they drew. Every value is a small dyadic
// fraction, so each device's arithmetic is exact.
#pragma once

#include "example_plans.hpp"
#include "gpu_test_support.hpp"
#include "image_copy_waves.hpp"
#include "test_namespace.hpp"
#include "wave_outcome.hpp"

#include "ferrum/gpu/builtin_kernels.hpp"

#include <array>
#include <atomic>
#include <bit>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace ferrum::test {

inline constexpr std::uint32_t frame_width = 16;
inline constexpr std::uint32_t frame_height = 8;
inline constexpr std::size_t frame_words = std::size_t{frame_width} * frame_height * 4;
inline constexpr std::size_t frame_bytes = frame_words * 4;

inline ferrum::plan deferred_frame_plan() { return load_source_plan("examples/plans/deferred_frame.json"); }

// What the raster nodes clear their attachments to (a device that draws):
// cascade I's depth, the G-buffer's albedo (0 and 1: exact through sRGB),
// normals (exact in half floats) and depth; then what they draw over the
// left half of each (the texels x < drawn_columns; depth-tested, less, so
// nearer than the clear).
inline constexpr std::array<float, 3> cascade_depth{0.25f, 0.5f, 0.75f};
inline constexpr std::array<float, 4> albedo_clear{1.0f, 0.0f, 1.0f, 1.0f};
inline constexpr std::array<float, 2> normal_clear{0.5f, -0.25f};
inline constexpr float gbuffer_depth_clear = 1.0f;
inline constexpr std::array<float, 3> cascade_drawn{0.125f, 0.375f, 0.625f};
inline constexpr std::array<float, 4> albedo_drawn{0.0f, 1.0f, 1.0f, 0.0f};
inline constexpr std::array<float, 2> normal_drawn{-0.5f, 0.25f};
inline constexpr float gbuffer_depth_drawn = 0.5f;
inline constexpr std::uint32_t drawn_columns = 8;

// The engine's rendering in a raster node (a device that draws): called for
// node/shadow.cascade0..2 and node/gbuffer.
using deferred_raster = std::function<void(const ferrum::encode_context&)>;

// The host's light input of wave `wave`, channel `c` of texel `t`.
inline float light_word(std::uint64_t wave, std::size_t t, std::size_t c) noexcept {
  return static_cast<float>((wave % 5) * 16 + t % 32 + c);
}

// The nodes of deferred_frame.json, in its order.
enum class frame_node : std::uint8_t {
  upload,
  cascade0,
  cascade1,
  cascade2,
  gbuffer,
  lighting,
  down0,
  down1,
  down2,
  up1,
  up0,
  taa,
  tonemap,
  readback
};

// ---- The TAA term (the one place that knows where the previous frame's
// TAA output comes from): image/taa.previous is image/taa's history, what
// the wave before wrote (encode_context::history_wave), whichever lane it
// ran on; on the first wave ferrum reset it to zeros (history_wave 0), and
// the term is skipped, as an engine's TAA does after a reset. ----
inline constexpr float taa_current_weight = 0.5f;
inline constexpr float taa_previous_weight = 0.5f;

// Whether wave's TAA reads a previous frame, and which wave's.
inline std::optional<std::uint64_t> taa_previous_wave(const ferrum::encode_context& c) noexcept {
  if (c.history_wave == 0) return std::nullopt;
  return c.history_wave;
}

// The TAA term, on the host: taa = taa x 0.5 + previous x 0.5.
inline float taa_blend(float current, float previous) noexcept {
  return current * taa_current_weight + previous * taa_previous_weight;
}
// ---- end of the TAA term ----

// What a wave computes on the host, per texel word: the TAA output (for the
// next waves' TAA term) and the engine's image.
struct frame_texels {
  std::vector<float> taa = std::vector<float>(frame_words);
  std::vector<float> frame = std::vector<float>(frame_words);
};

// The host's computation of wave `wave` (`drawn`: the raster nodes drew),
// its TAA term from `previous` (the earlier wave's TAA output) or none.
inline frame_texels host_frame(std::uint64_t wave, bool drawn, const std::vector<float>* previous) {
  constexpr std::size_t w = frame_width, h = frame_height;
  std::vector<float> hdr(frame_words);
  for (std::size_t t = 0; t < w * h; ++t)
    for (std::size_t c = 0; c < 4; ++c) {
      float v = light_word(wave, t, c) * 2.0f + 1.0f;
      if (drawn) {
        // What sampling gives: (r, g, b, a), absent channels 0 and alpha
        // 1, a depth image's depth in red; drawn over the left half.
        const bool left = t % w < drawn_columns;
        const auto depth = [&](float d) { return c == 0 ? d : c == 3 ? 1.0f : 0.0f; };
        const std::array<float, 2>& n = left ? normal_drawn : normal_clear;
        const std::array<float, 4> normal{n[0], n[1], 0.0f, 1.0f};
        v = v + (left ? albedo_drawn : albedo_clear)[c] * 4.0f;
        v = v + normal[c] * 2.0f;
        v = v + depth(left ? gbuffer_depth_drawn : gbuffer_depth_clear) * 8.0f;
        for (std::size_t layer = 0; layer < 3; ++layer)
          v = v + depth(left ? cascade_drawn[layer] : cascade_depth[layer]) * static_cast<float>(1u << layer);
      }
      hdr[t * 4 + c] = v;
    }
  // The bloom chain: level i of (w >> (i + 1)) x (h >> (i + 1)) texels.
  std::array<std::vector<float>, 3> bloom;
  const auto width = [&](std::size_t level) { return w >> (level + 1); };
  const auto height = [&](std::size_t level) { return h >> (level + 1); };
  for (std::size_t level = 0; level < 3; ++level) {
    bloom[level].resize(width(level) * height(level) * 4);
    for (std::size_t y = 0; y < height(level); ++y)
      for (std::size_t x = 0; x < width(level); ++x)
        for (std::size_t c = 0; c < 4; ++c) {
          const float above =
              level == 0 ? hdr[(y * w + x) * 4 + c] : bloom[level - 1][(y * width(level - 1) + x) * 4 + c];
          bloom[level][(y * width(level) + x) * 4 + c] = above * 0.5f;
        }
  }
  // Up: texel (x, y) of level i from texel (x * its width / i's, ...) of i + 1.
  for (std::size_t level = 2; level-- > 0;)
    for (std::size_t y = 0; y < height(level); ++y)
      for (std::size_t x = 0; x < width(level); ++x)
        for (std::size_t c = 0; c < 4; ++c) {
          const std::size_t sx = x * width(level + 1) / width(level), sy = y * height(level + 1) / height(level);
          float& v = bloom[level][(y * width(level) + x) * 4 + c];
          v = v * 1.0f + bloom[level + 1][(sy * width(level + 1) + sx) * 4 + c] * 1.0f;
        }
  frame_texels out;
  for (std::size_t y = 0; y < h; ++y)
    for (std::size_t x = 0; x < w; ++x)
      for (std::size_t c = 0; c < 4; ++c) {
        const std::size_t word = (y * w + x) * 4 + c;
        const std::size_t sx = x * width(0) / w, sy = y * height(0) / h;
        float taa = hdr[word] * 1.0f + 0.0f;
        taa = taa * 1.0f + bloom[0][(sy * width(0) + sx) * 4 + c] * 0.25f;
        if (previous != nullptr) taa = taa_blend(taa, (*previous)[word]);
        out.taa[word] = taa;
        out.frame[word] = taa * 0.5f + 1.0f;
      }
  return out;
}

// Each node's commands (image_affine, image_blend, copies), through the
// views of the parts of images it reaches; `raster` draws the raster nodes
// where the device draws. Counts a part it does not find.
struct deferred_frame_encoder {
  const gpu::kernel* affine;
  const gpu::kernel* blend;
  const deferred_raster* raster;  // null: the device draws nothing
  std::atomic<int>* wrong;
  std::span<std::byte>* out;
  std::atomic<std::uint64_t>* last_wave;
  std::atomic<std::uint64_t>* taa_previous;  // the wave whose TAA output node/taa read; 0: none

  static std::array<std::uint32_t, 2> push(float a, float b) noexcept {
    return {std::bit_cast<std::uint32_t>(a), std::bit_cast<std::uint32_t>(b)};
  }

  // to = from x a + b (affine), or to = to x a + from x b (blend), after a
  // barrier where the node recorded a kernel before.
  void step(const ferrum::encode_context& c, const gpu::kernel& k, const ferrum::node_image* to,
            const ferrum::node_image* from, float a, float b, bool after = false) const {
    if (to == nullptr || from == nullptr) return (void)++*wrong;
    if (after) require(c.commands.barrier());
    require(c.commands.dispatch(k, to->operand(), from->operand(), push(a, b)));
  }

  void lighting(const ferrum::encode_context& c) const {
    const ferrum::node_image* hdr = c.image("image/hdr");
    step(c, *affine, hdr, c.image("image/light.in"), 2.0f, 1.0f);
    if (raster == nullptr) return;
    step(c, *blend, hdr, c.image("image/gbuffer.albedo"), 1.0f, 4.0f, true);
    step(c, *blend, hdr, c.image("image/gbuffer.normal"), 1.0f, 2.0f, true);
    step(c, *blend, hdr, c.image("image/gbuffer.depth"), 1.0f, 8.0f, true);
    for (std::uint32_t layer = 0; layer < 3; ++layer)
      step(c, *blend, hdr, c.image("image/shadow", 0, layer), 1.0f, static_cast<float>(1u << layer), true);
  }

  void taa(const ferrum::encode_context& c) const {
    const ferrum::node_image* taa = c.image("image/taa");
    step(c, *affine, taa, c.image("image/hdr"), 1.0f, 0.0f);
    step(c, *blend, taa, c.image("image/bloom", 0), 1.0f, 0.25f, true);
    // The TAA term.
    const std::optional<std::uint64_t> previous = taa_previous_wave(c);
    *taa_previous = previous.value_or(0);
    if (previous) step(c, *blend, taa, c.image("image/taa.previous"), taa_current_weight, taa_previous_weight, true);
  }

  void operator()(const ferrum::encode_context& c) const {
    const auto bloom = [&](std::uint32_t mip) { return c.image("image/bloom", mip); };
    switch (static_cast<frame_node>(c.node_index)) {
      case frame_node::upload: {
        const ferrum::node_resource* in = c.resource("resource/in");
        const ferrum::node_image* target = c.image("image/light.in");
        if (in == nullptr || target == nullptr) return (void)++*wrong;
        std::span<std::byte> host = in->bytes().value();
        for (std::size_t word = 0; word < frame_words; ++word) {
          const float v = light_word(c.wave, word / 4, word % 4);
          std::memcpy(host.data() + 4 * word, &v, 4);
        }
        require(c.commands.copy(in->range, *target->image, target->layout));
        return;
      }
      case frame_node::cascade0:
      case frame_node::cascade1:
      case frame_node::cascade2:
      case frame_node::gbuffer:
        if (raster != nullptr) (*raster)(c);
        return;
      case frame_node::lighting:
        return lighting(c);
      case frame_node::down0:
        return step(c, *affine, bloom(0), c.image("image/hdr"), 0.5f, 0.0f);
      case frame_node::down1:
        return step(c, *affine, bloom(1), bloom(0), 0.5f, 0.0f);
      case frame_node::down2:
        return step(c, *affine, bloom(2), bloom(1), 0.5f, 0.0f);
      case frame_node::up1:
        return step(c, *blend, bloom(1), bloom(2), 1.0f, 1.0f);
      case frame_node::up0:
        return step(c, *blend, bloom(0), bloom(1), 1.0f, 1.0f);
      case frame_node::taa:
        return taa(c);
      case frame_node::tonemap:
        return step(c, *affine, c.image("image/frame"), c.image("image/taa"), 0.5f, 1.0f);
      case frame_node::readback: {
        const ferrum::node_image* frame = c.image("image/frame");
        const ferrum::node_resource* target = c.resource("resource/out");
        if (frame == nullptr || target == nullptr) return (void)++*wrong;
        require(c.commands.copy(*frame->image, frame->layout, target->range));
        *out = target->bytes().value();
        *last_wave = c.wave;
        return;
      }
    }
    ++*wrong;
  }
};

// Runs `waves` waves of the deferred frame one after another on `device`,
// image/frame the engine's `frame` (rgba32-float, 16x8, storage and
// transfer-src usage), `raster` drawing the raster nodes where the device
// draws; how many words of the engine's image differ from the host's
// computation.
inline std::size_t run_deferred_frame_waves(const std::shared_ptr<const ferrum::compiled_program>& program,
                                            ferrum::gpu::device& device, std::size_t waves, const gpu::image& frame,
                                            const deferred_raster* raster = nullptr) {
  auto affine = require(device.create_kernel(gpu::builtin::image_affine()));
  auto blend = require(device.create_kernel(gpu::builtin::image_blend()));
  std::atomic<int> wrong{0};
  std::span<std::byte> out;
  std::atomic<std::uint64_t> wave{0}, previous{0};
  deferred_frame_encoder encode{affine.get(), blend.get(), raster, &wrong, &out, &wave, &previous};
  std::vector<ferrum::imported_image> images{{"image/frame", &frame, image_layout::undefined}};
  std::map<std::uint64_t, std::vector<float>> taa_of;  // each wave's TAA output, on the host
  std::size_t differ = 0, taa_terms = 0;
  const auto check = [&](std::uint64_t id) {
    REQUIRE(out.size() >= frame_bytes);
    const std::vector<float>* before = nullptr;
    // Waves in turn: each after the first reads the one before it.
    CHECK(previous == id - 1);
    if (previous != 0) {
      REQUIRE(taa_of.count(previous.load()) == 1);
      before = &taa_of[previous.load()];
      ++taa_terms;
    }
    frame_texels host = host_frame(id, raster != nullptr, before);
    for (std::size_t word = 0; word < frame_words; ++word) {
      float v = 0;
      std::memcpy(&v, out.data() + 4 * word, 4);
      if (v != host.frame[word]) ++differ;
    }
    taa_of[id] = std::move(host.taa);
  };
  run_waves_in_turn(program, device, waves, {frame_width, frame_height, 1}, encode, wave, check, &images);
  CHECK(wrong == 0);
  CHECK(taa_terms == waves - 1);
  return differ;
}

}  // namespace ferrum::test
