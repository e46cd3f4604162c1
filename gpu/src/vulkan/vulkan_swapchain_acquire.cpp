// vulkan_swapchain_acquire.cpp — the swapchain's acquiring thread and its queued, cancellable acquisitions.
#include "vulkan/vulkan_swapchain.hpp"

#include "ferrum/async/operation.hpp"

#include "vulkan/vk_result.hpp"
#include "vulkan/vulkan_queue.hpp"
#include "vulkan/vulkan_semaphore.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>

namespace ferrum::gpu {
namespace {

// Waits for the compute queue are made in steps of this, so that a stop is
// noticed; the destructor's and a recreation's give up after wait_steps.
constexpr std::uint64_t wait_step_ns = 100'000'000;
constexpr int wait_steps = 50;
// vkAcquireNextImageKHR holds the swapchain's lock, which present() needs
// too: it waits at most this long at a time.
constexpr std::uint64_t acquire_step_ns = 20'000'000;
// Out of date again right after a recreation this many times: give up.
constexpr int recreation_attempts = 8;

}  // namespace

// --- acquisition ------------------------------------------------------------

void vulkan_swapchain::canceller::operator()(boost::asio::cancellation_type_t type) const {
  // Any requested type: a queued acquisition has done nothing yet.
  if (!async::requested(type)) return;
  std::optional<request> found;
  {
    const std::lock_guard lock(state->mutex);
    auto it =
        std::find_if(state->requests.begin(), state->requests.end(), [&](const request& r) { return r.id == id; });
    if (it == state->requests.end()) return;  // being acquired, or completed: too late
    found.emplace(std::move(*it));
    state->requests.erase(it);
  }
  // The slot calls this object: completing clears the slot only at the upcall.
  complete(std::move(*found), boost::asio::error::operation_aborted, {});
}

void vulkan_swapchain::complete(request r, boost::system::error_code ec, const swapchain_image& image) {
  boost::asio::any_io_executor work = r.work;
  // The handler runs on the executor whose work `w` keeps; the work goes
  // when the posted function does, after the handler has returned.
  boost::asio::post(work, [handler = std::move(r.handler), w = std::move(r.work), ec, image]() mutable {
    auto slot = handler.get_cancellation_slot();
    if (slot.is_connected()) slot.clear();
    std::move(handler)(ec, image);
  });
}

void vulkan_swapchain::acquire(swapchain::acquire_handler handler, boost::asio::any_io_executor work) {
  auto slot = handler.get_cancellation_slot();
  {
    const std::lock_guard lock(state_->mutex);
    if (state_->stopping) {
      complete({0, std::move(handler), std::move(work)}, boost::asio::error::operation_aborted, {});
      return;
    }
    const std::uint64_t id = ++state_->next_id;
    state_->requests.push_back({id, std::move(handler), std::move(work)});
    // Under the lock: the thread cannot take the request before the
    // canceller is in place.
    if (slot.is_connected()) slot.template emplace<canceller>(state_, id);
  }
  state_->wake.notify_all();
}

void vulkan_swapchain::run() {
  std::unique_lock lock(state_->mutex);
  for (;;) {
    // A request stays queued (cancellable) until the slot of the next
    // frame is free: its last frame presented.
    state_->wake.wait(lock, [&] {
      return state_->stopping || (!state_->requests.empty() && !slots_[frames_ % slots_.size()].in_use);
    });
    if (state_->stopping) return;
    request r = std::move(state_->requests.front());
    state_->requests.pop_front();
    const std::uint64_t frame = ++frames_;
    frame_slot& slot = slots_[(frame - 1) % slots_.size()];
    slot.in_use = true;
    slot.frame = frame;
    slot.owner = nullptr;
    lock.unlock();
    auto image = acquire_frame(frame, slot);
    lock.lock();
    if (!image) {
      // Nothing acquired: the frame number and the slot are free again.
      slot.in_use = false;
      --frames_;
      lock.unlock();
      complete(std::move(r), image.error().code, {});
    } else {
      lock.unlock();
      complete(std::move(r), {}, *image);
    }
    lock.lock();
  }
}

result<void> vulkan_swapchain::wait_compute(std::uint64_t value, const char* what, bool stoppable) {
  if (value == 0) return {};
  for (int step = 0; step < wait_steps; ++step) {
    const VkResult r = queue_->host_wait(value, wait_step_ns);
    if (r == VK_SUCCESS) return {};
    if (r != VK_TIMEOUT) return make_vk_error(r, std::string("swapchain: ") + what);
    if (stoppable) {
      const std::lock_guard lock(state_->mutex);
      if (state_->stopping)
        return error{
            boost::system::error_code(boost::asio::error::operation_aborted), {}, "the swapchain is destroyed"};
    }
  }
  return make_error(errc::vulkan_error, std::string("swapchain: ") + what + ": the compute queue's value " +
                                            std::to_string(value) + " was not reached in 5 s");
}

result<swapchain_image> vulkan_swapchain::acquire_frame(std::uint64_t frame, frame_slot& slot) {
  // The slot's semaphore was last waited on by a wave submitted before its
  // frame was presented: that wave must be done before it is signalled again.
  std::uint64_t reuse = 0;
  {
    const std::lock_guard lock(state_->mutex);
    reuse = slot.reuse_value;
  }
  if (auto r = wait_compute(reuse, "reusing a frame's acquire semaphore", true); !r) return r.error();

  const VkSemaphore acquired = handle_of(*slot.acquired);
  for (int attempt = 0; attempt < recreation_attempts;) {
    bool recreate = false;
    {
      const std::lock_guard lock(state_->mutex);
      recreate = recreate_;
    }
    if (recreate) {
      // Only this swapchain's frames: every value a presentation recorded.
      std::uint64_t last = 0;
      {
        const std::lock_guard lock(state_->mutex);
        for (const frame_slot& s : slots_) last = std::max(last, s.reuse_value);
      }
      if (auto r = wait_compute(last, "recreating the swapchain", true); !r) return r.error();
      if (auto r = build(); !r) return r.error();
      ++attempt;
    }
    chain* c = nullptr;
    {
      const std::lock_guard lock(state_->mutex);
      c = current_.get();
    }
    std::uint32_t index = 0;
    VkResult r = VK_TIMEOUT;
    {
      // Let a waiting presentation in first: it frees an image.
      while (presenters_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
      const std::lock_guard lock(vk_mutex_);
      r = vkAcquireNextImageKHR(vk_device_, c->handle, acquire_step_ns, acquired, VK_NULL_HANDLE, &index);
    }
    if (r == VK_TIMEOUT || r == VK_NOT_READY) {
      const std::lock_guard lock(state_->mutex);
      if (state_->stopping)
        return error{
            boost::system::error_code(boost::asio::error::operation_aborted), {}, "the swapchain is destroyed"};
      continue;
    }
    if (r == VK_ERROR_OUT_OF_DATE_KHR) {
      // Nothing acquired, the semaphore untouched: recreate and try again.
      const std::lock_guard lock(state_->mutex);
      recreate_ = true;
      continue;
    }
    if (r != VK_SUCCESS && r != VK_SUBOPTIMAL_KHR)
      return make_vk_error(r, "swapchain: vkAcquireNextImageKHR of frame " + std::to_string(frame));
    swapchain_image image;
    image.index = index;
    image.width = c->width;
    image.height = c->height;
    image.acquired = slot.acquired.get();
    image.presentable = c->presentable[index].get();
    image.image = c->wrapped[index].get();
    image.frame = frame;
    const std::lock_guard lock(state_->mutex);
    // Suboptimal: the image is acquired (the semaphore will be signalled),
    // so it is handed out; the next acquisition recreates.
    if (r == VK_SUBOPTIMAL_KHR) recreate_ = true;
    slot.owner = c;
    slot.index = index;
    return image;
  }
  return make_error(errc::vulkan_error, "swapchain: still out of date after " + std::to_string(recreation_attempts) +
                                            " recreations (frame " + std::to_string(frame) + ")");
}

}  // namespace ferrum::gpu
