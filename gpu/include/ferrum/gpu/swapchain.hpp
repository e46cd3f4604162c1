// ferrum/gpu/swapchain.hpp — presenting what ferrum computes: a Vulkan
// swapchain on the caller's surface, whose images are gpu::images a wave
// writes — a plan's imported `present` image (wave_request::images), or a
// copy from an arena (record_copy) — and the compute queue then presents.
//
//   ferrum::gpu::swapchain_options options{.surface = surface, .width = 640, .height = 480};
//   auto chain = ferrum::gpu::swapchain::create(device, options).value();
//   ferrum::gpu::swapchain_image image = co_await chain->async_acquire(asio::use_awaitable);
//   list.begin().value();
//   chain->record_copy(list, lane.range(0, image.width * image.height * 4), image).value();
//   list.end().value();
//   const ferrum::gpu::semaphore_op waits[] = {{image.acquired, 0, ferrum::gpu::sync_stage::transfer}};
//   const ferrum::gpu::semaphore_op signals[] = {{image.presentable, 0}};
//   device.queue().submit_next(std::array{&list}, {}, {.waits = waits, .signals = signals}).value();
//   chain->present(image).value();
//
// The device must be a Vulkan device that ferrum made with
// vulkan_device_options::presentation (and the surface's instance extensions
// in instance_extensions); an adopted device is refused (its engine presents
// itself). Images are 8-bit UNORM with 4 channels (R8G8B8A8, else
// B8G8R8A8: order() says which), so the bytes shown are the bytes written;
// their usage is transfer-dst and color-attachment, with transfer-src and
// (R8G8B8A8 only) storage where the surface takes them.
//
// A swapchain that is out of date or suboptimal (the window was resized), or
// one asked to resize(), is recreated by the next acquisition at the new
// size, waiting only for what its own frames used (never for the whole
// device); recreations() counts.
//
// Thread safety: async_acquire, present, resize and the accessors may be
// called from any thread; acquisitions complete in the order they were
// initiated. record_copy records into the caller's list (one thread at a
// time per list, as every command).
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/arena.hpp"

#include <vulkan/vulkan_core.h>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/system_executor.hpp>
#include <boost/system/error_code.hpp>

#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

namespace ferrum::gpu {

class command_list;
class device;
class image;
class semaphore;
class vulkan_swapchain;

struct swapchain_options {
  // The caller's surface (glfwCreateWindowSurface); it stays the caller's,
  // who destroys it after the swapchain.
  VkSurfaceKHR surface = VK_NULL_HANDLE;
  // The wanted extent; the surface's currentExtent wins where it is fixed.
  std::uint32_t width = 0, height = 0;
  // Acquisitions whose frames may be in flight at once (their acquire
  // semaphores), 1..8.
  std::uint32_t frames_in_flight = 2;
  // FIFO; false: MAILBOX, else IMMEDIATE, where offered (FIFO otherwise).
  bool vsync = true;
};

// The byte order of a texel in the swapchain's images.
enum class channel_order : std::uint8_t { rgba, bgra };

// One acquired image: the wave that writes it waits on `acquired` and
// signals `presentable`; present() waits on `presentable`.
struct swapchain_image {
  std::uint32_t index = 0;              // the swapchain image
  std::uint32_t width = 0, height = 0;  // its extent
  // Binary: the wave that writes the image waits on it (sync_stage::transfer).
  semaphore* acquired = nullptr;
  // Binary: that wave signals it; present() waits on it.
  semaphore* presentable = nullptr;
  std::uint64_t frame = 0;  // 1 for the first acquisition
  // The image itself, for commands and plans (image_layout::undefined when
  // acquired; present() needs it in present_src): valid until the
  // swapchain is recreated twice after it was presented.
  const gpu::image* image = nullptr;
};

class swapchain {
 public:
  // Makes the swapchain on `d`'s compute queue. Errors:
  // invalid_device_option (not a Vulkan device, presentation not enabled, a
  // null surface, frames_in_flight outside 1..8, a zero extent),
  // presentation_unsupported (the compute queue family cannot present to
  // the surface), vulkan_feature_missing (no 8-bit UNORM RGBA/BGRA format,
  // no transfer-destination usage), out_of_*_memory, device_lost,
  // vulkan_error.
  [[nodiscard]] static result<std::unique_ptr<swapchain>> create(device& d, const swapchain_options& options);

  swapchain(const swapchain&) = delete;
  swapchain& operator=(const swapchain&) = delete;
  // Fails acquisitions still queued with operation_aborted, waits (up to a
  // few seconds) until nothing presented or acquired can still be in use —
  // the compute queue's values recorded when frames were presented, then
  // the compute queue idled once under its submission lock, as nothing else
  // tells when a presentation's semaphore wait happened — then destroys the
  // swapchain and its semaphores. The surface stays the caller's. An image
  // acquired and never presented: submit (and complete) the wave that waits
  // on its `acquired` semaphore first, or none at all.
  ~swapchain();

  // Acquires the next image, for the next frame slot: first waits until the
  // wave that used that slot's `acquired` semaphore last completed, then
  // vkAcquireNextImageKHR (recreating the swapchain first when it is out of
  // date, suboptimal or resize() was asked). That blocks, so it runs on a
  // thread the swapchain owns, never on the caller's executor.
  //
  // Completion signature: void(boost::system::error_code, swapchain_image).
  // The handler runs on its associated executor, or asio::system_executor
  // when it has none (the swapchain has no executor of its own), never
  // inside async_acquire; that executor's outstanding work is kept until the
  // handler has returned. Errors: device_lost, out_of_*_memory,
  // vulkan_error, operation_aborted (cancelled, or the swapchain destroyed
  // first).
  //
  // Cancellation, through the handler's associated cancellation slot:
  // terminal, partial and total while the acquisition is still queued
  // (nothing happened: no image is acquired); ignored once it has begun.
  //
  // Allocation: the handler (type-erased) lives in memory from its
  // associated allocator. No arguments: a lazy token (asio::deferred) may
  // start it any time later.
  template <class CompletionToken = boost::asio::default_completion_token_t<boost::asio::system_executor>>
  auto async_acquire(
      CompletionToken&& token = boost::asio::default_completion_token_t<boost::asio::system_executor>()) {
    return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code, swapchain_image)>(
        initiate_acquire(this), token);
  }

  // Records into `list` (recording, of this swapchain's device, for the
  // compute queue) the copy of `source` — width * height * 4 bytes, tightly
  // packed rows in order() — into `image`: its transition from undefined
  // (contents discarded) to transfer-dst, the copy, and its transition to
  // present-src, made by the list's next barrier or its end. A submission
  // holding it waits on the image's acquisition at sync_stage::transfer.
  // Errors: invalid_device_option (an image this swapchain did not hand
  // out, or presented already), unsupported_command (a list made for the
  // transfer queue), those of command_list::copy into an image (nothing is
  // recorded then).
  [[nodiscard]] result<void> record_copy(command_list& list, arena_range source, const swapchain_image& image);

  // Presents `image` on the compute queue once its `presentable` semaphore
  // is signalled: call it after submitting the wave that signals it. Out of
  // date or suboptimal: success (the frame is not shown, or shown
  // suboptimally) and the next acquisition recreates the swapchain. Errors:
  // invalid_device_option (an image this swapchain did not hand out, or
  // presented twice), device_lost, out_of_*_memory, vulkan_error.
  [[nodiscard]] result<void> present(const swapchain_image& image);

  // The next acquisition recreates the swapchain at this extent.
  void resize(std::uint32_t width, std::uint32_t height);

  // How many times the swapchain was recreated.
  [[nodiscard]] std::uint64_t recreations() const noexcept;
  [[nodiscard]] channel_order order() const noexcept;
  // The current images' extent.
  [[nodiscard]] std::uint32_t width() const noexcept;
  [[nodiscard]] std::uint32_t height() const noexcept;

  using acquire_handler = boost::asio::any_completion_handler<void(boost::system::error_code, swapchain_image)>;

 private:
  // The initiation carries asio::system_executor, the default executor of
  // the completion, as Asio's initiations carry their I/O executor.
  class initiate_acquire {
   public:
    using executor_type = boost::asio::system_executor;
    explicit initiate_acquire(swapchain* self) noexcept : self_(self) {}
    [[nodiscard]] executor_type get_executor() const noexcept { return {}; }

    template <class Handler>
    void operator()(Handler&& handler) const {
      // The outstanding work of the executor the handler will run on, taken now.
      auto work = boost::asio::prefer(boost::asio::get_associated_executor(handler, executor_type()),
                                      boost::asio::execution::outstanding_work.tracked);
      self_->acquire(acquire_handler(std::forward<Handler>(handler)), boost::asio::any_io_executor(std::move(work)));
    }

   private:
    swapchain* self_;
  };

  explicit swapchain(std::unique_ptr<vulkan_swapchain> impl) noexcept;

  // Queues an acquisition; `work` is the executor the handler runs on.
  void acquire(acquire_handler handler, boost::asio::any_io_executor work);

  std::unique_ptr<vulkan_swapchain> impl_;
};

}  // namespace ferrum::gpu
