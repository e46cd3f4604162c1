// Timestamp pools on the Vulkan device: query pools converted to
// steady_clock through VK_EXT_calibrated_timestamps (lavapipe has it) or a
// one-time calibration; and a scheduler's waves timed through them;
// validation silent.
#include "gpu_time_checks.hpp"
#include "plan_builder.hpp"
#include "timestamp_checks.hpp"
#include "vulkan_test_support.hpp"

#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/thread_pool.hpp>

#include <algorithm>
#include <string_view>
#include <vector>

using ferrum::gpu::vulkan_device_options;

namespace {

// Whether `physical` offers VK_EXT_calibrated_timestamps with both the
// device's and CLOCK_MONOTONIC's time domains — asked of Vulkan here, apart
// from the device's own inspection, so that a device that silently falls
// back to the one-time calibration fails the test.
bool offers_calibrated_timestamps(VkInstance instance, VkPhysicalDevice physical) {
  std::uint32_t count = 0;
  REQUIRE(vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr) == VK_SUCCESS);
  std::vector<VkExtensionProperties> extensions(count);
  REQUIRE(vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, extensions.data()) == VK_SUCCESS);
  const bool listed = std::any_of(extensions.begin(), extensions.begin() + count, [](const VkExtensionProperties& e) {
    return std::string_view(e.extensionName) == VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
  });
  if (!listed) return false;
  const auto domains_of = reinterpret_cast<PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT>(
      vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT"));
  REQUIRE(domains_of != nullptr);
  REQUIRE(domains_of(physical, &count, nullptr) == VK_SUCCESS);
  std::vector<VkTimeDomainEXT> domains(count);
  REQUIRE(domains_of(physical, &count, domains.data()) == VK_SUCCESS);
  domains.resize(count);
  const auto has = [&](VkTimeDomainEXT d) { return std::find(domains.begin(), domains.end(), d) != domains.end(); };
  return has(VK_TIME_DOMAIN_DEVICE_EXT) && has(VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT);
}

}  // namespace

TEST_CASE("vulkan timestamps: calibrated exactly where the device offers it, stamps in order inside the submission",
          "[vulkan]") {
  vulkan_test::session s;
  if (!s.open()) return;
  const ferrum::gpu::timestamp_clock clock = s.device->timestamps();
  REQUIRE(clock.supported);
  const auto native = ferrum::gpu::native_handles(*s.device);
  REQUIRE(native.has_value());
  const bool offered = offers_calibrated_timestamps(native->instance, native->physical_device);
  INFO("calibration: " << clock.calibration << "; the device offers calibrated timestamps: " << offered);
  CHECK(clock.calibration == (offered ? "VK_EXT_calibrated_timestamps" : "one-time calibration"));
  // lavapipe, which CI runs on, offers them: there the calibrated path is the one taken.
  if (vulkan_test::vulkan_required() && s.device->name().find("llvmpipe") != std::string::npos) CHECK(offered);
  test::check_timed_submissions(*s.device);
  s.finish();
}

TEST_CASE("vulkan timestamps: the one-time calibration brackets a submission and states its uncertainty", "[vulkan]") {
  vulkan_test::session s;
  vulkan_device_options options;
  options.calibration = vulkan_device_options::timestamp_calibration::one_time;
  if (!s.open(options)) return;
  CHECK(s.device->timestamps().calibration == "one-time calibration");
  test::check_timed_submissions(*s.device);
  // Half the best round trip of a submission: above zero, well under the
  // wait's bound.
  const auto uncertainty = s.device->timestamps().uncertainty;
  CHECK(uncertainty.count() > 0);
  CHECK(uncertainty < std::chrono::seconds(1));
  s.finish();
}

TEST_CASE("vulkan timestamps: a scheduler's waves carry GPU times per node, in order, inside their submission",
          "[vulkan]") {
  vulkan_test::session s;
  if (!s.open()) return;
  {
    ferrum::test::plan_builder b;
    constexpr std::size_t nodes = 6;
    for (std::size_t i = 0; i < nodes; ++i)
      b.binding_node("node/n" + std::to_string(i), "resource/r" + std::to_string(i), 4096);
    b.bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 1 << 20}});
    const ferrum::plan plan = b.lanes(2).budget(std::uint64_t{1} << 30).build();
    auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(plan));
    auto kernel = test::require(s.device->create_kernel(ferrum::gpu::builtin::write_pattern()));
    boost::asio::thread_pool pool(2);
    ferrum::scheduler_options options;
    options.encoder_tasks = 2;
    options.gpu_timestamps = true;
    options.replay = true;  // recorded stamps are written again by every replay
    auto scheduler = test::require(ferrum::scheduler::create(program, *s.device, pool.get_executor(), options));
    auto encode = [&](const ferrum::encode_context& c) {
      if (c.replay) return;
      test::require(c.commands.dispatch(*kernel, c.slot, {}, std::array<std::uint32_t, 1>{7}));
    };
    const auto waves = gpu_time::run_waves(*scheduler, encode, 12);
    gpu_time::check_gpu_times(waves, nodes, s.device->timestamps().uncertainty);
    scheduler.reset();
    pool.join();
  }
  s.finish();
}
