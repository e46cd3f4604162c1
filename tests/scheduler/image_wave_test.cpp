// A plan's images in waves on the null device (docs/design.md, "Images"):
// each lane holds its images in image memory placed by the device's sizes,
// two transient images sharing it; the compiler's transitions put every
// image in the layout each node's commands name, which the device checks
// (drop any one transition and it reports the command that met the image
// in the wrong layout); texels go through the images and back exactly,
// the persistent one's from wave to wave.
#include "image_copy_plan.hpp"
#include "scheduler_support.hpp"

#include "ferrum/binding/image_access.hpp"

#include <cstring>
#include <string>

using ferrum::image_layout;
using ferrum::resource_access;
using sched_test::on_io_context;
using sched_test::on_thread_pool;

namespace {

using test::image_bytes;
using test::image_copy_plan;
constexpr std::uint32_t width = test::image_width;
constexpr std::uint32_t height = test::image_height;

// Where each image's texels go in resource/in and resource/out.
std::size_t section_of(std::string_view image) {
  if (image == "image/a") return 0;
  if (image == "image/b") return 1;
  return 2;
}

std::uint32_t texel_word(std::uint64_t wave, std::size_t section, std::size_t word) {
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
      if (i.access == resource_access::transfer_dst) {
        const ferrum::node_resource* in = c.resource("resource/in");
        std::span<std::byte> host = in->bytes().value();
        for (std::size_t w = 0; w < image_bytes / 4; ++w) {
          const std::uint32_t v = texel_word(c.wave, section, w);
          std::memcpy(host.data() + section * image_bytes + 4 * w, &v, 4);
        }
        test::require(c.commands.copy({in->range.arena, in->range.offset + section * image_bytes, image_bytes},
                                      *i.image, i.layout));
      } else {
        const ferrum::node_resource* target = c.resource("resource/out");
        test::require(c.commands.copy(
            *i.image, i.layout, {target->range.arena, target->range.offset + section * image_bytes, image_bytes}));
      }
    }
    if (c.node_index == 3) {
      *out = c.resource("resource/out")->bytes().value();
      *last_wave = c.wave;
    }
  }
};

// Runs `waves` waves one after another on `program`; how many texels each
// wave read back differ from what it wrote (the history's: what the same
// wave wrote, as fill.a writes it before read.b reads it).
std::size_t run_waves(const std::shared_ptr<const ferrum::compiled_program>& program, ferrum::gpu::device& device,
                      std::size_t waves) {
  boost::asio::io_context context;
  auto scheduler = ferrum::scheduler::create(program, device, context.get_executor()).value();
  std::atomic<int> wrong{0};
  std::span<std::byte> out;
  std::atomic<std::uint64_t> wave{0};
  image_copier encode{&wrong, &out, &wave};
  std::size_t differ = 0;
  for (std::size_t w = 0; w < waves; ++w) {
    auto done = sched_test::submit(*scheduler, encode, {"frame", {width, height, 1}});
    context.restart();
    context.run();
    const sched_test::outcome o = sched_test::get(done);
    REQUIRE_FALSE(o.ec);
    for (std::size_t section = 0; section < 3; ++section)
      for (std::size_t word = 0; word < image_bytes / 4; ++word) {
        std::uint32_t v = 0;
        std::memcpy(&v, out.data() + section * image_bytes + 4 * word, 4);
        if (v != texel_word(wave, section, word)) ++differ;
      }
  }
  CHECK(wrong == 0);
  return differ;
}

}  // namespace

TEST_CASE("image waves: texels go through images sharing memory and back exactly, with no layout error",
          "[scheduler][image]") {
  for (const bool reorder : {false, true}) {
    INFO("reorder_unordered " << reorder);
    ferrum::gpu::null_device_options options;
    options.reorder_unordered = reorder;
    auto device = ::test::null_device(options);
    const auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(image_copy_plan(2)));
    CHECK(run_waves(program, *device, 6) == 0);
    const ferrum::gpu::image_layout_report report = device->image_layout_errors();
    INFO((report.first.empty() ? std::string() : report.first.front()));
    CHECK(report.count == 0);
  }
}

TEST_CASE("image waves: dropping any one of the compiler's transitions is caught by the device", "[scheduler][image]") {
  const ferrum::compiled_program compiled = ferrum::test::compile_ok(image_copy_plan(1));
  const ferrum::lane_recipe& recipe = compiled.buckets[0].lane;
  REQUIRE(recipe.transitions.size() == 6);
  for (std::size_t k = 0; k < recipe.transitions.size(); ++k) {
    INFO("without transition " << k << " (image " << recipe.images[recipe.transitions[k].image].resource.str() << " "
                               << to_string(recipe.transitions[k].from) << " -> " << to_string(recipe.transitions[k].to)
                               << ")");
    ferrum::compiled_program dropped = compiled;
    ferrum::lane_recipe& lane = dropped.buckets[0].lane;
    lane.transitions.erase(lane.transitions.begin() + static_cast<std::ptrdiff_t>(k));
    for (std::size_t& begin : lane.transition_begin)
      if (begin > k) --begin;
    auto device = ::test::null_device();
    (void)run_waves(std::make_shared<const ferrum::compiled_program>(std::move(dropped)), *device, 3);
    CHECK(device->image_layout_errors().count > 0);
  }
}
