#include "vulkan/host_wait_fences.hpp"

#include "vulkan/vk_result.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string_view>

namespace ferrum::gpu {
namespace {

// How long reached() waits for a fence whose submission's semaphore value
// was seen: the two signals of one batch are not ordered, but come together.
constexpr std::uint64_t fence_wait_ns = 1'000'000'000;

}  // namespace

bool submit_time_validation_requested() noexcept {
  const char* enables = std::getenv("VK_LAYER_ENABLES");
  return enables != nullptr &&
         std::string_view(enables).find("VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT") !=
             std::string_view::npos;
}

host_wait_fences::~host_wait_fences() {
  for (const pending& p : pending_) vkDestroyFence(device_, p.fence, nullptr);
  for (VkFence fence : free_) vkDestroyFence(device_, fence, nullptr);
}

result<VkFence> host_wait_fences::next(std::uint64_t value) {
  const std::lock_guard lock(mutex_);
  VkFence fence = VK_NULL_HANDLE;
  if (!free_.empty()) {
    fence = free_.back();
    free_.pop_back();
  } else {
    VkFenceCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    if (VkResult r = vkCreateFence(device_, &info, nullptr, &fence); r != VK_SUCCESS)
      return make_vk_error(r, "vkCreateFence (a host-wait fence for the validation layers)");
  }
  try {
    pending_.push_back({value, fence, false});
  } catch (const std::bad_alloc&) {
    vkDestroyFence(device_, fence, nullptr);
    return make_error(errc::out_of_host_memory, "a host-wait fence for the validation layers");
  }
  return fence;
}

void host_wait_fences::submitted(std::uint64_t value) noexcept {
  {
    const std::lock_guard lock(mutex_);
    if (pending_.empty() || pending_.back().value != value) return;
    pending_.back().submitted = true;
  }
  marked_.notify_all();
}

void host_wait_fences::cancel(std::uint64_t value) noexcept {
  const std::lock_guard lock(mutex_);
  if (pending_.empty() || pending_.back().value != value) return;
  // Never submitted, so unsignalled; destroyed rather than kept.
  vkDestroyFence(device_, pending_.back().fence, nullptr);
  pending_.pop_back();
}

void host_wait_fences::reached(std::uint64_t value) noexcept {
  // One caller at a time (the fence waiter, a device's own wait): waited_
  // and the front of pending_ are theirs.
  const std::lock_guard reaching(reach_mutex_);
  std::unique_lock lock(mutex_);
  const auto made = [&] {
    return std::all_of(pending_.begin(), pending_.end(),
                       [&](const pending& p) { return p.value > value || p.submitted; });
  };
  if (!marked_.wait_for(lock, std::chrono::nanoseconds(fence_wait_ns), made)) return;
  waited_.clear();
  try {
    for (const pending& p : pending_) {
      if (p.value > value) break;
      waited_.push_back(p.fence);
    }
  } catch (const std::bad_alloc&) {
    // The rest on the next call.
  }
  if (waited_.empty()) return;
  lock.unlock();
  {
    // Under the queue's submission lock, and one fence a call: the layers
    // were seen to lose a wait recorded while a submission on the queue
    // was being checked (the submission's state taken from before it), or
    // given with other fences, and to report the reuse it orders.
    const std::lock_guard submitting(*submission_lock_);
    for (VkFence fence : waited_)
      if (vkWaitForFences(device_, 1, &fence, VK_TRUE, fence_wait_ns) != VK_SUCCESS) return;
  }
  lock.lock();
  const auto count = static_cast<std::uint32_t>(waited_.size());
  pending_.erase(pending_.begin(), pending_.begin() + count);
  if (vkResetFences(device_, count, waited_.data()) != VK_SUCCESS) {
    for (VkFence fence : waited_) vkDestroyFence(device_, fence, nullptr);
    return;
  }
  try {
    free_.insert(free_.end(), waited_.begin(), waited_.end());
  } catch (const std::bad_alloc&) {
    for (VkFence fence : waited_) vkDestroyFence(device_, fence, nullptr);
  }
}

}  // namespace ferrum::gpu
