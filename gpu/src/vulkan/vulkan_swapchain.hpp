// vulkan_swapchain.hpp (private) — the swapchain behind ferrum/gpu/swapchain.hpp:
// a VkSwapchainKHR on the caller's surface, its frame slots, and the thread
// that acquires images. Made, recreated and presented in
// vulkan_swapchain.cpp; acquired (the thread, async_acquire's requests) in
// vulkan_swapchain_acquire.cpp.
//
// Frames: frame f uses slot (f - 1) % frames_in_flight, whose `acquired`
// binary semaphore vkAcquireNextImageKHR signals. A slot is taken again only
// once its last frame was presented and the compute queue reached the value
// it had submitted when that frame was presented (the wave that waited on
// the semaphore is done, so the semaphore may be signalled again); until
// then a queued acquisition stays queued, and cancellable. Each image of a
// swapchain has its own `presentable` semaphore, signalled again only once
// the image was acquired again.
//
// Recreation (out of date, suboptimal, resize()): on the acquiring thread,
// after the compute queue reached every value a presented frame recorded,
// with the current swapchain as oldSwapchain. A retired swapchain (with its
// presentable semaphores) is destroyed at a later recreation, once it is not
// the latest retired one and no acquired image of it waits to be presented,
// or with the swapchain; its presentable semaphores stay until the
// swapchain goes, whose destructor idles the compute queue once (the only
// way to know a presentation's semaphore wait happened).
//
// Locks: `state_->mutex` guards the request queue, the slots and the chains'
// bookkeeping, and is never held across a blocking call; `vk_mutex_` is the
// external synchronization of the VkSwapchainKHR handles (acquire, present,
// create with oldSwapchain), taken before the queue's lock by present.
//
//   auto chain = vulkan_swapchain::create(device, options);
//   (*chain)->acquire(std::move(handler), work);
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/semaphore.hpp"
#include "ferrum/gpu/swapchain.hpp"

#include "vulkan/vulkan_image.hpp"

#include <vulkan/vulkan_core.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace ferrum::gpu {

class command_list;
class vulkan_device;
class vulkan_queue;

class vulkan_swapchain {
 public:
  // Errors: as swapchain::create.
  [[nodiscard]] static result<std::unique_ptr<vulkan_swapchain>> create(device& d, const swapchain_options& options);

  vulkan_swapchain(const vulkan_swapchain&) = delete;
  vulkan_swapchain& operator=(const vulkan_swapchain&) = delete;
  // As ~swapchain.
  ~vulkan_swapchain();

  void acquire(swapchain::acquire_handler handler, boost::asio::any_io_executor work);
  [[nodiscard]] result<void> record_copy(command_list& list, arena_range source, const swapchain_image& image);
  [[nodiscard]] result<void> present(const swapchain_image& image);
  void resize(std::uint32_t width, std::uint32_t height);

  [[nodiscard]] std::uint64_t recreations() const noexcept { return recreations_.load(std::memory_order_acquire); }
  [[nodiscard]] channel_order order() const noexcept { return order_; }
  [[nodiscard]] std::uint32_t width() const noexcept { return width_.load(std::memory_order_acquire); }
  [[nodiscard]] std::uint32_t height() const noexcept { return height_.load(std::memory_order_acquire); }

 private:
  // One queued acquisition.
  struct request {
    std::uint64_t id = 0;
    swapchain::acquire_handler handler;
    boost::asio::any_io_executor work;
  };
  // What the canceller of a queued request reaches: shared, so that a slot
  // emitted after the swapchain went finds nothing to do.
  struct shared_state {
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<request> requests;
    std::uint64_t next_id = 0;
    bool stopping = false;
  };
  struct canceller {
    canceller(std::shared_ptr<shared_state> s, std::uint64_t i) noexcept : state(std::move(s)), id(i) {}
    std::shared_ptr<shared_state> state;
    std::uint64_t id;
    void operator()(boost::asio::cancellation_type_t type) const;
  };
  // One VkSwapchainKHR with its images, each a gpu::image over the
  // VkImage and a view of it (swapchain_image::image).
  struct chain {
    VkSwapchainKHR handle = VK_NULL_HANDLE;
    std::vector<VkImage> images;
    std::vector<VkImageView> views;
    std::vector<std::unique_ptr<vulkan_image>> wrapped;
    std::vector<std::unique_ptr<semaphore>> presentable;  // one per image
    std::uint32_t width = 0, height = 0;

    // Destroys the views and the swapchain (not the semaphores).
    void destroy(VkDevice device) noexcept;
  };
  struct frame_slot {
    std::unique_ptr<semaphore> acquired;
    // Acquired and not presented yet: the frame, its chain and image.
    bool in_use = false;
    std::uint64_t frame = 0;
    chain* owner = nullptr;
    std::uint32_t index = 0;
    // The compute queue's value that, once reached, frees `acquired`.
    std::uint64_t reuse_value = 0;
  };

  vulkan_swapchain(vulkan_device& d, const swapchain_options& options);

  // The VkSemaphore of one of the device's semaphores.
  [[nodiscard]] static VkSemaphore handle_of(const semaphore& s) noexcept;

  // Completes `r` on its executor (never inline).
  static void complete(request r, boost::system::error_code ec, const swapchain_image& image);

  // The acquiring thread.
  void run();
  // Acquires frame `frame` into `slot` (taken for it), recreating the
  // swapchain where needed. Blocks.
  [[nodiscard]] result<swapchain_image> acquire_frame(std::uint64_t frame, frame_slot& slot);
  // Makes a swapchain at the wanted extent, retiring the current one.
  [[nodiscard]] result<void> build();
  // Waits until the compute queue reaches `value` (bounded; a stop ends the
  // wait with operation_aborted when `stoppable`).
  [[nodiscard]] result<void> wait_compute(std::uint64_t value, const char* what, bool stoppable);
  // The slot of an image handed out and not presented, or null (under
  // state_->mutex).
  [[nodiscard]] frame_slot* handed_out(const swapchain_image& image) noexcept;

  vulkan_device* device_;
  vulkan_queue* queue_;
  VkDevice vk_device_;
  VkPhysicalDevice physical_;
  swapchain_options options_;
  VkSurfaceFormatKHR format_{};
  // What the images may be used for (image_usage bits): the swapchain's
  // usage flags.
  std::uint32_t usage_ = 0;
  channel_order order_ = channel_order::rgba;
  VkPresentModeKHR present_mode_ = VK_PRESENT_MODE_FIFO_KHR;

  std::shared_ptr<shared_state> state_;
  // Under state_->mutex:
  std::vector<frame_slot> slots_;
  std::uint64_t frames_ = 0;  // frames acquired (or being acquired)
  std::unique_ptr<chain> current_;
  std::vector<std::unique_ptr<chain>> retired_;  // oldest first
  // Presentable semaphores of destroyed retired swapchains, kept until the
  // destructor idles the queue.
  std::vector<std::unique_ptr<semaphore>> presented_;
  bool recreate_ = false;
  std::uint32_t wanted_width_ = 0, wanted_height_ = 0;

  std::mutex vk_mutex_;
  std::atomic<std::uint32_t> presenters_{0};  // threads waiting for vk_mutex_ to present
  std::atomic<std::uint64_t> recreations_{0};
  std::atomic<std::uint32_t> width_{0}, height_{0};
  std::thread worker_;
};

}  // namespace ferrum::gpu
