// examples/fft_convolution/vkfft_plan.cpp — the one translation unit that
// compiles vkFFT.h (the patched copy cmake/ferrum_vkfft.cmake writes; its
// warnings are a system header's, so ferrum's warning flags stay on here).
#include "vkfft_plan.hpp"

#include <vkFFT.h>

#include <stdexcept>
#include <string>

namespace fft_convolution {
namespace {

[[noreturn]] void fail(const char* what, long long code) {
  throw std::runtime_error(std::string("VkFFT: ") + what + " failed with code " + std::to_string(code));
}

}  // namespace

// VkFFT's configuration holds pointers to the handles it was given
// (VkDevice*, VkBuffer*, the sizes), and the application reads them again
// when it records and when it is deleted: they live here, beside it, at
// addresses that never move.
struct vkfft_plan::application {
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  VkCommandPool command_pool = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkBuffer input = VK_NULL_HANDLE;
  VkBuffer output = VK_NULL_HANDLE;
  std::uint64_t input_bytes = 0;
  std::uint64_t output_bytes = 0;
  VkFFTApplication app{};
  bool initialized = false;

  application() = default;
  application(const application&) = delete;
  application& operator=(const application&) = delete;
  ~application() {
    if (initialized) deleteVkFFT(&app);
    if (fence != VK_NULL_HANDLE) vkDestroyFence(device, fence, nullptr);
    if (command_pool != VK_NULL_HANDLE) vkDestroyCommandPool(device, command_pool, nullptr);
  }
};

vkfft_plan::vkfft_plan(const vulkan_target& target, const fft_shape& shape, buffer_range input, buffer_range output)
    : shape_(shape), app_(std::make_unique<application>()) {
  application& a = *app_;
  a.physical_device = target.physical_device;
  a.device = target.device;
  a.queue = target.queue;
  a.input = input.buffer;
  a.output = output.buffer;
  // VkFFT 1.2.26 binds each buffer from its start, `size` bytes long, and
  // adds the offset to the shader's indices into an array of that size: a
  // size counted from the offset on leaves the last `offset` bytes outside
  // the array, and the shader's accesses there are dropped. Sizes count
  // from the buffer's start.
  a.input_bytes = input.offset + shape.bytes();
  a.output_bytes = output.offset + shape.bytes();

  VkCommandPoolCreateInfo pool_info{};
  pool_info.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool_info.queueFamilyIndex = target.queue_family;
  if (VkResult r = vkCreateCommandPool(a.device, &pool_info, nullptr, &a.command_pool); r != VK_SUCCESS)
    fail("vkCreateCommandPool", r);
  VkFenceCreateInfo fence_info{};
  fence_info.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  if (VkResult r = vkCreateFence(a.device, &fence_info, nullptr, &a.fence); r != VK_SUCCESS) fail("vkCreateFence", r);

  VkFFTConfiguration c{};
  c.FFTdim = 1;
  c.size[0] = shape.points;
  // Unused dimensions are 1 (0 would dispatch nothing).
  c.size[1] = 1;
  c.size[2] = 1;
  c.numberBatches = shape.batch;
  c.physicalDevice = &a.physical_device;
  c.device = &a.device;
  c.queue = &a.queue;
  c.commandPool = &a.command_pool;
  c.fence = &a.fence;
  // Out of place: with isInputFormatted, VkFFT reads `inputBuffer` and
  // writes `buffer` in both directions (unless inverseReturnToInputBuffer),
  // so that the input stays as it was and each plan touches exactly its two
  // ranges.
  c.isInputFormatted = 1;
  c.inputBuffer = &a.input;
  c.inputBufferSize = &a.input_bytes;
  c.inputBufferOffset = input.offset;
  c.buffer = &a.output;
  c.bufferSize = &a.output_bytes;
  c.bufferOffset = output.offset;
  if (shape.direction == fft_direction::forward)
    c.makeForwardPlanOnly = 1;
  else
    c.makeInversePlanOnly = 1;
  if (VkFFTResult r = initializeVkFFT(&a.app, c); r != VKFFT_SUCCESS) fail("initializeVkFFT", r);
  a.initialized = true;
}

vkfft_plan::~vkfft_plan() = default;

void vkfft_plan::record(VkCommandBuffer command_buffer) const {
  VkFFTLaunchParams launch{};
  launch.commandBuffer = &command_buffer;
  // VkFFT's direction argument: -1 forward, 1 inverse.
  const int inverse = shape_.direction == fft_direction::forward ? -1 : 1;
  if (VkFFTResult r = VkFFTAppend(&app_->app, inverse, &launch); r != VKFFT_SUCCESS) fail("VkFFTAppend", r);
}

}  // namespace fft_convolution
