// Images on Vulkan with validation (synchronization validation included):
// texels through images sharing memory, layout changes in barriers, every
// refusal; a plan's images in a scheduler's lanes, waves copying texels
// through them; formats of every kind (block-compressed, depth-stencil,
// packed, sRGB) copied and sampled as they decode, and a format feature
// lavapipe lacks refusing a plan.
#include "ferrum/gpu/vulkan_device.hpp"

#include "dropped_barrier.hpp"
#include "image_checks.hpp"
#include "image_copy_waves.hpp"
#include "image_kernel_checks.hpp"
#include "image_range_checks.hpp"
#include "mip_chain_waves.hpp"
#include "vulkan_test_support.hpp"

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <span>
#include <string>
#include <vector>

using namespace vulkan_test;

TEST_CASE("vulkan: texels round-trip through images sharing memory, both layouts", "[vulkan][image]") {
  for (const bool discrete : {false, true}) {
    INFO("discrete_layout " << discrete);
    session s;
    if (!s.open_layout(discrete)) return;
    ferrum::test::check_image_round_trip(*s.device);
    s.finish();
  }
}

TEST_CASE("vulkan: refused image specs, memory and commands", "[vulkan][image]") {
  session s;
  if (!s.open()) return;
  session other;
  if (!other.open()) return;
  ferrum::test::check_image_errors(*s.device, *other.device);
  ferrum::test::check_image_made_in_layout(*s.device);
  ferrum::test::check_image_clear(*s.device, *other.device);
  other.finish();
  s.finish();
}

TEST_CASE("vulkan: a kernel writes a storage image from a sampled one, exactly, both layouts",
          "[vulkan][image][kernel]") {
  for (const bool discrete : {false, true}) {
    INFO("discrete_layout " << discrete);
    session s;
    if (!s.open_layout(discrete)) return;
    ferrum::test::check_image_kernel(*s.device);
    s.finish();
  }
}

TEST_CASE("vulkan: a kernel blends a smaller sampled image into a storage image it reads, exactly",
          "[vulkan][image][kernel]") {
  session s;
  if (!s.open()) return;
  ferrum::test::check_image_blend(*s.device);
  s.finish();
}

TEST_CASE("vulkan: refused image kernels and image operands", "[vulkan][image][kernel]") {
  session s;
  if (!s.open()) return;
  session other;
  if (!other.open()) return;
  ferrum::test::check_image_kernel_errors(*s.device, *other.device);
  other.finish();
  s.finish();
}

TEST_CASE("vulkan: a kernel writes one level of a mip chain from another, and reads a layer, through views",
          "[vulkan][image][kernel]") {
  // Barriers over exactly the levels and layers each transition names, a
  // view of each: validation (synchronization included) stays silent.
  session s;
  if (!s.open()) return;
  ferrum::test::check_image_mip_kernel(*s.device);
  ferrum::test::check_image_layer_views(*s.device);
  s.finish();
}

TEST_CASE("vulkan: views are VkImageViews of their range", "[vulkan][image]") {
  session s;
  if (!s.open()) return;
  const ferrum::gpu::image_spec spec{ferrum::image_format::rgba32_float, 16, 16, 3, 4,
                                     ferrum::test::kernel_image_usage};
  auto memory = ferrum::test::make_images(*s.device, std::array{spec});
  auto one = ferrum::test::require(s.device->create_image_view(memory->at(0), {1, 1, 2, 1}));
  auto layers = ferrum::test::require(s.device->create_image_view(memory->at(0), {0, 2, 1, 3}));
  CHECK(ferrum::gpu::vulkan_image_view(*one) != VK_NULL_HANDLE);
  CHECK(ferrum::gpu::vulkan_image_view(*layers) != VK_NULL_HANDLE);
  CHECK(ferrum::gpu::vulkan_image_view(*one) != ferrum::gpu::vulkan_image_view(*layers));
  CHECK(layers->range() == ferrum::gpu::image_subresources{0, 2, 1, 3});
  one.reset();
  layers.reset();
  memory.reset();
  s.finish();  // the layers' object tracking: no view left
}

TEST_CASE("vulkan: refused views, ranged transitions and operands through views", "[vulkan][image][kernel]") {
  session s;
  if (!s.open()) return;
  session other;
  if (!other.open()) return;
  ferrum::test::check_image_range_errors(*s.device, *other.device);
  other.finish();
  s.finish();
}

TEST_CASE("vulkan: a mip chain written level by level through the lane's views gives the host's texels",
          "[vulkan][image]") {
  session s;
  if (!s.open()) return;
  const auto program =
      std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(ferrum::test::mip_chain_plan()));
  CHECK(ferrum::test::run_mip_chain_waves(program, *s.device, 3) == 0);
  s.finish();
}

TEST_CASE("vulkan: a plan's images in lanes: texels through images sharing memory, wave after wave, both layouts",
          "[vulkan][image]") {
  for (const bool discrete : {false, true}) {
    INFO("discrete_layout " << discrete);
    session s;
    if (!s.open_layout(discrete)) return;
    const auto program =
        std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(ferrum::test::image_copy_plan(2)));
    CHECK(ferrum::test::run_image_waves(program, *s.device, 5) == 0);
    s.finish();
  }
}

TEST_CASE("vulkan: dropping each derived barrier between an aliased image plan's nodes is reported by validation",
          "[vulkan][image][validation]") {
  // image_copies.json: image/a and image/b share bytes (an interval pool),
  // image/history is written and read again; every barrier past the first
  // node orders a node's copies after the last one's, with layout changes.
  const auto program =
      std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(ferrum::test::image_copy_plan(2)));
  REQUIRE(program->buckets[0].image_window.size < program->buckets[0].unaliased_image_bytes);
  const std::vector<std::size_t> nodes = ferrum::test::barrier_nodes(*program);
  REQUIRE(nodes.size() == 3);
  for (const std::size_t n : nodes) {
    INFO("without the barrier before node " << n);
    session s;
    if (!s.open()) return;
    (void)ferrum::test::run_image_waves(ferrum::test::without_barrier(*program, n), *s.device, 2);
    const std::string log = s.finish_reported();
    INFO(log);
    CHECK(reports_missing_barrier(log));
  }
}

namespace {

// `words` (one layer of `format`, w x h) copied into a sampled image and
// read by builtin::image_affine (x 1 + 0) into an rgba32-float storage
// image, copied out: each texel's four channels as the device decodes the
// format.
std::vector<float> sampled_texels(ferrum::gpu::device& device, ferrum::image_format format, std::uint32_t w,
                                  std::uint32_t h, std::span<const std::uint32_t> words) {
  namespace gpu = ferrum::gpu;
  using ferrum::image_layout;
  using ferrum::test::require;
  const gpu::image_spec source_spec{format, w, h, 1, 1, gpu::image_usage::sampled | gpu::image_usage::transfer_dst};
  const gpu::image_spec target_spec{
      ferrum::image_format::rgba32_float, w, h, 1, 1, gpu::image_usage::storage | gpu::image_usage::transfer_src};
  REQUIRE(copy_bytes(source_spec) == words.size_bytes());
  const std::array<gpu::placed_image, 1> source_placed{gpu::placed_image{source_spec, 0}};
  const std::array<gpu::placed_image, 1> target_placed{gpu::placed_image{target_spec, 0}};
  auto source =
      require(device.create_image_memory(source_placed, require(device.image_requirements(source_spec)).bytes));
  auto target =
      require(device.create_image_memory(target_placed, require(device.image_requirements(target_spec)).bytes));
  auto upload = require(device.create_arena(words.size_bytes(), ferrum::memory_class::upload));
  auto readback = require(device.create_arena(copy_bytes(target_spec), ferrum::memory_class::readback));
  for (std::size_t i = 0; i < words.size(); ++i) ferrum::test::set_word(*upload, i, words[i]);
  auto kernel = require(device.create_kernel(gpu::builtin::image_affine()));
  auto list = require(device.create_command_list());
  const std::array<std::uint32_t, 2> push{std::bit_cast<std::uint32_t>(1.0f), std::bit_cast<std::uint32_t>(0.0f)};
  ferrum::test::require_reached(
      device.queue().timeline(), ferrum::test::submit(device, *list, [&](gpu::command_list& l) {
        if (upload->staged()) require(l.stage(*upload));
        require(l.transition(source->at(0), image_layout::undefined, image_layout::transfer_dst));
        require(l.copy(upload->whole(), source->at(0), image_layout::transfer_dst));
        require(l.transition(source->at(0), image_layout::transfer_dst, image_layout::shader_read_only));
        require(l.transition(target->at(0), image_layout::undefined, image_layout::general));
        require(l.dispatch(*kernel, gpu::image_operand{&target->at(0), image_layout::general},
                           gpu::image_operand{&source->at(0), image_layout::shader_read_only}, push));
        require(l.transition(target->at(0), image_layout::general, image_layout::transfer_src));
        require(l.copy(target->at(0), image_layout::transfer_src, readback->whole()));
        if (readback->staged()) require(l.stage(*readback));
      }));
  require(readback->invalidate());
  std::vector<float> texels(copy_bytes(target_spec) / 4);
  for (std::size_t i = 0; i < texels.size(); ++i) texels[i] = std::bit_cast<float>(ferrum::test::word_at(*readback, i));
  return texels;
}

float srgb_to_linear(float c) { return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f); }

}  // namespace

TEST_CASE("vulkan: format features are lavapipe's, asked of the device, and formats of every kind round-trip by copies",
          "[vulkan][image]") {
  session s;
  if (!s.open()) return;
  namespace gpu = ferrum::gpu;
  using ferrum::image_format;
  // Queried (vkGetPhysicalDeviceFormatProperties), not assumed: lavapipe
  // stores to r8-unorm and rg16-unorm, not to rgba8-srgb; BC formats are
  // sampled and copied (textureCompressionBC, enabled), never stored to;
  // its depth-stencil formats are depth attachments.
  CHECK((s.device->format_features(image_format::r8_unorm) & gpu::format_feature::storage) != 0);
  CHECK((s.device->format_features(image_format::rg16_unorm) & gpu::format_feature::storage) != 0);
  CHECK((s.device->format_features(image_format::rgba8_srgb) & gpu::format_feature::storage) == 0);
  CHECK((s.device->format_features(image_format::rgba8_srgb) & gpu::format_feature::color_attachment) != 0);
  CHECK((s.device->format_features(image_format::bc7_srgb) & gpu::format_feature::sampled) != 0);
  CHECK((s.device->format_features(image_format::bc7_srgb) & gpu::format_feature::storage) == 0);
  CHECK((s.device->format_features(image_format::d24_unorm_s8_uint) & gpu::format_feature::depth_attachment) != 0);
  CHECK((s.device->format_features(image_format::d32_float) & gpu::format_feature::color_attachment) == 0);
  // What a format lacks is refused before Vulkan sees it.
  CHECK(s.device->image_requirements({image_format::rgba8_srgb, 8, 8, 1, 1, gpu::image_usage::storage}).error() ==
        ferrum::errc::format_unsupported);
  ferrum::test::check_format_round_trip(*s.device);
  s.finish();
}

TEST_CASE("vulkan: BC1, b10g11r11-float and rgba8-srgb images filled by copies are sampled as they decode",
          "[vulkan][image][kernel]") {
  session s;
  if (!s.open()) return;
  using ferrum::image_format;
  // BC1: two 4x4 blocks, red and green (565) endpoints; the first block's
  // texels all index 0 (red), the second's all index 1 (green).
  const std::array<std::uint32_t, 4> bc1{0x07e0f800u, 0x00000000u, 0x07e0f800u, 0x55555555u};
  const std::vector<float> bc1_texels = sampled_texels(*s.device, image_format::bc1_rgba_unorm, 8, 4, bc1);
  std::size_t exact = 0;
  for (std::uint32_t y = 0; y < 4; ++y)
    for (std::uint32_t x = 0; x < 8; ++x) {
      const float* t = &bc1_texels[(y * 8 + x) * 4];
      const bool red = x < 4;
      if (t[0] == (red ? 1.0f : 0.0f) && t[1] == (red ? 0.0f : 1.0f) && t[2] == 0.0f && t[3] == 1.0f) ++exact;
    }
  CHECK(exact == 32);
  // b10g11r11-float: R 1.0 (11 bits: exponent 15), G 0.5 (14), B 2.0
  // (10 bits: exponent 16); alpha reads 1.
  const std::uint32_t packed = 0x3c0u | 0x380u << 11 | 0x200u << 22;
  const std::array<std::uint32_t, 8> b10{packed, packed, packed, packed, packed, packed, packed, packed};
  const std::vector<float> b10_texels = sampled_texels(*s.device, image_format::b10g11r11_float, 4, 2, b10);
  exact = 0;
  for (std::size_t i = 0; i < 8; ++i)
    if (b10_texels[i * 4] == 1.0f && b10_texels[i * 4 + 1] == 0.5f && b10_texels[i * 4 + 2] == 2.0f &&
        b10_texels[i * 4 + 3] == 1.0f)
      ++exact;
  CHECK(exact == 8);
  // rgba8-srgb: 188 decodes to about 0.503 (0.737 as unorm); alpha is linear.
  const std::array<std::uint32_t, 4> srgb{0x80bcbcbcu, 0x80bcbcbcu, 0x80bcbcbcu, 0x80bcbcbcu};
  const std::vector<float> srgb_texels = sampled_texels(*s.device, image_format::rgba8_srgb, 2, 2, srgb);
  const float linear = srgb_to_linear(188.0f / 255.0f);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(std::abs(srgb_texels[i * 4] - linear) < 2e-3f);
    CHECK(std::abs(srgb_texels[i * 4 + 2] - linear) < 2e-3f);
    CHECK(std::abs(srgb_texels[i * 4 + 3] - 128.0f / 255.0f) < 1e-3f);
  }
  s.finish();
}

TEST_CASE("vulkan: a plan's images of other formats in lanes, and storage on rgba8-srgb refused by lavapipe's features",
          "[vulkan][image][scheduler]") {
  session s;
  if (!s.open()) return;
  using ferrum::image_format;
  const auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(
      ferrum::test::with_image_formats(ferrum::test::image_copy_plan(1), image_format::rg16_unorm,
                                       image_format::rgba8_srgb, image_format::a2b10g10r10_unorm)));
  CHECK(ferrum::test::run_image_waves(program, *s.device, 2) == 0);
  // image_copies.json's image/history stored to: lavapipe has no storage
  // on rgba8-srgb.
  ferrum::plan stored = ferrum::test::with_image_formats(ferrum::test::image_copy_plan(1), image_format::r8_unorm,
                                                         image_format::r32_float, image_format::rgba8_srgb);
  for (ferrum::plan_node& n : stored.nodes)
    if (n.id.view() == "node/read.b")
      for (std::size_t k = 0; k < n.resources.size(); ++k)
        if (n.resources[k].view() == "image/history") n.access[k] = ferrum::resource_access::storage_read;
  boost::asio::io_context context;
  auto refused =
      ferrum::scheduler::create(std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(stored)),
                                *s.device, context.get_executor());
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error() == ferrum::errc::format_unsupported);
  INFO(refused.error().detail);
  CHECK(refused.error().detail.find("image 'image/history' of format 'rgba8-srgb' is taken 'storage-read' by node 3") !=
        std::string::npos);
  CHECK(refused.error().detail.find("has no storage feature for rgba8-srgb") != std::string::npos);
  s.finish();
}

TEST_CASE("vulkan: two independent image chains on one queue share image memory, validation silent, data checked",
          "[vulkan][image][validation]") {
  // image_copies.json with node/fill.b after node/fill.a only: the chains
  // fill.a -> read.a and fill.b -> read.b have no path between them, yet on
  // one queue image/a and image/b still share bytes (docs/design.md, "Lane
  // memory"); the barrier before fill.b orders read.a's copy out first.
  ferrum::plan p = ferrum::test::image_copy_plan(2);
  REQUIRE(p.nodes[2].id.view() == "node/fill.b");
  p.nodes[2].after = {p.nodes[0].id};
  const auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(p));
  REQUIRE(program->buckets[0].image_window.size < program->buckets[0].unaliased_image_bytes);
  REQUIRE(program->buckets[0].lane.barrier_before[2]);
  {
    session s;
    if (!s.open()) return;
    CHECK(ferrum::test::run_image_waves(program, *s.device, 5) == 0);
    s.finish();
  }
  session s;
  if (!s.open()) return;
  (void)ferrum::test::run_image_waves(ferrum::test::without_barrier(*program, 2), *s.device, 2);
  const std::string log = s.finish_reported();
  INFO(log);
  CHECK(reports_missing_barrier(log));
}
