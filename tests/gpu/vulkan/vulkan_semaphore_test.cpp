// Semaphores besides the queues' timelines on the Vulkan device
// (ferrum/gpu/semaphore.hpp): a submission waiting on a timeline semaphore
// runs once the host (or an engine, on its own VkSemaphore imported) signals
// it, a binary semaphore orders two submissions, the host side of timeline
// semaphores, and the errors; validation silent.
#include "ferrum/gpu/null_device.hpp"
#include "ferrum/gpu/semaphore.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include "vulkan_test_support.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>

using namespace std::chrono_literals;
using ferrum::errc;
using ferrum::queue_kind;
using ferrum::gpu::command_list;
using ferrum::gpu::semaphore_kind;
using ferrum::gpu::semaphore_op;
using ferrum::gpu::sync_stage;
using namespace vulkan_test;

namespace {

// Records a fill of the first `words` words of `a` with `value` into `list`.
void fill_words(command_list& list, ferrum::gpu::arena& a, std::size_t words, std::uint32_t value) {
  require(list.begin());
  require(list.fill(a.range(0, words * 4), value));
  require(list.end());
}

std::size_t words_other_than(const ferrum::gpu::arena& a, std::size_t first, std::size_t count, std::uint32_t value) {
  std::size_t wrong = 0;
  for (std::size_t i = first; i < first + count; ++i) wrong += word_at(a, i) != value ? 1 : 0;
  return wrong;
}

// A timeline semaphore made as an engine makes one, with plain Vulkan.
VkSemaphore engine_timeline(VkDevice device) {
  VkSemaphoreTypeCreateInfo type{};
  type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type.initialValue = 0;
  VkSemaphoreCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  info.pNext = &type;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  REQUIRE(vkCreateSemaphore(device, &info, nullptr, &semaphore) == VK_SUCCESS);
  return semaphore;
}

void engine_signal(VkDevice device, VkSemaphore semaphore, std::uint64_t value) {
  VkSemaphoreSignalInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO;
  info.semaphore = semaphore;
  info.value = value;
  REQUIRE(vkSignalSemaphore(device, &info) == VK_SUCCESS);
}

std::uint64_t engine_value(VkDevice device, VkSemaphore semaphore) {
  std::uint64_t value = 0;
  REQUIRE(vkGetSemaphoreCounterValue(device, semaphore, &value) == VK_SUCCESS);
  return value;
}

}  // namespace

TEST_CASE("vulkan semaphores: a submission waiting on a timeline semaphore runs once the host signals it",
          "[vulkan][semaphore]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  ferrum::gpu::queue& q = device.queue();
  auto ready = require(device.create_semaphore(semaphore_kind::timeline));
  CHECK(ready->kind() == semaphore_kind::timeline);
  CHECK(ready->native_handle() != 0);
  CHECK(&ready->device() == &device);
  auto arena = require(device.create_arena(4096));
  auto list = require(device.create_command_list());
  fill_words(*list, *arena, 1024, 0x5e5e5e5e);
  const std::array wait{semaphore_op{ready.get(), 2, sync_stage::transfer}};
  command_list* lists[] = {list.get()};
  const std::uint64_t value = require(q.submit_next(lists, {}, {.waits = wait}));
  CHECK(wait_for(q.timeline(), value, 50ms) == std::nullopt);
  CHECK(words_other_than(*arena, 0, 1024, 0) == 0);
  require(ready->signal_from_host(1));
  CHECK(wait_for(q.timeline(), value, 50ms) == std::nullopt);
  CHECK(words_other_than(*arena, 0, 1024, 0) == 0);
  require(ready->signal_from_host(2));
  require_reached(q.timeline(), value);
  CHECK(words_other_than(*arena, 0, 1024, 0x5e5e5e5e) == 0);
  list.reset();
  arena.reset();
  ready.reset();
  s.finish();
}

TEST_CASE("vulkan semaphores: a timeline semaphore's host signal, value and wait_from_host agree",
          "[vulkan][semaphore]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  auto timeline = require(device.create_semaphore(semaphore_kind::timeline));
  CHECK(require(timeline->value()) == 0);
  CHECK_FALSE(require(timeline->wait_from_host(1, 1ms)));
  require(timeline->signal_from_host(3));
  CHECK(require(timeline->value()) == 3);
  CHECK(require(timeline->wait_from_host(3, 0ms)));
  CHECK(require(timeline->wait_from_host(2, 0ms)));
  CHECK_FALSE(require(timeline->wait_from_host(4, 1ms)));
  // Not above the current value, or 0: refused before Vulkan sees it.
  for (std::uint64_t value : {0, 2, 3}) {
    INFO("value " << value);
    const auto refused = timeline->signal_from_host(value);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error() == errc::invalid_semaphore_op);
  }
  CHECK(require(timeline->value()) == 3);
  // A submission's signal moves the same value.
  const std::array signal{semaphore_op{timeline.get(), 9, sync_stage::all}};
  const std::uint64_t value = require(device.queue().submit_next({}, {}, {.signals = signal}));
  CHECK(require(timeline->wait_from_host(9, 20s)));
  CHECK(require(timeline->value()) == 9);
  require_reached(device.queue().timeline(), value);
  timeline.reset();
  s.finish();
}

TEST_CASE("vulkan semaphores: a binary semaphore has no host signal, value or wait (unsupported_command)",
          "[vulkan][semaphore]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  auto binary = require(device.create_semaphore(semaphore_kind::binary));
  CHECK(binary->kind() == semaphore_kind::binary);
  const auto signalled = binary->signal_from_host(0);
  REQUIRE_FALSE(signalled.has_value());
  CHECK(signalled.error() == errc::unsupported_command);
  const auto value = binary->value();
  REQUIRE_FALSE(value.has_value());
  CHECK(value.error() == errc::unsupported_command);
  const auto waited = binary->wait_from_host(1, 1ms);
  REQUIRE_FALSE(waited.has_value());
  CHECK(waited.error() == errc::unsupported_command);
  // A value on a binary semaphore is malformed before it is unsupported.
  CHECK(binary->signal_from_host(1).error() == errc::invalid_semaphore_op);
  binary.reset();
  s.finish();
}

TEST_CASE("vulkan semaphores: a binary semaphore signalled by one submission orders the next one's copy",
          "[vulkan][semaphore]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  ferrum::gpu::queue& compute = device.queue(queue_kind::compute);
  ferrum::gpu::queue& transfer = device.queue(queue_kind::transfer);
  auto binary = require(device.create_semaphore(semaphore_kind::binary));
  auto source = require(device.create_arena(8192));
  auto destination = require(device.create_arena(8192));
  auto producer = require(device.create_command_list(queue_kind::compute));
  auto consumer = require(device.create_command_list(queue_kind::transfer));
  const std::array op{semaphore_op{binary.get(), 0, sync_stage::transfer}};
  command_list* produced_lists[] = {producer.get()};
  command_list* consumed_lists[] = {consumer.get()};
  require(consumer->begin());
  require(consumer->copy(source->whole(), destination->whole()));
  require(consumer->end());
  // Several rounds back to back: only the semaphore orders each copy after
  // its fill (no queue wait, no host wait in between).
  for (std::uint32_t round = 1; round <= 4; ++round) {
    fill_words(*producer, *source, 2048, 0x1000 + round);
    const std::uint64_t produced = require(compute.submit_next(produced_lists, {}, {.signals = op}));
    const std::uint64_t copied = require(transfer.submit_next(consumed_lists, {}, {.waits = op}));
    require_reached(transfer.timeline(), copied);
    CHECK(words_other_than(*destination, 0, 2048, 0x1000 + round) == 0);
    require_reached(compute.timeline(), produced);
  }
  producer.reset();
  consumer.reset();
  source.reset();
  destination.reset();
  binary.reset();
  s.finish();
}

TEST_CASE("vulkan semaphores: a submission waits on an engine's own timeline semaphore, imported",
          "[vulkan][semaphore]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  ferrum::gpu::queue& q = device.queue();
  const auto native = ferrum::gpu::native_handles(device);
  REQUIRE(native.has_value());
  const VkSemaphore handle = engine_timeline(native->device);
  auto imported = require(ferrum::gpu::import_vulkan_semaphore(device, handle, semaphore_kind::timeline));
  CHECK(imported->kind() == semaphore_kind::timeline);
  CHECK(imported->native_handle() == reinterpret_cast<std::uint64_t>(handle));
  auto arena = require(device.create_arena(4096));
  auto list = require(device.create_command_list());
  fill_words(*list, *arena, 1024, 0xe119);
  command_list* lists[] = {list.get()};
  // Waits for the engine's step 2 and signals 3 when done.
  const std::array wait{semaphore_op{imported.get(), 2, sync_stage::all}};
  const std::array signal{semaphore_op{imported.get(), 3, sync_stage::all}};
  const std::uint64_t value = require(q.submit_next(lists, {}, {.waits = wait, .signals = signal}));
  CHECK(wait_for(q.timeline(), value, 50ms) == std::nullopt);
  CHECK(words_other_than(*arena, 0, 1024, 0) == 0);
  engine_signal(native->device, handle, 1);
  CHECK(wait_for(q.timeline(), value, 50ms) == std::nullopt);
  CHECK(words_other_than(*arena, 0, 1024, 0) == 0);
  CHECK(require(imported->value()) == 1);
  engine_signal(native->device, handle, 2);
  require_reached(q.timeline(), value);
  CHECK(words_other_than(*arena, 0, 1024, 0xe119) == 0);
  // The submission's signal reached the engine's semaphore.
  CHECK(engine_value(native->device, handle) == 3);
  CHECK(require(imported->wait_from_host(3, 0ms)));
  list.reset();
  arena.reset();
  // The import does not own the handle: the engine destroys it after the
  // wrapper (validation's object tracking reports a double destroy or a leak).
  imported.reset();
  vkDestroySemaphore(native->device, handle, nullptr);
  s.finish();
}

TEST_CASE(
    "vulkan semaphores: import_vulkan_semaphore of a null handle or onto a null device gives "
    "invalid_device_option",
    "[vulkan][semaphore]") {
  session s;
  if (!s.open()) return;
  const auto null_handle = ferrum::gpu::import_vulkan_semaphore(*s.device, VK_NULL_HANDLE, semaphore_kind::timeline);
  REQUIRE_FALSE(null_handle.has_value());
  CHECK(null_handle.error() == errc::invalid_device_option);
  CHECK_THAT(null_handle.error().what(), Catch::Contains("null handle"));

  const auto native = ferrum::gpu::native_handles(*s.device);
  REQUIRE(native.has_value());
  const VkSemaphore handle = engine_timeline(native->device);
  auto other = require(ferrum::gpu::null_device::create({}));
  const auto on_null = ferrum::gpu::import_vulkan_semaphore(*other, handle, semaphore_kind::timeline);
  REQUIRE_FALSE(on_null.has_value());
  CHECK(on_null.error() == errc::invalid_device_option);
  CHECK_THAT(on_null.error().what(), Catch::Contains("is not a Vulkan device"));
  vkDestroySemaphore(native->device, handle, nullptr);
  s.finish();
}

TEST_CASE("vulkan semaphores: malformed or foreign semaphores are refused before anything reaches the GPU",
          "[vulkan][semaphore]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  ferrum::gpu::queue& q = device.queue();
  auto binary = require(device.create_semaphore(semaphore_kind::binary));
  auto timeline = require(device.create_semaphore(semaphore_kind::timeline));
  auto other = require(ferrum::gpu::null_device::create({}));
  auto foreign = require(other->create_semaphore(semaphore_kind::timeline));
  const std::array no_semaphore{semaphore_op{}};
  const std::array binary_value{semaphore_op{binary.get(), 1, sync_stage::all}};
  const std::array timeline_zero{semaphore_op{timeline.get(), 0, sync_stage::all}};
  const std::array theirs{semaphore_op{foreign.get(), 1, sync_stage::all}};
  CHECK(q.submit_next({}, {}, {.waits = no_semaphore}).error() == errc::invalid_semaphore_op);
  CHECK(q.submit_next({}, {}, {.signals = binary_value}).error() == errc::invalid_semaphore_op);
  CHECK(q.submit_next({}, {}, {.waits = timeline_zero}).error() == errc::invalid_semaphore_op);
  CHECK(q.submit_next({}, {}, {.waits = theirs}).error() == errc::foreign_object);
  CHECK(q.submit_next({}, {}, {.signals = theirs}).error() == errc::foreign_object);
  CHECK(q.last_submitted() == 0);
  CHECK(require(timeline->value()) == 0);
  binary.reset();
  timeline.reset();
  s.finish();
}
