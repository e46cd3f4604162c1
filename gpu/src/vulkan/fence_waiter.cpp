#include "vulkan/fence_waiter.hpp"

#include "vulkan/vk_result.hpp"

#include <array>
#include <chrono>

namespace ferrum::gpu {
namespace {

// The longest one vkWaitSemaphores blocks: how late the thread notices a loss
// the driver does not report through the wait, or a stop whose wake-up signal
// failed.
constexpr std::uint64_t wait_timeout_ns = 100'000'000;
// The pause before retrying after the driver ran out of memory in a wait.
constexpr auto out_of_memory_pause = std::chrono::milliseconds(10);

}  // namespace

void fence_waiter::start() {
  thread_ = std::thread([this] { run(); });
}

void fence_waiter::stop() noexcept {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    ++generation_;
    if (waiting_for_) interrupt_locked();
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void fence_waiter::wake(std::uint64_t value) noexcept {
  {
    const std::lock_guard lock(mutex_);
    ++generation_;
    // Only a thread blocked on a higher value needs interrupting; one that
    // is computing its target reads the new wait under this mutex.
    if (waiting_for_ && value < *waiting_for_) interrupt_locked();
  }
  changed_.notify_one();
}

void fence_waiter::interrupt_locked() noexcept {
  VkSemaphoreSignalInfo signal{};
  signal.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO;
  signal.semaphore = wake_semaphore_;
  // Host signals of a timeline semaphore must be strictly increasing; under
  // mutex_ they are.
  signal.value = ++wake_value_;
  // A failed signal (a lost device) is harmless: the thread's wait is
  // bounded, so it only notices later.
  (void)vkSignalSemaphore(device_, &signal);
}

void fence_waiter::submitted(std::uint64_t value) noexcept {
  {
    const std::lock_guard lock(mutex_);
    submitted_ = value;
    ++generation_;
  }
  changed_.notify_one();
}

std::optional<std::uint64_t> fence_waiter::next_target() const noexcept {
  // Lock order: mutex_ (held) before the timeline's; the timeline calls
  // wake() only outside its lock.
  if (timeline_.failure()) return std::nullopt;
  if (std::optional<std::uint64_t> lowest = timeline_.lowest_pending()) return lowest;
  const std::uint64_t completed = timeline_.completed();
  if (submitted_ > completed) return completed + 1;
  return std::nullopt;
}

void fence_waiter::run() noexcept {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const std::uint64_t generation = generation_;
    const std::optional<std::uint64_t> target = next_target();
    if (!target) {
      changed_.wait(lock, [&] { return stopping_ || generation_ != generation; });
      continue;
    }
    // Set under the same lock as the target was read: a wake() after this
    // point sees it and signals; one before it was seen by next_target().
    waiting_for_ = target;
    const std::array<VkSemaphore, 2> semaphores{timeline_semaphore_, wake_semaphore_};
    const std::array<std::uint64_t, 2> values{*target, wake_value_ + 1};
    lock.unlock();

    VkSemaphoreWaitInfo info{};
    info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
    // ANY: return when the GPU reaches the target or the host signals a
    // retarget, whichever comes first.
    info.flags = VK_SEMAPHORE_WAIT_ANY_BIT;
    info.semaphoreCount = static_cast<std::uint32_t>(semaphores.size());
    info.pSemaphores = semaphores.data();
    info.pValues = values.data();
    observe(vkWaitSemaphores(device_, &info, wait_timeout_ns));

    lock.lock();
    waiting_for_.reset();
  }
}

void fence_waiter::observe(VkResult wait_result) noexcept {
  VkResult r = wait_result;
  if (r == VK_SUCCESS || r == VK_TIMEOUT) {
    // Whatever woke the thread (the target, a retarget, the timeout), the
    // counter says how far the GPU got: values may skip, and submissions
    // below the target complete waits on them too.
    std::uint64_t value = 0;
    r = vkGetSemaphoreCounterValue(device_, timeline_semaphore_, &value);
    if (r == VK_SUCCESS) {
      timeline_.advance(value);
      return;
    }
  }
  errc code = errc_from_vk(r);
  if (code == errc::out_of_host_memory || code == errc::out_of_device_memory) {
    // Transient: the wait is tried again.
    std::this_thread::sleep_for(out_of_memory_pause);
    return;
  }
  if (code == errc::ok) code = errc::vulkan_error;
  // VK_ERROR_DEVICE_LOST: every pending and later wait completes with
  // device_lost, and nothing runs on the device any more.
  timeline_.fail(make_error_code(code));
}

}  // namespace ferrum::gpu
