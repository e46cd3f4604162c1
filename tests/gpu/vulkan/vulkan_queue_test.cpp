// The Vulkan device's queues: how compute and transfer map onto the queues
// the GPU offers (on lavapipe, one queue for both), and submissions ordered
// across queues by their timeline waits, proven by the data; validation
// silent. A GPU with a transfer queue of its own runs the same tests on two
// queues.
#include "ferrum/gpu/builtin_kernels.hpp"
#include "ferrum/gpu/null_device.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include "vulkan/vulkan_physical_device.hpp"
#include "vulkan/vulkan_sharing.hpp"
#include "vulkan_test_support.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using ferrum::queue_kind;
using ferrum::gpu::command_list;
using ferrum::gpu::queue_wait;
using ferrum::gpu::builtin::pattern_word;
using namespace vulkan_test;

namespace {

bool lavapipe(const ferrum::gpu::device& device) { return device.name().find("llvmpipe") != std::string::npos; }

}  // namespace

TEST_CASE("vulkan queues: each kind has a queue and on lavapipe (one queue) both kinds share it", "[vulkan]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  ferrum::gpu::queue& compute = device.queue(queue_kind::compute);
  ferrum::gpu::queue& transfer = device.queue(queue_kind::transfer);
  CHECK(&device.queue() == &compute);
  CHECK(&device.queue_at(0) == &compute);
  CHECK(compute.kind() == queue_kind::compute);
  CHECK(compute.index() == 0);
  const auto native = ferrum::gpu::native_handles(device);
  REQUIRE(native.has_value());
  if (lavapipe(device)) {
    CHECK(device.queue_count() == 1);
    CHECK(&transfer == &compute);
    CHECK(native->transfer_queue == native->queue);
    CHECK(native->transfer_timeline == native->timeline);
  } else if (device.queue_count() == 2) {
    CHECK(&transfer != &compute);
    CHECK(transfer.kind() == queue_kind::transfer);
    CHECK(transfer.index() == 1);
    CHECK(native->transfer_timeline != native->timeline);
  }
  auto list = require(device.create_command_list(queue_kind::transfer));
  CHECK(list->kind() == queue_kind::transfer);
  list.reset();
  s.finish();
}

TEST_CASE("vulkan queues: async compute lands on the main queue on lavapipe and runs a dispatch there", "[vulkan]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  ferrum::gpu::queue& async = device.queue(queue_kind::async_compute);
  const auto native = ferrum::gpu::native_handles(device);
  REQUIRE(native.has_value());
  if (lavapipe(device)) {
    CHECK(&async == &device.queue());
    CHECK(native->async_queue == native->queue);
    CHECK(native->async_timeline == native->timeline);
  } else if (&async != &device.queue()) {
    CHECK(async.kind() == queue_kind::async_compute);
    CHECK(native->async_timeline != native->timeline);
  }
  auto arena = require(device.create_arena(4096));
  auto writer = require(device.create_kernel(ferrum::gpu::builtin::write_pattern()));
  auto list = require(device.create_command_list(queue_kind::async_compute));
  CHECK(list->kind() == queue_kind::async_compute);
  require(list->begin());
  require(list->dispatch(*writer, arena->range(0, 4096), {}, std::array{17u}));
  require(list->end());
  command_list* lists[] = {list.get()};
  const std::uint64_t value = require(async.submit_next(lists));
  require_reached(async.timeline(), value);
  CHECK(word_at(*arena, 100) == pattern_word(17, 100));
  list.reset();
  writer.reset();
  arena.reset();
  s.finish();
}

TEST_CASE(
    "vulkan queues: the async queue is another compute family's, else the main family's next queue, else the "
    "main queue",
    "[vulkan]") {
  constexpr VkQueueFlags graphics = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT;
  constexpr VkQueueFlags compute = VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT;
  constexpr VkQueueFlags copy = VK_QUEUE_TRANSFER_BIT;
  const auto chosen = [](std::vector<VkQueueFamilyProperties> families, std::uint32_t transfer_family,
                         std::uint32_t transfer_index) {
    ferrum::gpu::vulkan_physical_device d;
    d.queue_family = 0;
    d.transfer_family = transfer_family;
    d.transfer_queue_index = transfer_index;
    ferrum::gpu::choose_async_queue(d, families);
    return std::pair{d.async_family, d.async_queue_index};
  };
  using q = VkQueueFamilyProperties;
  // NVIDIA-like: graphics x16, transfer x2, compute x8.
  CHECK(chosen({q{graphics, 16, 64, {}}, q{copy, 2, 64, {}}, q{compute, 8, 64, {}}}, 1, 0) == std::pair{2u, 0u});
  // AMD-like: graphics x1, compute x4, transfer x2.
  CHECK(chosen({q{graphics, 1, 64, {}}, q{compute, 4, 64, {}}, q{copy, 2, 64, {}}}, 2, 0) == std::pair{1u, 0u});
  // A second family with graphics as well is taken where none lacks it.
  CHECK(chosen({q{graphics, 1, 64, {}}, q{graphics, 1, 64, {}}}, 0, 0) == std::pair{1u, 0u});
  // Without graphics preferred over with it.
  CHECK(chosen({q{graphics, 1, 64, {}}, q{graphics, 1, 64, {}}, q{compute, 1, 64, {}}}, 0, 0) == std::pair{2u, 0u});
  // One family: its queue after the transfer queue's, where it has one.
  CHECK(chosen({q{graphics, 3, 64, {}}}, 0, 1) == std::pair{0u, 2u});
  CHECK(chosen({q{graphics, 2, 64, {}}}, 0, 0) == std::pair{0u, 1u});
  // lavapipe: one family, one queue: the main queue itself.
  CHECK(chosen({q{graphics, 1, 64, {}}}, 0, 0) == std::pair{0u, 0u});
  CHECK(chosen({q{graphics, 2, 64, {}}}, 0, 1) == std::pair{0u, 0u});
}

TEST_CASE("vulkan queues: an engine's resource may be used on the queues of the families it is shared with",
          "[vulkan]") {
  using ferrum::queue_bit;
  using ferrum::queue_kind;
  using ferrum::gpu::vulkan_sharing;
  const std::uint32_t compute = queue_bit(queue_kind::compute);
  const std::uint32_t transfer = queue_bit(queue_kind::transfer);
  const std::uint32_t async = queue_bit(queue_kind::async_compute);
  const auto kinds = [](const vulkan_sharing& sharing, ferrum::gpu::queue_families families) {
    return ferrum::gpu::shared_queue_kinds(sharing, families, "");
  };
  // AMD-like: compute on family 0, transfer on 2, async on 1.
  const ferrum::gpu::queue_families amd{{0, 2, 1}, 3};
  CHECK(kinds({}, amd).value() == compute);
  CHECK(kinds({VK_SHARING_MODE_EXCLUSIVE, 1, 0}, amd).value() == async);
  const std::array<std::uint32_t, 2> main_and_async{0, 1};
  CHECK(kinds(vulkan_sharing::of(VK_SHARING_MODE_CONCURRENT, 2, main_and_async.data()), amd).value() ==
        (compute | async));
  const std::array<std::uint32_t, 3> all{2, 0, 1};
  CHECK(kinds(vulkan_sharing::of(VK_SHARING_MODE_CONCURRENT, 3, all.data()), amd).value() == ferrum::every_queue_kind);
  // Transfer sharing the main family (a second queue of it): exclusive covers both.
  CHECK(kinds({}, {{0, 0, 1}, 2}).value() == (compute | transfer));
  // lavapipe: one family, every kind.
  CHECK(kinds({}, {{0, 0, 0}, 1}).value() == ferrum::every_queue_kind);
  // What Vulkan does not allow, or the device does not have.
  const auto refused = [&](const vulkan_sharing& sharing, std::string_view says) {
    const auto r = kinds(sharing, amd);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == ferrum::errc::invalid_device_option);
    CHECK_THAT(r.error().detail, Catch::Contains(std::string(says)));
  };
  refused({VK_SHARING_MODE_EXCLUSIVE, 3, 0}, "owned by queue family 3; the device has 3 queue families");
  refused(vulkan_sharing::of(VK_SHARING_MODE_CONCURRENT, 1, main_and_async.data()),
          "VK_SHARING_MODE_CONCURRENT over 1 queue families; Vulkan takes two or more");
  const std::array<std::uint32_t, 2> far{0, 70};
  refused(vulkan_sharing::of(VK_SHARING_MODE_CONCURRENT, 2, far.data()),
          "over queue family 63 or more; the device has 3 queue families");
  refused({VK_SHARING_MODE_MAX_ENUM, 0, 0}, "is neither EXCLUSIVE nor CONCURRENT");
}

TEST_CASE("vulkan queues: a transfer that waits on a compute submission copies what the kernel wrote", "[vulkan]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  ferrum::gpu::queue& compute = device.queue(queue_kind::compute);
  ferrum::gpu::queue& transfer = device.queue(queue_kind::transfer);
  auto source = require(device.create_arena(16384));
  auto destination = require(device.create_arena(16384));
  auto writer = require(device.create_kernel(ferrum::gpu::builtin::write_pattern()));
  auto producer = require(device.create_command_list(queue_kind::compute));
  auto consumer = require(device.create_command_list(queue_kind::transfer));
  constexpr std::uint32_t seed = 0xabc;
  // Many rounds, each submitted back to back without the host waiting in
  // between: only the timeline wait orders the copy after the kernel.
  for (std::uint32_t round = 0; round < 8; ++round) {
    const std::array<std::uint32_t, 1> push{seed + round};
    const std::uint64_t produced = test::submit_on(
        compute, *producer, [&](command_list& l) { require(l.dispatch(*writer, source->whole(), {}, push)); });
    const std::array after{queue_wait{&compute, produced}};
    const std::uint64_t copied = test::submit_on(
        transfer, *consumer, [&](command_list& l) { require(l.copy(source->whole(), destination->whole())); }, after);
    require_reached(transfer.timeline(), copied);
    std::size_t wrong = 0;
    for (std::uint32_t i = 0; i < destination->size() / 4; ++i)
      wrong += word_at(*destination, i) != pattern_word(seed + round, i) ? 1 : 0;
    CHECK(wrong == 0);
    // The producer's list is reused next round: its own queue must be past it.
    require_reached(compute.timeline(), produced);
  }
  producer.reset();
  consumer.reset();
  writer.reset();
  source.reset();
  destination.reset();
  s.finish();
}

TEST_CASE("vulkan queues: a kernel that waits on a transfer upload reads the uploaded words", "[vulkan]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  ferrum::gpu::queue& compute = device.queue(queue_kind::compute);
  ferrum::gpu::queue& transfer = device.queue(queue_kind::transfer);
  auto staging = require(device.create_arena(8192));
  auto data = require(device.create_arena(8192));
  auto counters = require(device.create_arena(64));
  auto checker = require(device.create_kernel(ferrum::gpu::builtin::check_pattern()));
  auto upload = require(device.create_command_list(queue_kind::transfer));
  auto check = require(device.create_command_list(queue_kind::compute));
  constexpr std::uint32_t seed = 0x600d;
  for (std::uint32_t i = 0; i < staging->size() / 4; ++i) set_word(*staging, i, pattern_word(seed, i));
  // The transfer list first clears the data, then uploads it: a check that
  // ran early, or saw the fill only, would count words.
  const std::uint64_t uploaded = test::submit_on(transfer, *upload, [&](command_list& l) {
    require(l.fill(data->whole(), 0));
    require(l.copy(staging->whole(), data->whole()));
  });
  const std::array after{queue_wait{&transfer, uploaded}};
  const std::array<std::uint32_t, 1> push{seed};
  const std::uint64_t checked = test::submit_on(
      compute, *check,
      [&](command_list& l) { require(l.dispatch(*checker, data->whole(), counters->range(0, 4), push)); }, after);
  require_reached(compute.timeline(), checked);
  CHECK(word_at(*counters, 0) == 0u);
  // The same check on corrupted data counts: the kernel did run.
  set_word(*data, 5, ~word_at(*data, 5));
  const std::uint64_t again = test::submit_on(compute, *check, [&](command_list& l) {
    require(l.dispatch(*checker, data->whole(), counters->range(0, 4), push));
  });
  require_reached(compute.timeline(), again);
  CHECK(word_at(*counters, 0) == 1u);
  upload.reset();
  check.reset();
  checker.reset();
  counters.reset();
  data.reset();
  staging.reset();
  s.finish();
}

TEST_CASE("vulkan queues: waits are checked before anything reaches the GPU", "[vulkan]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  ferrum::gpu::queue& compute = device.queue(queue_kind::compute);
  ferrum::gpu::queue& transfer = device.queue(queue_kind::transfer);
  const std::array unsubmitted{queue_wait{&compute, compute.last_submitted() + 1}};
  CHECK(transfer.submit_next({}, unsubmitted).error() == ferrum::errc::wait_not_submitted);
  auto other = ferrum::gpu::null_device::create({});
  REQUIRE(other.has_value());
  const std::array foreign{queue_wait{&(*other)->queue(), 0}};
  CHECK(transfer.submit_next({}, foreign).error() == ferrum::errc::foreign_object);
  CHECK(transfer.last_submitted() == 0);
  // A wait on the queue's own submitted value (the case of both kinds on one
  // queue) is a valid Vulkan wait on the semaphore it signals later.
  const std::uint64_t first = require(compute.submit_next({}));
  const std::array own{queue_wait{&compute, first}};
  require_reached(compute.timeline(), require(compute.submit_next({}, own)));
  s.finish();
}
