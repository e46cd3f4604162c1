// Presentation on the Vulkan device (ferrum/gpu/swapchain.hpp): a GLFW window
// (no client API) on the X server xvfb-run starts, its surface, and a
// swapchain whose images waves fill (swapchain::record_copy), with validation
// (synchronization validation included) that must stay silent.
#include "ferrum/gpu/command_list.hpp"
#include "ferrum/gpu/null_device.hpp"
#include "ferrum/gpu/swapchain.hpp"

#include "present/window_fixture.hpp"

#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
using ferrum::errc;
using ferrum::gpu::swapchain;
using ferrum::gpu::swapchain_image;
using present_test::acquire_now;
using present_test::glfw_ready;
using present_test::window_fixture;
using vulkan_test::require;

// The texel of (x, y) in frame `frame`, as 4 bytes r, g, b, a.
std::array<std::uint8_t, 4> texel(std::uint32_t x, std::uint32_t y, std::uint64_t frame) {
  return {static_cast<std::uint8_t>(x * 3 + frame), static_cast<std::uint8_t>(y * 5),
          static_cast<std::uint8_t>(frame * 40), 255};
}

// Draws `image`: the known pattern written into `staging` in the
// swapchain's channel order, copied into the image by one wave that waits
// on its acquisition and signals it presentable, then presented.
struct painter {
  ferrum::gpu::device& device;
  swapchain& chain;
  std::unique_ptr<ferrum::gpu::arena> staging;
  std::unique_ptr<ferrum::gpu::command_list> list;

  static painter make(ferrum::gpu::device& d, swapchain& c, std::size_t max_bytes) {
    return {d, c, require(d.create_arena(max_bytes)), require(d.create_command_list(ferrum::queue_kind::compute))};
  }

  // Before the device goes.
  void release() {
    list.reset();
    staging.reset();
  }

  std::uint64_t draw(const swapchain_image& image) {
    // The host writes the arena only once the last wave read it.
    if (list->submitted_value() != 0) vulkan_test::require_reached(device.queue().timeline(), list->submitted_value());
    const std::size_t bytes = std::size_t{image.width} * image.height * 4;
    REQUIRE(bytes <= staging->size());
    const bool bgra = chain.order() == ferrum::gpu::channel_order::bgra;
    auto out = staging->bytes();
    for (std::uint32_t y = 0; y < image.height; ++y) {
      for (std::uint32_t x = 0; x < image.width; ++x) {
        auto t = texel(x, y, image.frame);
        if (bgra) std::swap(t[0], t[2]);
        std::memcpy(out.data() + (std::size_t{y} * image.width + x) * 4, t.data(), 4);
      }
    }
    require(list->begin());
    require(chain.record_copy(*list, staging->range(0, bytes), image));
    require(list->end());
    const ferrum::gpu::semaphore_op waits[] = {{image.acquired, 0, ferrum::gpu::sync_stage::transfer}};
    const ferrum::gpu::semaphore_op signals[] = {{image.presentable, 0}};
    ferrum::gpu::command_list* lists[] = {list.get()};
    const std::uint64_t value = require(device.queue().submit_next(lists, {}, {waits, signals}));
    require(chain.present(image));
    return value;
  }
};

// The top left width x height pixels of the X screen as RGBA bytes (xwd and
// ImageMagick's convert), or nothing when either is missing. Without a
// window manager the window sits at the screen's origin.
std::optional<std::vector<std::uint8_t>> screen_rgba(std::uint32_t width, std::uint32_t height) {
  const std::string command = "xwd -root -silent 2>/dev/null | convert xwd:- -crop " + std::to_string(width) + "x" +
                              std::to_string(height) + "+0+0 -depth 8 rgba:- 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::vector<std::uint8_t> bytes(std::size_t{width} * height * 4);
  const std::size_t read = std::fread(bytes.data(), 1, bytes.size(), pipe);
  const int status = pclose(pipe);
  if (status != 0 || read != bytes.size()) return std::nullopt;
  return bytes;
}

// A counting allocator for the handler's associated allocator.
template <class T>
struct counting_allocator {
  using value_type = T;
  std::atomic<int>* count;
  explicit counting_allocator(std::atomic<int>* c) noexcept : count(c) {}
  template <class U>
  counting_allocator(const counting_allocator<U>& other) noexcept : count(other.count) {}
  T* allocate(std::size_t n) {
    count->fetch_add(1);
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept { std::allocator<T>().deallocate(p, n); }
  template <class U>
  bool operator==(const counting_allocator<U>& other) const noexcept {
    return count == other.count;
  }
};

}  // namespace

TEST_CASE("swapchain: create refuses what cannot present", "[vulkan][present]") {
  window_fixture f;
  if (!f.open(64, 48, false)) return;
  SECTION("a device without presentation") {
    auto chain = swapchain::create(*f.session.device, f.options());
    REQUIRE_FALSE(chain.has_value());
    CHECK(chain.error() == errc::invalid_device_option);
    CHECK(chain.error().detail.find("presentation") != std::string::npos);
  }
  SECTION("the null device") {
    auto null = require(ferrum::gpu::null_device::create({}));
    auto chain = swapchain::create(*null, f.options());
    REQUIRE_FALSE(chain.has_value());
    CHECK(chain.error() == errc::invalid_device_option);
    CHECK(chain.error().detail.find("not a Vulkan device") != std::string::npos);
  }
  f.finish();
}

TEST_CASE("vulkan_device_options: instance extensions must be offered", "[vulkan][present]") {
  vulkan_test::message_log log;
  ferrum::gpu::vulkan_device_options options = vulkan_test::validating(log);
  options.instance_extensions = {VK_KHR_SURFACE_EXTENSION_NAME, "VK_FERRUM_no_such_extension"};
  auto device = ferrum::gpu::create_vulkan_device(options);
  if (!device && device.error() == errc::vulkan_unavailable) {
    (void)vulkan_test::skip_or_fail(device.error());
    return;
  }
  REQUIRE_FALSE(device.has_value());
  CHECK(device.error() == errc::vulkan_feature_missing);
  CHECK(device.error().detail.find("VK_FERRUM_no_such_extension") != std::string::npos);
  CHECK(log.empty());
}

TEST_CASE("swapchain: create checks its options", "[vulkan][present]") {
  window_fixture f;
  if (!f.open(64, 48)) return;
  ferrum::gpu::swapchain_options o = f.options();
  SECTION("a null surface") {
    o.surface = VK_NULL_HANDLE;
    auto chain = swapchain::create(*f.session.device, o);
    REQUIRE_FALSE(chain.has_value());
    CHECK(chain.error() == errc::invalid_device_option);
    CHECK(chain.error().detail.find("surface") != std::string::npos);
  }
  SECTION("frames in flight outside 1..8") {
    o.frames_in_flight = GENERATE(0u, 9u);
    auto chain = swapchain::create(*f.session.device, o);
    REQUIRE_FALSE(chain.has_value());
    CHECK(chain.error() == errc::invalid_device_option);
  }
  SECTION("a valid one: its extent is the window's, its format UNORM") {
    f.chain = require(swapchain::create(*f.session.device, o));
    CHECK(f.chain->width() == o.width);
    CHECK(f.chain->height() == o.height);
    CHECK(f.chain->recreations() == 0);
  }
  f.finish();
}

TEST_CASE("swapchain: frames of a known pattern are copied and presented, validation silent", "[vulkan][present]") {
  window_fixture f;
  if (!f.open(64, 48)) return;
  f.chain = require(swapchain::create(*f.session.device, f.options(2)));
  auto p = painter::make(*f.session.device, *f.chain, 64 * 48 * 4);
  std::uint64_t last = 0;
  for (std::uint64_t frame = 1; frame <= 8; ++frame) {
    const swapchain_image image = acquire_now(*f.chain);
    CHECK(image.frame == frame);
    CHECK(image.width == 64);
    CHECK(image.height == 48);
    REQUIRE(image.acquired != nullptr);
    REQUIRE(image.presentable != nullptr);
    CHECK(image.acquired->kind() == ferrum::gpu::semaphore_kind::binary);
    last = p.draw(image);
    glfwPollEvents();
  }
  vulkan_test::require_reached(f.session.device->queue().timeline(), last);
  // What the X server shows is frame 8's pattern, byte for byte (the
  // presentation engine may take a moment to put it on the screen).
  std::optional<std::vector<std::uint8_t>> shown;
  bool matches = false;
  for (int attempt = 0; attempt < 50 && !matches; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    glfwPollEvents();
    shown = screen_rgba(64, 48);
    if (!shown) break;
    matches = true;
    for (std::uint32_t y = 0; y < 48 && matches; ++y)
      for (std::uint32_t x = 0; x < 64 && matches; ++x) {
        const auto t = texel(x, y, 8);
        const std::uint8_t* px = shown->data() + (std::size_t{y} * 64 + x) * 4;
        matches = px[0] == t[0] && px[1] == t[1] && px[2] == t[2];
      }
  }
  if (shown) {
    CHECK(matches);
  } else {
    WARN("xwd or ImageMagick's convert is missing: what the window shows is not compared");
  }
  // Presenting twice, or an image never handed out, is refused.
  swapchain_image bogus;
  bogus.frame = 8;
  CHECK(f.chain->present(bogus).error() == errc::invalid_device_option);
  p.release();
  f.finish();
}

TEST_CASE("swapchain: resize recreates it at the new extent", "[vulkan][present]") {
  window_fixture f;
  if (!f.open(64, 48)) return;
  f.chain = require(swapchain::create(*f.session.device, f.options(2)));
  auto p = painter::make(*f.session.device, *f.chain, 96 * 72 * 4);
  (void)p.draw(acquire_now(*f.chain));
  glfwSetWindowSize(f.window, 96, 72);
  // The X server resizes the window once it read the request.
  for (int i = 0; i < 200; ++i) {
    int w = 0, h = 0;
    glfwPollEvents();
    glfwGetFramebufferSize(f.window, &w, &h);
    if (w == 96 && h == 72) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  f.chain->resize(96, 72);
  const swapchain_image image = acquire_now(*f.chain);
  CHECK(f.chain->recreations() >= 1);
  CHECK(image.width == 96);
  CHECK(image.height == 72);
  CHECK(f.chain->width() == 96);
  CHECK(f.chain->height() == 72);
  const std::uint64_t last = p.draw(image);
  // A few more frames at the new size.
  std::uint64_t value = last;
  for (int i = 0; i < 3; ++i) value = p.draw(acquire_now(*f.chain));
  vulkan_test::require_reached(f.session.device->queue().timeline(), value);
  p.release();
  f.finish();
}

TEST_CASE("swapchain: async_acquire follows Asio's rules", "[vulkan][present]") {
  window_fixture f;
  if (!f.open(32, 32)) return;
  f.chain = require(swapchain::create(*f.session.device, f.options(1)));
  auto p = painter::make(*f.session.device, *f.chain, 32 * 32 * 4);
  std::uint64_t last = 0;

  SECTION("on an io_context: the handler runs inside run(), which waits for it") {
    asio::io_context ctx;
    std::optional<swapchain_image> got;
    std::thread::id ran_on;
    f.chain->async_acquire(asio::bind_executor(ctx, [&](boost::system::error_code ec, swapchain_image image) {
      CHECK_FALSE(ec);
      ran_on = std::this_thread::get_id();
      got = image;
    }));
    ctx.run();  // outstanding work until the handler ran
    REQUIRE(got);
    CHECK(ran_on == std::this_thread::get_id());
    last = p.draw(*got);
  }
  SECTION("on a thread_pool") {
    asio::thread_pool pool(1);
    std::promise<swapchain_image> done;
    f.chain->async_acquire(asio::bind_executor(pool, [&](boost::system::error_code ec, swapchain_image image) {
      CHECK_FALSE(ec);
      CHECK(pool.get_executor().running_in_this_thread());
      done.set_value(image);
    }));
    auto image = done.get_future();
    REQUIRE(image.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    last = p.draw(image.get());
    pool.join();
  }
  SECTION("deferred: nothing is acquired until it is started") {
    auto op = f.chain->async_acquire(asio::deferred);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto image = std::move(op)(asio::use_future);
    REQUIRE(image.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    const swapchain_image first = image.get();
    CHECK(first.frame == 1);
    last = p.draw(first);
  }
  SECTION("cancelled while queued: operation_aborted, nothing acquired") {
    const auto type =
        GENERATE(asio::cancellation_type::terminal, asio::cancellation_type::partial, asio::cancellation_type::total);
    // One frame in flight: frame 1 holds the slot until it is presented, so
    // the next acquisition stays queued.
    const swapchain_image first = acquire_now(*f.chain);
    asio::io_context ctx;
    asio::cancellation_signal signal;
    std::optional<boost::system::error_code> result;
    f.chain->async_acquire(asio::bind_cancellation_slot(
        signal.slot(), asio::bind_executor(ctx, [&](boost::system::error_code ec, swapchain_image image) {
          result = ec;
          CHECK(image.acquired == nullptr);
        })));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(ctx.poll() == 0);  // still queued
    signal.emit(type);
    ctx.run();
    REQUIRE(result);
    CHECK(*result == asio::error::operation_aborted);
    (void)p.draw(first);
    const swapchain_image second = acquire_now(*f.chain);
    CHECK(second.frame == 2);  // the cancelled one took no frame
    last = p.draw(second);
  }
  SECTION("the handler's associated allocator holds it") {
    std::atomic<int> allocations{0};
    std::promise<swapchain_image> done;
    f.chain->async_acquire(asio::bind_allocator(counting_allocator<void>(&allocations),
                                                [&](boost::system::error_code ec, swapchain_image image) {
                                                  CHECK_FALSE(ec);
                                                  done.set_value(image);
                                                }));
    auto image = done.get_future();
    REQUIRE(image.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    CHECK(allocations.load() > 0);
    last = p.draw(image.get());
  }
  if (last != 0) vulkan_test::require_reached(f.session.device->queue().timeline(), last);
  p.release();
  f.finish();
}

TEST_CASE("swapchain: each acquired image is a gpu::image of the swapchain's format, extent and usage",
          "[vulkan][present]") {
  window_fixture f;
  if (!f.open(32, 24)) return;
  f.chain = require(swapchain::create(*f.session.device, f.options(1)));
  auto& d = *f.session.device;
  const swapchain_image image = acquire_now(*f.chain);
  REQUIRE(image.image != nullptr);
  const ferrum::gpu::image_spec& spec = image.image->spec();
  CHECK(&image.image->device() == &d);
  CHECK(spec.format == (f.chain->order() == ferrum::gpu::channel_order::rgba ? ferrum::image_format::rgba8_unorm
                                                                             : ferrum::image_format::bgra8_unorm));
  CHECK(spec.width == image.width);
  CHECK(spec.height == image.height);
  CHECK(spec.mips == 1);
  CHECK(spec.layers == 1);
  const std::uint32_t always = ferrum::gpu::image_usage::transfer_dst | ferrum::gpu::image_usage::color_attachment;
  CHECK((spec.usage & always) == always);
  CHECK(image.image->native_handle() != 0);
  CHECK(image.image->native_view() != 0);  // an attachment takes a view
  auto p = painter::make(d, *f.chain, 32 * 24 * 4);
  vulkan_test::require_reached(d.queue().timeline(), p.draw(image));
  p.release();
  f.finish();
}

TEST_CASE("swapchain::record_copy: a refused copy records nothing", "[vulkan][present]") {
  window_fixture f;
  if (!f.open(32, 32)) return;
  f.chain = require(swapchain::create(*f.session.device, f.options(1)));
  auto& d = *f.session.device;
  auto arena = require(d.create_arena(32 * 32 * 4 + 64));
  auto list = require(d.create_command_list(ferrum::queue_kind::compute));
  const swapchain_image image = acquire_now(*f.chain);

  SECTION("outside begin ... end") {
    CHECK(f.chain->record_copy(*list, arena->range(0, 32 * 32 * 4), image).error() == errc::command_list_state);
  }
  require(list->begin());
  SECTION("a size other than width * height * 4") {
    CHECK(f.chain->record_copy(*list, arena->range(0, 32 * 32 * 4 - 4), image).error() == errc::copy_size_mismatch);
  }
  SECTION("out of the arena") {
    CHECK(f.chain->record_copy(*list, arena->range(128, 32 * 32 * 4), image).error() == errc::range_out_of_bounds);
  }
  SECTION("an arena of another device") {
    auto null = require(ferrum::gpu::null_device::create({}));
    auto foreign = require(null->create_arena(32 * 32 * 4));
    CHECK(f.chain->record_copy(*list, foreign->whole(), image).error() == errc::foreign_object);
  }
  SECTION("a list made for the transfer queue") {
    auto transfer = require(d.create_command_list(ferrum::queue_kind::transfer));
    require(transfer->begin());
    CHECK(f.chain->record_copy(*transfer, arena->range(0, 32 * 32 * 4), image).error() == errc::unsupported_command);
    require(transfer->end());
  }
  SECTION("a list made for the async compute queue") {
    auto async = require(d.create_command_list(ferrum::queue_kind::async_compute));
    require(async->begin());
    const auto refused = f.chain->record_copy(*async, arena->range(0, 32 * 32 * 4), image);
    CHECK(refused.error() == errc::unsupported_command);
    CHECK_THAT(refused.error().what(), Catch::Contains("made for the async-compute queue"));
    require(async->end());
  }
  SECTION("an image the swapchain did not hand out") {
    swapchain_image other = image;
    other.frame = 7;
    CHECK(f.chain->record_copy(*list, arena->range(0, 32 * 32 * 4), other).error() == errc::invalid_device_option);
  }
  // Nothing recorded, no transition pending: ending the list makes no barrier.
  CHECK(list->size() == 0);
  require(list->end());
  CHECK(list->barriers() == 0);
  // The acquisition's semaphore is consumed and the image presented, so
  // that nothing is left pending.
  auto p = painter::make(d, *f.chain, 32 * 32 * 4);
  vulkan_test::require_reached(d.queue().timeline(), p.draw(image));
  p.release();
  list.reset();
  arena.reset();
  f.finish();
}
