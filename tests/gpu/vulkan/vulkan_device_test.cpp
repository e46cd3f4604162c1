// The Vulkan device's creation, its errors and the checks it makes of kernels
// and commands.
#include "ferrum/gpu/vulkan_device.hpp"
#include "ferrum/error.hpp"
#include "ferrum/gpu/builtin_kernels.hpp"
#include "ferrum/gpu/null_device.hpp"

#include "vulkan_test_support.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <utility>

using ferrum::errc;
using namespace vulkan_test;

TEST_CASE("vulkan: a device names its GPU and reports limits the GPU allows", "[vulkan]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  CHECK(device.kind() == "vulkan");
  CHECK_FALSE(device.name().empty());
  CHECK_FALSE(device.lost());
  // Vulkan guarantees maxStorageBufferRange >= 2^27 and
  // maxComputeWorkGroupCount[0] >= 65535.
  CHECK(device.limits().max_arena_bytes >= (std::size_t{1} << 27));
  CHECK(device.limits().max_arena_bytes % 4 == 0);
  CHECK(device.limits().max_workgroups >= 65535u);
  auto too_large = device.create_arena(device.limits().max_arena_bytes + 4);
  REQUIRE_FALSE(too_large.has_value());
  CHECK(too_large.error() == errc::invalid_arena_size);
  s.finish();
}

TEST_CASE("vulkan: a device name that matches no GPU gives vulkan_device_not_found", "[vulkan]") {
  message_log log;
  ferrum::gpu::vulkan_device_options options = validating(log);
  options.device_name = "no-such-gpu";
  auto device = ferrum::gpu::create_vulkan_device(options);
  if (!device && device.error() == errc::vulkan_unavailable && !vulkan_required()) {
    skip_or_fail(device.error());
    return;
  }
  REQUIRE_FALSE(device.has_value());
  INFO(device.error().what());
  CHECK(device.error() == errc::vulkan_device_not_found);
  CHECK(device.error().detail.find("no-such-gpu") != std::string::npos);
  INFO(log.text());
  CHECK(log.empty());
}

TEST_CASE("vulkan: a device name that is part of a GPU's name picks that GPU", "[vulkan]") {
  session probe;
  if (!probe.open()) return;
  const std::string name = probe.device->name();
  probe.finish();

  message_log log;
  ferrum::gpu::vulkan_device_options options = validating(log);
  options.device_name = name.substr(0, name.size() / 2 + 1);
  auto device = require(ferrum::gpu::create_vulkan_device(options));
  CHECK(device->name() == name);
  device.reset();
  INFO(log.text());
  CHECK(log.empty());
}

TEST_CASE("vulkan: adopting null handles gives invalid_device_option", "[vulkan]") {
  auto device = ferrum::gpu::adopt_vulkan_device({});
  REQUIRE_FALSE(device.has_value());
  CHECK(device.error() == errc::invalid_device_option);
  CHECK(device.error().detail.find("instance") != std::string::npos);
}

TEST_CASE("vulkan: errc_from_vk maps each VkResult to its code", "[vulkan]") {
  using ferrum::gpu::errc_from_vk;
  const std::array<std::pair<VkResult, errc>, 19> expected{{
      {VK_SUCCESS, errc::ok},
      {VK_TIMEOUT, errc::ok},
      {VK_NOT_READY, errc::ok},
      {VK_INCOMPLETE, errc::ok},
      {VK_ERROR_DEVICE_LOST, errc::device_lost},
      {VK_ERROR_OUT_OF_HOST_MEMORY, errc::out_of_host_memory},
      {VK_ERROR_MEMORY_MAP_FAILED, errc::out_of_host_memory},
      {VK_ERROR_OUT_OF_DEVICE_MEMORY, errc::out_of_device_memory},
      {VK_ERROR_OUT_OF_POOL_MEMORY, errc::out_of_device_memory},
      {VK_ERROR_FRAGMENTED_POOL, errc::out_of_device_memory},
      {VK_ERROR_FRAGMENTATION, errc::out_of_device_memory},
      {VK_ERROR_INCOMPATIBLE_DRIVER, errc::vulkan_unavailable},
      {VK_ERROR_INITIALIZATION_FAILED, errc::vulkan_unavailable},
      {VK_ERROR_FEATURE_NOT_PRESENT, errc::vulkan_feature_missing},
      {VK_ERROR_EXTENSION_NOT_PRESENT, errc::vulkan_feature_missing},
      {VK_ERROR_LAYER_NOT_PRESENT, errc::vulkan_error},
      {VK_ERROR_TOO_MANY_OBJECTS, errc::vulkan_error},
      {VK_ERROR_UNKNOWN, errc::vulkan_error},
      {VK_ERROR_VALIDATION_FAILED_EXT, errc::vulkan_error},
  }};
  for (const auto& [result, code] : expected) {
    INFO("VkResult " << static_cast<int>(result));
    CHECK(errc_from_vk(result) == code);
  }
}

TEST_CASE("vulkan: a kernel without SPIR-V, or with something else, is invalid_kernel", "[vulkan]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::kernel_source cpu_only = ferrum::gpu::builtin::write_pattern();
  cpu_only.spirv = {};
  auto none = s.device->create_kernel(cpu_only);
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error() == errc::invalid_kernel);

  // Not SPIR-V: refused before the driver sees it.
  static constexpr std::array<std::uint32_t, 6> garbage{0x12345678u, 1, 2, 3, 4, 5};
  ferrum::gpu::kernel_source bad = ferrum::gpu::builtin::write_pattern();
  bad.spirv = garbage;
  auto rejected = s.device->create_kernel(bad);
  REQUIRE_FALSE(rejected.has_value());
  CHECK(rejected.error() == errc::invalid_kernel);

  auto good = s.device->create_kernel(ferrum::gpu::builtin::write_pattern());
  REQUIRE(good.has_value());
  CHECK((*good)->name() == "write_pattern");
  CHECK((*good)->push_words() == 1u);
  good->reset();
  s.finish();
}

TEST_CASE("vulkan: a host function is unsupported_command and records nothing", "[vulkan]") {
  session s;
  if (!s.open()) return;
  auto list = require(s.device->create_command_list());
  int calls = 0;
  auto count = [&calls]() noexcept { ++calls; };
  require(list->begin());
  auto host = list->host(ferrum::gpu::host_call(count));
  REQUIRE_FALSE(host.has_value());
  CHECK(host.error() == errc::unsupported_command);
  CHECK(list->size() == 0);
  require(list->end());
  ferrum::gpu::command_list* lists[] = {list.get()};
  require(s.device->queue().submit(lists, 1));
  require_reached(s.device->queue().timeline(), 1);
  CHECK(calls == 0);
  list.reset();
  s.finish();
}

TEST_CASE("vulkan: a submission without lists only signals its value", "[vulkan]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::queue& queue = s.device->queue();
  require(queue.submit({}, 3));
  require_reached(queue.timeline(), 3);
  CHECK(queue.timeline().completed() >= 3u);
  auto backwards = queue.submit({}, 2);
  REQUIRE_FALSE(backwards.has_value());
  CHECK(backwards.error() == errc::timeline_not_monotonic);
  s.finish();
}

TEST_CASE("vulkan: native handles are given for a Vulkan device only", "[vulkan]") {
  auto null = ferrum::gpu::null_device::create({});
  REQUIRE(null.has_value());
  CHECK_FALSE(ferrum::gpu::native_handles(**null).has_value());
  session s;
  if (!s.open()) return;
  const auto native = ferrum::gpu::native_handles(*s.device);
  REQUIRE(native.has_value());
  CHECK(native->instance != VK_NULL_HANDLE);
  CHECK(native->device != VK_NULL_HANDLE);
  CHECK(native->queue != VK_NULL_HANDLE);
  CHECK(native->timeline != VK_NULL_HANDLE);
  s.finish();
}
