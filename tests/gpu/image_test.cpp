// Images on the null device: texels through images sharing memory, every
// refusal, and the layout each image is in, which the worker checks.
#include "image_checks.hpp"
#include "image_kernel_checks.hpp"
#include "image_range_checks.hpp"
#include "null_device_support.hpp"

#include <catch2/catch.hpp>

using namespace ferrum;

TEST_CASE("images: texels round-trip through images sharing memory on the null device", "[gpu][image]") {
  for (const bool discrete : {false, true}) {
    gpu::null_device_options options;
    options.discrete_layout = discrete;
    options.reorder_unordered = true;
    auto device = test::null_device(options);
    test::check_image_round_trip(*device);
    CHECK(device->image_layout_errors().count == 0);
  }
}

TEST_CASE("images: a clear zeroes every texel of a color and a depth image on the null device, and its refusals",
          "[gpu][image]") {
  auto device = test::null_device();
  auto other = test::null_device();
  test::check_image_clear(*device, *other);
  CHECK(device->image_layout_errors().count == 0);
}

TEST_CASE("images: refused specs, memory and commands on the null device", "[gpu][image]") {
  auto device = test::null_device();
  auto other = test::null_device();
  test::check_image_errors(*device, *other);
  test::check_image_made_in_layout(*device);
  CHECK(device->image_layout_errors().count == 0);
  const gpu::image_spec s{image_format::rgba8_unorm, 4, 4, 1, 1, test::image_copies};
  // The null device's sizes are a GPU's pages, not the texels.
  const gpu::image_requirements needs = test::require(device->image_requirements(s));
  CHECK(needs.bytes == 4096);
  CHECK(needs.alignment == 4096);
}

TEST_CASE("images: formats of every kind round-trip through copies on the null device", "[gpu][image]") {
  auto device = test::null_device();
  test::check_format_round_trip(*device);
  CHECK(device->image_layout_errors().count == 0);
}

TEST_CASE("images: a format feature the null device withholds is refused by name", "[gpu][image]") {
  gpu::null_device_options options;
  options.withheld = {{image_format::rgba8_srgb, gpu::format_feature::storage | gpu::format_feature::blit_dst},
                      {image_format::d24_unorm_s8_uint, gpu::format_feature::all}};
  auto device = test::null_device(options);
  CHECK(device->format_features(image_format::rgba8_unorm) == gpu::format_feature::all);
  CHECK(device->format_features(image_format::rgba8_srgb) ==
        (gpu::format_feature::all & ~(gpu::format_feature::storage | gpu::format_feature::blit_dst)));
  CHECK(device->format_features(image_format::d24_unorm_s8_uint) == 0);
  const gpu::image_spec stored{image_format::rgba8_srgb, 8, 8, 1, 1, gpu::image_usage::storage};
  const error e = device->image_requirements(stored).error();
  CHECK(e == errc::format_unsupported);
  CHECK(e.detail.find("has no storage feature for rgba8-srgb") != std::string::npos);
  CHECK(device->image_requirements({image_format::rgba8_srgb, 8, 8, 1, 1, gpu::image_usage::sampled}).has_value());
  CHECK(device->image_requirements({image_format::d24_unorm_s8_uint, 8, 8, 1, 1, gpu::image_usage::depth_attachment})
            .error() == errc::format_unsupported);
  CHECK(gpu::format_feature_names(gpu::format_feature::storage | gpu::format_feature::blit_dst) == "storage, blit-dst");
  CHECK(gpu::format_feature_names(0) == "none");
  // Withholding from a format outside the enum, or bits outside format_feature.
  for (const gpu::null_device_options::withheld_features bad :
       {gpu::null_device_options::withheld_features{static_cast<image_format>(image_format_count), 1},
        gpu::null_device_options::withheld_features{image_format::r8_unorm, 1u << 8}}) {
    gpu::null_device_options wrong;
    wrong.withheld = {bad};
    CHECK(gpu::null_device::create(wrong).error() == errc::invalid_device_option);
  }
}

TEST_CASE("images: a command that meets an image in another layout is counted, with what it expected", "[gpu][image]") {
  auto device = test::null_device();
  const gpu::image_spec s{image_format::r32_float, 16, 16, 1, 1, test::image_copies | gpu::image_usage::sampled};
  const std::array<gpu::placed_image, 1> placed{gpu::placed_image{s, 0}};
  auto memory = test::require(device->create_image_memory(placed, 4096));
  const gpu::image& img = memory->at(0);
  auto arena = test::require(device->create_arena(copy_bytes(s)));
  auto list = test::require(device->create_command_list());
  // A copy into an image never put in transfer-dst: counted, and run.
  test::require_reached(device->queue().timeline(), test::submit(*device, *list, [&](gpu::command_list& l) {
                          test::require(l.copy(arena->whole(), img, image_layout::transfer_dst));
                        }));
  gpu::image_layout_report report = device->image_layout_errors();
  CHECK(report.count == 1);
  REQUIRE(report.first.size() == 1);
  CHECK(report.first[0] ==
        "a copy into an image expects image r32-float 16x16 at offset 0, mip 0 layer 0, in layout transfer-dst, but it "
        "is "
        "in undefined");
  // A transition from a layout the image is not in: counted; the image is
  // then in the new one, which the copy out finds.
  test::require_reached(device->queue().timeline(), test::submit(*device, *list, [&](gpu::command_list& l) {
                          test::require(l.transition(img, image_layout::general, image_layout::transfer_src));
                          test::require(l.copy(img, image_layout::transfer_src, arena->whole()));
                        }));
  report = device->image_layout_errors();
  CHECK(report.count == 2);
  REQUIRE(report.first.size() == 2);
  CHECK(report.first[1].find("a transition expects") == 0);
  // From undefined, any layout is left: nothing counted. A transition no
  // command follows is made at end().
  test::require_reached(device->queue().timeline(), test::submit(*device, *list, [&](gpu::command_list& l) {
                          test::require(l.transition(img, image_layout::undefined, image_layout::shader_read_only));
                        }));
  CHECK(list->barriers() == 1);
  test::require_reached(device->queue().timeline(), test::submit(*device, *list, [&](gpu::command_list& l) {
                          test::require(l.transition(img, image_layout::shader_read_only, image_layout::transfer_dst));
                          test::require(l.copy(arena->whole(), img, image_layout::transfer_dst));
                        }));
  CHECK(device->image_layout_errors().count == 2);
}

TEST_CASE("images: a kernel writes a storage image from a sampled one, exactly, on the null device",
          "[gpu][image][kernel]") {
  for (const bool reorder : {false, true}) {
    gpu::null_device_options options;
    options.reorder_unordered = reorder;
    auto device = test::null_device(options);
    test::check_image_kernel(*device);
    // Each image met in the layout its operand named.
    CHECK(device->image_layout_errors().count == 0);
  }
}

TEST_CASE("images: a kernel blends a smaller sampled image into a storage image it reads, exactly, on the null device",
          "[gpu][image][kernel]") {
  auto device = test::null_device();
  test::check_image_blend(*device);
  CHECK(device->image_layout_errors().count == 0);
}

TEST_CASE("images: refused image kernels and image operands on the null device", "[gpu][image][kernel]") {
  auto device = test::null_device();
  auto other = test::null_device();
  test::check_image_kernel_errors(*device, *other);
}

TEST_CASE("images: a kernel that meets its image in another layout than its operand names is counted",
          "[gpu][image][kernel]") {
  auto device = test::null_device();
  test::kernel_images k = test::make_kernel_images(*device);
  auto kernel = test::require(device->create_kernel(gpu::builtin::image_affine()));
  auto list = test::require(device->create_command_list());
  // Neither image was transitioned: both are undefined when the kernel runs.
  test::require_reached(device->queue().timeline(), test::submit(*device, *list, [&](gpu::command_list& l) {
                          test::require(l.dispatch(*kernel, gpu::image_operand{&k.memory->at(1)},
                                                   gpu::image_operand{&k.memory->at(0), image_layout::shader_read_only},
                                                   std::array<std::uint32_t, 2>{}));
                        }));
  const gpu::image_layout_report report = device->image_layout_errors();
  CHECK(report.count == 2);
  REQUIRE(report.first.size() == 2);
  CHECK(report.first[0] ==
        "a dispatch expects image rgba32-float 13x7 at offset 4096, mip 0 layer 0, in layout general, but it is in "
        "undefined");
}

TEST_CASE("images: ranges of levels and layers fit an image and overlap one another", "[gpu][image]") {
  const gpu::image_spec s{image_format::rgba8_unorm, 16, 16, 3, 4, test::image_copies};
  CHECK(gpu::image_subresources::whole(s) == gpu::image_subresources{0, 3, 0, 4});
  CHECK(gpu::fits(gpu::image_subresources::whole(s), s));
  CHECK(gpu::fits({2, 1, 3, 1}, s));
  for (const gpu::image_subresources& out :
       {gpu::image_subresources{0, 0, 0, 1}, gpu::image_subresources{0, 1, 0, 0}, gpu::image_subresources{3, 1, 0, 1},
        gpu::image_subresources{2, 2, 0, 1}, gpu::image_subresources{0, 1, 4, 1}, gpu::image_subresources{0, 1, 1, 4},
        gpu::image_subresources{1, 0xffffffffu, 0, 1}}) {
    INFO(gpu::subresources_text(out));
    CHECK_FALSE(gpu::fits(out, s));
  }
  CHECK(gpu::overlaps({0, 2, 0, 1}, {1, 1, 0, 4}));
  CHECK(gpu::overlaps({1, 1, 0, 4}, {0, 2, 0, 1}));
  CHECK(gpu::overlaps({0, 3, 2, 1}, {1, 1, 1, 2}));
  CHECK_FALSE(gpu::overlaps({0, 1, 0, 4}, {1, 2, 0, 4}));  // other levels
  CHECK_FALSE(gpu::overlaps({1, 2, 0, 4}, {0, 1, 0, 4}));
  CHECK_FALSE(gpu::overlaps({0, 3, 0, 2}, {0, 3, 2, 2}));  // other layers
  CHECK_FALSE(gpu::overlaps({0, 3, 0, 2}, {0, 0, 0, 2}));  // empty
  CHECK(gpu::subresources_text({1, 1, 2, 1}) == "mip 1 layer 2");
  CHECK(gpu::subresources_text({0, 3, 1, 2}) == "mips [0, 3) of layers [1, 3)");
}

TEST_CASE(
    "images: a kernel writes one level of a mip chain from another, and reads a layer, through views, on the "
    "null device",
    "[gpu][image][kernel]") {
  for (const bool reorder : {false, true}) {
    gpu::null_device_options options;
    options.reorder_unordered = reorder;
    auto device = test::null_device(options);
    test::check_image_mip_kernel(*device);
    test::check_image_layer_views(*device);
    // Each level and layer met in the layout each command named.
    CHECK(device->image_layout_errors().count == 0);
  }
}

TEST_CASE("images: refused views, ranged transitions and operands through views on the null device",
          "[gpu][image][kernel]") {
  auto device = test::null_device();
  auto other = test::null_device();
  test::check_image_range_errors(*device, *other);
}

TEST_CASE("images: each level and layer keeps its layout: a command that meets one in another is counted, naming it",
          "[gpu][image]") {
  auto device = test::null_device();
  const gpu::image_spec chain{image_format::rgba32_float, 16, 12, 3, 1, test::kernel_image_usage};
  const gpu::image_spec layered{image_format::rgba32_float, 8, 8, 1, 4, test::kernel_image_usage};
  auto memory = test::make_images(*device, std::array{chain, layered});
  const gpu::image& mips = memory->at(0);
  const gpu::image& array = memory->at(1);
  // A change made without a range is of every level and layer.
  CHECK(gpu::layout_change{&mips, image_layout::undefined, image_layout::general}.range ==
        gpu::image_subresources{0, 3, 0, 1});
  CHECK(gpu::layout_change{&array, image_layout::undefined, image_layout::general}.range ==
        gpu::image_subresources{0, 1, 0, 4});
  auto view0 = test::require(device->create_image_view(mips, test::level(0)));
  auto view1 = test::require(device->create_image_view(mips, test::level(1)));
  auto kernel = test::require(device->create_kernel(gpu::builtin::image_affine()));
  auto list = test::require(device->create_command_list());
  // Level 1 alone put in general; the kernel writes level 0 as if it were,
  // and reads level 1 as if in shader-read-only: two subresources met in
  // another layout.
  test::require_reached(
      device->queue().timeline(), test::submit(*device, *list, [&](gpu::command_list& l) {
        test::require(l.transition(mips, image_layout::undefined, image_layout::general, test::level(1)));
        test::require(l.dispatch(*kernel, gpu::image_operand{&mips, image_layout::general, view0.get()},
                                 gpu::image_operand{&mips, image_layout::shader_read_only, view1.get()},
                                 test::affine_push(1, 0)));
      }));
  gpu::image_layout_report report = device->image_layout_errors();
  CHECK(report.count == 2);
  REQUIRE(report.first.size() == 2);
  CHECK(report.first[0] ==
        "a dispatch expects image rgba32-float 16x12 at offset 0, mip 0 layer 0, in layout general, but it is in "
        "undefined");
  CHECK(report.first[1] ==
        "a dispatch expects image rgba32-float 16x12 at offset 0, mip 1 layer 0, in layout shader-read-only, but it is "
        "in general");
  // Layer 2 alone moved on: a transition of every layer from the layout
  // the others are in is counted once, naming layer 2; then every layer
  // is in shader-read-only, and a transition from general meets all four
  // in another layout: counted once. Each transition changes what the one
  // before it changes: each goes into a barrier of its own.
  test::require_reached(
      device->queue().timeline(), test::submit(*device, *list, [&](gpu::command_list& l) {
        test::require(l.transition(array, image_layout::undefined, image_layout::transfer_dst));
        test::require(l.transition(array, image_layout::transfer_dst, image_layout::general, test::layer(2)));
        test::require(l.transition(array, image_layout::transfer_dst, image_layout::shader_read_only));
        test::require(l.transition(array, image_layout::general, image_layout::transfer_src));
      }));
  CHECK(list->barriers() == 4);
  report = device->image_layout_errors();
  CHECK(report.count == 4);
  REQUIRE(report.first.size() == 4);
  CHECK(report.first[2] ==
        "a transition expects image rgba32-float 8x8 at offset 4096, mip 0 layer 2, in layout transfer-dst, but it is "
        "in general");
  CHECK(report.first[3] ==
        "a transition expects image rgba32-float 8x8 at offset 4096, mip 0 layer 0, in layout general, but it is in "
        "shader-read-only (and 3 more of its subresources in another)");
  // Level by level, each from the layout it is in: none counted.
  test::require_reached(
      device->queue().timeline(), test::submit(*device, *list, [&](gpu::command_list& l) {
        test::require(l.transition(mips, image_layout::undefined, image_layout::transfer_dst, test::level(0)));
        test::require(l.transition(mips, image_layout::general, image_layout::shader_read_only, test::level(1)));
        test::require(l.transition(mips, image_layout::shader_read_only, image_layout::general, test::level(1)));
        test::require(l.transition(mips, image_layout::undefined, image_layout::general, test::level(2)));
        test::require(l.transition(mips, image_layout::transfer_dst, image_layout::general, test::level(0)));
        test::require(l.transition(mips, image_layout::general, image_layout::transfer_src, {0, 3, 0, 1}));
      }));
  // Level 1 changed again, then every level: three barriers.
  CHECK(list->barriers() == 3);
  CHECK(device->image_layout_errors().count == 4);
}
