#include "vulkan/fence_waiter.hpp"

#include "vulkan/host_wait_fences.hpp"
#include "vulkan/vk_result.hpp"

#include <algorithm>
#include <chrono>
#include <new>

namespace ferrum::gpu {
namespace {

// The longest one vkWaitSemaphores blocks: how late the thread notices a loss
// the driver does not report through the wait, or a stop whose wake-up signal
// failed.
constexpr std::uint64_t wait_timeout_ns = 100'000'000;
// The pause before retrying after the driver ran out of memory in a wait.
constexpr auto out_of_memory_pause = std::chrono::milliseconds(10);

}  // namespace

std::size_t fence_waiter::watch(VkSemaphore timeline_semaphore, vulkan_timeline& target, host_wait_fences* host_waits) {
  watched_.push_back({timeline_semaphore, &target, host_waits, 0, {}, std::nullopt});
  // Room for the submissions a device usually has in flight, so that
  // submitted() does not allocate in steady state.
  watched_.back().outstanding.reserve(64);
  return watched_.size() - 1;
}

void fence_waiter::start() {
  thread_ = std::thread([this] { run(); });
}

void fence_waiter::stop() noexcept {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    ++generation_;
    if (blocked_) interrupt_locked();
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void fence_waiter::wake(std::size_t which, std::uint64_t value) noexcept {
  {
    const std::lock_guard lock(mutex_);
    ++generation_;
    // Only a thread blocked on a higher value of this timeline, or not on it
    // at all, needs interrupting; one that is computing its targets reads the
    // new wait under this mutex.
    const std::optional<std::uint64_t>& target = watched_[which].waiting_for;
    if (blocked_ && (!target || value < *target)) interrupt_locked();
  }
  changed_.notify_one();
}

void fence_waiter::submitted(std::size_t which, std::uint64_t value) noexcept {
  {
    const std::lock_guard lock(mutex_);
    watched& w = watched_[which];
    w.submitted = value;
    // A failure to remember it (no memory) only makes the thread alone wait
    // for a later value.
    try {
      w.outstanding.push_back(value);
    } catch (const std::bad_alloc&) {
    }
    ++generation_;
    // A thread blocked on other queues only would learn of this queue's
    // completions up to a timeout late: make it watch this one too. Once it
    // does, further submissions here need no signal.
    if (blocked_ && !w.waiting_for) interrupt_locked();
  }
  changed_.notify_one();
}

void fence_waiter::fail_all(boost::system::error_code ec) noexcept {
  for (const watched& w : watched_) w.timeline->fail(ec);
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

std::optional<std::uint64_t> fence_waiter::next_target(watched& w) const noexcept {
  // Lock order: mutex_ (held) before the timeline's; the timeline calls
  // wake() only outside its lock.
  if (w.timeline->failure()) return std::nullopt;
  const std::uint64_t completed = w.timeline->completed();
  const auto done =
      std::find_if(w.outstanding.begin(), w.outstanding.end(), [&](std::uint64_t v) { return v > completed; });
  w.outstanding.erase(w.outstanding.begin(), done);
  const std::optional<std::uint64_t> lowest = w.timeline->lowest_pending();
  if (!alone()) {
    if (lowest) return lowest;
    if (w.submitted > completed) return completed + 1;
    return std::nullopt;
  }
  // Alone, only a value a submission signals: the thread cannot be
  // retargeted, and lavapipe's wait on a value the timeline skips (a
  // submission of 3 after 0) can outlast its timeout (fence_waiter.hpp).
  if (w.outstanding.empty()) return std::nullopt;
  const std::uint64_t wanted = lowest.value_or(completed + 1);
  const auto first = std::lower_bound(w.outstanding.begin(), w.outstanding.end(), wanted);
  // A wait beyond every submission: keep completed() up meanwhile.
  return first != w.outstanding.end() ? *first : w.outstanding.back();
}

void fence_waiter::run() noexcept {
  // Reused by every wait: at most one entry per queue plus the wake-up.
  std::vector<VkSemaphore> semaphores;
  std::vector<std::uint64_t> values;
  semaphores.reserve(watched_.size() + 1);
  values.reserve(watched_.size() + 1);
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const std::uint64_t generation = generation_;
    semaphores.clear();
    values.clear();
    // Targets set under the same lock as they are read: a wake() or
    // submitted() after this point sees them and signals; one before it was
    // seen here.
    for (watched& w : watched_) {
      w.waiting_for = next_target(w);
      if (!w.waiting_for) continue;
      semaphores.push_back(w.semaphore);
      values.push_back(*w.waiting_for);
    }
    if (semaphores.empty()) {
      changed_.wait(lock, [&] { return stopping_ || generation_ != generation; });
      continue;
    }
    VkSemaphoreWaitInfo info{};
    info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
    if (!alone()) {
      semaphores.push_back(wake_semaphore_);
      values.push_back(wake_value_ + 1);
      // ANY: return when the GPU reaches any queue's target or the host
      // signals a retarget, whichever comes first.
      info.flags = VK_SEMAPHORE_WAIT_ANY_BIT;
      blocked_ = true;
    }
    lock.unlock();

    info.semaphoreCount = static_cast<std::uint32_t>(semaphores.size());
    info.pSemaphores = semaphores.data();
    info.pValues = values.data();
    observe(vkWaitSemaphores(device_, &info, wait_timeout_ns));

    lock.lock();
    blocked_ = false;
    for (watched& w : watched_) w.waiting_for.reset();
  }
}

void fence_waiter::observe(VkResult wait_result) noexcept {
  VkResult r = wait_result;
  if (r == VK_SUCCESS || r == VK_TIMEOUT) {
    // Whatever woke the thread (a target, a retarget, the timeout), the
    // counters say how far the GPU got on each queue: values may skip, and
    // submissions below a target complete waits on them too.
    for (const watched& w : watched_) {
      std::uint64_t value = 0;
      r = vkGetSemaphoreCounterValue(device_, w.semaphore, &value);
      if (r != VK_SUCCESS) break;
      if (w.host_waits != nullptr) w.host_waits->reached(value);
      w.timeline->advance(value);
    }
    if (r == VK_SUCCESS) return;
  }
  errc code = errc_from_vk(r);
  if (code == errc::out_of_host_memory || code == errc::out_of_device_memory) {
    // Transient: the wait is tried again.
    std::this_thread::sleep_for(out_of_memory_pause);
    return;
  }
  if (code == errc::ok) code = errc::vulkan_error;
  // VK_ERROR_DEVICE_LOST: every pending and later wait on every queue
  // completes with device_lost, and nothing runs on the device any more.
  fail_all(make_error_code(code));
}

}  // namespace ferrum::gpu
