// An engine's VkBuffers in waves (gpu::import_vulkan_buffer,
// wave_request::imports), validation with synchronization validation on:
// a native node fills the engine's mesh, a ferrum copy takes it into the
// engine's output, two lanes in flight writing the one mesh. The data
// proves the order; the validation layers prove that the barriers inside
// each wave and the waits between waves cover it.
#include "vulkan_test_support.hpp"

#include "engine_buffer.hpp"
#include "engine_vk_image.hpp"

#include "ferrum/scheduler/scheduler.hpp"
#include "imported_plan.hpp"
#include "null_device_support.hpp"
#include "wave_outcome.hpp"

#include <boost/asio/thread_pool.hpp>

#include <array>
#include <atomic>
#include <cstring>
#include <vector>

namespace {

using vulkan_test::engine_buffer;
using vulkan_test::require;

constexpr VkBufferUsageFlags ferrum_usage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

}  // namespace

TEST_CASE("vulkan: an engine's buffer imports as an arena of class imported, or is refused with a reason",
          "[vulkan][imported]") {
  vulkan_test::session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  const auto handles = *ferrum::gpu::native_handles(device);
  {
    engine_buffer addressed(handles, 1024, ferrum_usage | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT);
    auto arena = require(ferrum::gpu::import_vulkan_buffer(device, addressed.buffer, 1024,
                                                           ferrum_usage | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT));
    CHECK(arena->cls() == ferrum::memory_class::imported);
    CHECK(ferrum::gpu::vulkan_buffer(arena->native_handle()) == addressed.buffer);
    CHECK(arena->size() == 1024);
    CHECK(arena->bytes().empty());
    CHECK(arena->device_address() != 0);  // lavapipe has bufferDeviceAddress
    // Without the address usage, no address.
    engine_buffer plain(handles, 256, ferrum_usage);
    auto unaddressed = require(ferrum::gpu::import_vulkan_buffer(device, plain.buffer, 256, ferrum_usage));
    CHECK(unaddressed->device_address() == 0);
    // ferrum's own commands reach it: a fill, read back through the engine's mapping.
    auto list = require(device.create_command_list());
    const std::uint64_t value = vulkan_test::submit(
        device, *list, [&](ferrum::gpu::command_list& l) { require(l.fill(unaddressed->range(64, 128), 0xC0FFEEu)); });
    vulkan_test::require_reached(device.queue().timeline(), value);
    CHECK(plain.word(0) == 0);
    CHECK(plain.word(64) == 0xC0FFEEu);
    CHECK(plain.word(188) == 0xC0FFEEu);
    CHECK(plain.word(192) == 0);

    const auto refused = [&](ferrum::result<std::unique_ptr<ferrum::gpu::arena>> r, ferrum::errc code,
                             std::string_view says) {
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code == code);
      CHECK_THAT(r.error().detail, Catch::Contains(std::string(says)));
    };
    refused(ferrum::gpu::import_vulkan_buffer(device, VK_NULL_HANDLE, 256, ferrum_usage),
            ferrum::errc::invalid_device_option, "a null handle");
    // The usage it was made with is recorded, not refused: each command
    // checks what it needs of it.
    auto storage_only =
        require(ferrum::gpu::import_vulkan_buffer(device, plain.buffer, 256, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT));
    CHECK(storage_only->usage() == ferrum::gpu::buffer_usage::storage);
    CHECK(unaddressed->usage() == (ferrum::gpu::buffer_usage::storage | ferrum::gpu::buffer_usage::transfer_src |
                                   ferrum::gpu::buffer_usage::transfer_dst));
    require(list->begin());
    const auto fill = list->fill(storage_only->whole(), 0u);
    CHECK(fill.error() == ferrum::errc::buffer_usage_missing);
    CHECK_THAT(fill.error().detail, Catch::Contains("without transfer-dst usage (it has storage)"));
    require(list->end());
    refused(ferrum::gpu::import_vulkan_buffer(device, plain.buffer, 0, ferrum_usage), ferrum::errc::invalid_arena_size,
            "0 bytes");
    refused(ferrum::gpu::import_vulkan_buffer(device, plain.buffer, 4096, ferrum_usage),
            ferrum::errc::invalid_arena_size, "the buffer holds at most");
    auto null = ::test::null_device();
    refused(ferrum::gpu::import_vulkan_buffer(*null, plain.buffer, 256, ferrum_usage),
            ferrum::errc::invalid_device_option, "is not a Vulkan device");
    const std::array<std::uint32_t, 2> families{0, 2};
    refused(ferrum::gpu::import_vulkan_buffer(
                device, plain.buffer, 256, ferrum_usage,
                ferrum::gpu::vulkan_sharing::of(VK_SHARING_MODE_CONCURRENT, 2, families.data())),
            ferrum::errc::invalid_device_option, "VK_SHARING_MODE_CONCURRENT over queue family 2");
    CHECK(unaddressed->queues() == ferrum::every_queue_kind);
    list.reset();
  }
  s.finish();
}

TEST_CASE("vulkan: waves write an engine's buffers, ordered inside and between them", "[vulkan][imported][scheduler]") {
  vulkan_test::session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  const auto handles = *ferrum::gpu::native_handles(device);
  constexpr std::size_t waves = 8;
  constexpr std::size_t stride = 128;
  std::atomic<int> failures{0};
  {
    engine_buffer lut(handles, 64, ferrum_usage);
    engine_buffer mesh(handles, 256, ferrum_usage | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT);
    engine_buffer out(handles, stride * waves, ferrum_usage);
    auto lut_arena = require(ferrum::gpu::import_vulkan_buffer(device, lut.buffer, 64, ferrum_usage));
    auto mesh_arena = require(ferrum::gpu::import_vulkan_buffer(
        device, mesh.buffer, 256, ferrum_usage | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT));
    auto out_arena = require(ferrum::gpu::import_vulkan_buffer(device, out.buffer, stride * waves, ferrum_usage));
    auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(test::imported_plan(2)));
    // produce: the engine's own fill of the mesh, through the native scope;
    // consume: ferrum's copy of its first 64 bytes into the wave's output.
    const auto encode = [&](const ferrum::encode_context& c) {
      const ferrum::node_resource* mesh_resource = c.resource("resource/mesh");
      if (c.node_index == 0) {
        const auto native = c.native();
        if (!native || mesh_resource == nullptr) {
          failures.fetch_add(1);
          return;
        }
        const ferrum::native_buffer target =
            native->resource(static_cast<std::size_t>(mesh_resource - c.resources.data()));
        if (ferrum::gpu::vulkan_buffer(target.buffer) != mesh.buffer || target.size != 256 ||
            target.device_address != mesh_arena->device_address())
          failures.fetch_add(1);
        vkCmdFillBuffer(ferrum::gpu::vulkan_command_buffer(native->command_buffer),
                        ferrum::gpu::vulkan_buffer(target.buffer), target.offset, target.size,
                        static_cast<std::uint32_t>(c.wave));
      } else if (const ferrum::node_resource* o = c.resource("resource/out")) {
        const ferrum::gpu::arena_range from{mesh_resource->range.arena, mesh_resource->range.offset, 64};
        if (!c.commands.copy(from, {o->range.arena, o->range.offset, 64})) failures.fetch_add(1);
      }
    };
    {
      boost::asio::thread_pool pool(2);
      auto scheduler = require(ferrum::scheduler::create(
          program, device, pool.get_executor(), {.fence_timeout = std::chrono::seconds(60), .encoder_tasks = 2}));
      std::vector<std::array<ferrum::imported_buffer, 3>> named;
      for (std::size_t w = 0; w < waves; ++w)
        named.push_back({{{"resource/lut", lut_arena->whole()},
                          {"resource/mesh", mesh_arena->whole()},
                          {"resource/out", out_arena->range(w * stride, stride)}}});
      std::vector<std::future<sched_test::outcome>> done;
      for (std::size_t w = 0; w < waves; ++w) {
        ferrum::wave_request request{"step", {1, 1, 1}};
        request.imports = named[w];
        done.push_back(sched_test::submit(*scheduler, encode, request));
      }
      for (std::size_t w = 0; w < waves; ++w) {
        const auto [ec, report] = sched_test::get(done[w], std::chrono::seconds(60));
        INFO(report.message);
        REQUIRE_FALSE(ec);
        for (std::size_t word = 0; word < 16; ++word) CHECK(out.word(w * stride + 4 * word) == report.wave);
      }
      scheduler.reset();
      pool.join();
    }
  }
  CHECK(failures.load() == 0);
  s.finish();
}

TEST_CASE("vulkan: an engine's image imports as a ferrum image, its view kept or made, or is refused with a reason",
          "[vulkan][imported][image]") {
  vulkan_test::session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  const auto handles = *ferrum::gpu::native_handles(device);
  namespace usage = ferrum::gpu::image_usage;
  {
    // Every Vulkan usage ferrum has maps to its bit; others to none.
    CHECK(ferrum::gpu::image_usage_from_vk(
              VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT |
              VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
              VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_INPUT_ATTACHMENT_BIT) == usage::all);
    for (const ferrum::image_format f : ferrum::image_formats)
      CHECK(ferrum::gpu::image_format_from_vk(ferrum::gpu::vulkan_format(f)) == f);
    CHECK_FALSE(ferrum::gpu::image_format_from_vk(VK_FORMAT_R5G6B5_UNORM_PACK16).has_value());

    vulkan_test::engine_vk_image engine(handles, VK_FORMAT_R8G8B8A8_UNORM,
                                        VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT, {64, 32, 1},
                                        false);
    // Ferrum's view: made for the sampled usage, destroyed with the wrapper
    // (the layers' object tracking reports a leaked one at the device's end).
    auto sampled = require(
        ferrum::gpu::import_vulkan_image(device, ferrum::gpu::vulkan_image_import::of(engine.image, engine.info)));
    CHECK(sampled->spec() == ferrum::gpu::image_spec{ferrum::image_format::rgba8_unorm, 64, 32, 1, 1,
                                                     usage::sampled | usage::transfer_dst});
    CHECK(ferrum::gpu::vulkan_image_handle(*sampled) == engine.image);
    CHECK(ferrum::gpu::vulkan_image_view(*sampled) != VK_NULL_HANDLE);
    CHECK(&sampled->device() == &device);
    sampled.reset();
    // Only copied: no view.
    auto copied = require(ferrum::gpu::import_vulkan_image(device, {.image = engine.image,
                                                                    .format = VK_FORMAT_R8G8B8A8_UNORM,
                                                                    .extent = {64, 32, 1},
                                                                    .usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT}));
    CHECK(ferrum::gpu::vulkan_image_view(*copied) == VK_NULL_HANDLE);
    copied.reset();

    const auto refused = [&](ferrum::gpu::device& d, ferrum::gpu::vulkan_image_import info, ferrum::errc code,
                             std::string_view says) {
      auto r = ferrum::gpu::import_vulkan_image(d, info);
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code == code);
      CHECK_THAT(r.error().detail, Catch::Contains(std::string(says)));
    };
    const ferrum::gpu::vulkan_image_import good = ferrum::gpu::vulkan_image_import::of(engine.image, engine.info);
    auto with = [&](auto change) {
      ferrum::gpu::vulkan_image_import i = good;
      change(i);
      return i;
    };
    auto null = ::test::null_device();
    refused(*null, good, ferrum::errc::invalid_device_option, "is not a Vulkan device");
    refused(device, with([](auto& i) { i.image = VK_NULL_HANDLE; }), ferrum::errc::invalid_device_option,
            "a null image");
    refused(device, with([](auto& i) { i.format = VK_FORMAT_R5G6B5_UNORM_PACK16; }), ferrum::errc::invalid_image,
            "VkFormat 4 is none of ferrum's formats: rgba8-unorm (37)");
    refused(device, with([](auto& i) { i.samples = VK_SAMPLE_COUNT_4_BIT; }), ferrum::errc::invalid_image,
            "4 samples; ferrum's images are single-sampled");
    refused(device, with([](auto& i) { i.type = VK_IMAGE_TYPE_3D; }), ferrum::errc::invalid_image,
            "ferrum's images are 2D");
    refused(device, with([](auto& i) { i.extent.depth = 4; }), ferrum::errc::invalid_image, "of depth 4");
    refused(device, with([](auto& i) { i.usage = VK_IMAGE_USAGE_INPUT_ATTACHMENT_BIT; }), ferrum::errc::invalid_image,
            "usage 0 (at least one image_usage bit");
    refused(device, with([](auto& i) { i.mip_levels = 8; }), ferrum::errc::invalid_image, "mips outside 1..7");
    refused(device, with([](auto& i) { i.array_layers = 0; }), ferrum::errc::invalid_image, "layers outside");
    refused(device, with([](auto& i) {
              i.format = VK_FORMAT_D32_SFLOAT;
              i.usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT;
            }),
            ferrum::errc::invalid_image, "a depth format is neither stored to nor a color attachment");
    // How it is shared: lavapipe has one queue family, which every queue
    // kind runs on.
    CHECK(good.sharing.mode == VK_SHARING_MODE_EXCLUSIVE);
    auto exclusive = require(ferrum::gpu::import_vulkan_image(device, good));
    CHECK(exclusive->queues() == ferrum::every_queue_kind);
    exclusive.reset();
    const std::uint32_t family = 0;
    refused(device,
            with([&](auto& i) { i.sharing = ferrum::gpu::vulkan_sharing::of(VK_SHARING_MODE_CONCURRENT, 1, &family); }),
            ferrum::errc::invalid_device_option, "VK_SHARING_MODE_CONCURRENT over 1 queue families");
    refused(device, with([](auto& i) { i.sharing.owner = 3; }), ferrum::errc::invalid_device_option,
            "owned by queue family 3; the device has 1 queue families");
  }
  s.finish();
}
