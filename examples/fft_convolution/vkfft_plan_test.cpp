// examples/fft_convolution/vkfft_plan_test.cpp — vkfft_plan on its own,
// outside any wave: a forward plan over one of ferrum's arenas, the
// spectrum multiplied by the kernel's on the host, an inverse plan, each
// recorded into a command buffer of the test's own and submitted under the
// queue's lock; the result checked against FFTW (fft_reference.hpp), with
// the validation layers (synchronization validation included) on and
// silent.
//
// Exit codes: 0 the result matches; 1 it does not, or a failure; 77 no
// Vulkan driver (1 instead when FERRUM_REQUIRE_VULKAN=1).
#include "vkfft_plan.hpp"
#include "fft_reference.hpp"

#include "ferrum/gpu/device.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include <atomic>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {

std::atomic<int> validation_messages{0};

void count_message(void*, const ferrum::gpu::vulkan_message& m) noexcept {
  validation_messages.fetch_add(1);
  std::cerr << "vkfft_plan_test: vulkan " << (m.error ? "error: " : "warning: ") << m.text << '\n';
}

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw std::runtime_error(std::string(what) + " failed with VkResult " + std::to_string(r));
}

// A command buffer of the test's own, recorded with `record` and submitted
// to ferrum's queue under its lock, then waited for.
template <class Record>
void run_once(const ferrum::gpu::vulkan_native_handles& vk, ferrum::gpu::device& device, Record record) {
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandPoolCreateInfo pool_info{};
  pool_info.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool_info.queueFamilyIndex = vk.queue_family;
  check(vkCreateCommandPool(vk.device, &pool_info, nullptr, &pool), "vkCreateCommandPool");
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkCommandBufferAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  alloc.commandPool = pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkFence fence = VK_NULL_HANDLE;
  VkFenceCreateInfo fence_info{};
  fence_info.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  try {
    check(vkAllocateCommandBuffers(vk.device, &alloc, &cmd), "vkAllocateCommandBuffers");
    check(vkCreateFence(vk.device, &fence_info, nullptr, &fence), "vkCreateFence");
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
    record(cmd);
    // The host reads what the shaders wrote once the fence is signalled.
    VkMemoryBarrier to_host{};
    to_host.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    to_host.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0,
                         nullptr, 0, nullptr);
    check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
    VkSubmitInfo submit{};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    {
      const auto held = device.queue().lock();
      check(vkQueueSubmit(vk.queue, 1, &submit, fence), "vkQueueSubmit");
    }
    check(vkWaitForFences(vk.device, 1, &fence, VK_TRUE, 10'000'000'000ull), "vkWaitForFences");
  } catch (...) {
    if (fence != VK_NULL_HANDLE) vkDestroyFence(vk.device, fence, nullptr);
    vkDestroyCommandPool(vk.device, pool, nullptr);
    throw;
  }
  vkDestroyFence(vk.device, fence, nullptr);
  vkDestroyCommandPool(vk.device, pool, nullptr);
}

int run() {
  ferrum::gpu::vulkan_device_options options;
  options.validation = true;
  options.sink = &count_message;
  auto device = ferrum::gpu::create_vulkan_device(options);
  if (!device) {
    const char* required = std::getenv("FERRUM_REQUIRE_VULKAN");
    if (device.error() == ferrum::errc::vulkan_unavailable && !(required && std::string_view(required) == "1")) {
      std::cerr << "vkfft_plan_test: skipped: no Vulkan device (" << device.error().what() << ")\n";
      return 77;
    }
    throw std::runtime_error("creating the Vulkan device: " + device.error().what());
  }
  ferrum::gpu::device& gpu = **device;
  const ferrum::gpu::vulkan_native_handles vk = *ferrum::gpu::native_handles(gpu);

  const fft_convolution::batch_shape shape{.points = 4096, .batch = 4};
  const fft_convolution::convolution_reference reference(shape);
  // One mapped arena, three ranges at offsets that are not 0, as a lane's are.
  const std::size_t at = 256;
  auto arena = gpu.create_arena(at + 3 * shape.bytes()).value();
  const std::span<std::byte> bytes = arena->bytes();
  const VkBuffer buffer = ferrum::gpu::vulkan_buffer(arena->native_handle());
  const fft_convolution::buffer_range signal{buffer, at};
  const fft_convolution::buffer_range spectrum{buffer, at + shape.bytes()};
  const fft_convolution::buffer_range output{buffer, at + 2 * shape.bytes()};
  const std::uint64_t wave = 7;
  reference.write_signals(wave, bytes.subspan(signal.offset, shape.bytes()));

  const fft_convolution::vulkan_target target{vk.physical_device, vk.device, vk.queue, vk.queue_family};
  using fft_convolution::fft_direction;
  std::unique_ptr<fft_convolution::vkfft_plan> forward;
  std::unique_ptr<fft_convolution::vkfft_plan> inverse;
  {
    const auto held = gpu.queue().lock();
    forward = std::make_unique<fft_convolution::vkfft_plan>(
        target, fft_convolution::fft_shape{shape.points, shape.batch, fft_direction::forward}, signal, spectrum);
    inverse = std::make_unique<fft_convolution::vkfft_plan>(
        target, fft_convolution::fft_shape{shape.points, shape.batch, fft_direction::inverse}, spectrum, output);
  }
  run_once(vk, gpu, [&](VkCommandBuffer cmd) { forward->record(cmd); });
  // The spectrum times the kernel's, as the example's multiply kernel does.
  std::vector<std::byte> filter(shape.filter_bytes());
  reference.write_filter(filter);
  for (std::size_t i = 0; i < shape.values(); ++i) {
    std::complex<float> x;
    std::complex<float> h;
    std::memcpy(&x, bytes.data() + spectrum.offset + 8 * i, 8);
    std::memcpy(&h, filter.data() + 8 * (i % shape.points), 8);
    x *= h;
    std::memcpy(bytes.data() + spectrum.offset + 8 * i, &x, 8);
  }
  run_once(vk, gpu, [&](VkCommandBuffer cmd) { inverse->record(cmd); });
  const double error = reference.max_error(wave, bytes.subspan(output.offset, shape.bytes()));
  // The input is left as it was (out of place).
  std::vector<std::byte> again(shape.bytes());
  reference.write_signals(wave, again);
  const bool input_kept = std::memcmp(again.data(), bytes.data() + signal.offset, shape.bytes()) == 0;
  forward.reset();
  inverse.reset();
  std::cout << "vkfft_plan on " << gpu.name() << ": " << shape.batch << " x " << shape.points
            << " points, max abs error against FFTW " << error << " (tolerance " << fft_convolution::tolerance
            << "), input " << (input_kept ? "kept" : "CHANGED") << '\n';
  return error <= fft_convolution::tolerance && input_kept ? 0 : 1;
}

}  // namespace

int main() {
  int status = 1;
  try {
    status = run();
  } catch (const std::exception& e) {
    std::cerr << "vkfft_plan_test: error: " << e.what() << '\n';
    return 1;
  }
  if (status == 0 && validation_messages.load() != 0) {
    std::cerr << "vkfft_plan_test: error: the Vulkan validation layers printed " << validation_messages.load()
              << " messages\n";
    return 1;
  }
  return status;
}
