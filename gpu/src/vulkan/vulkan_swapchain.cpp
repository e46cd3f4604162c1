// vulkan_swapchain.cpp — the swapchain's creation, recreation, destruction and presentation.
#include "vulkan/vulkan_swapchain.hpp"

#include "ferrum/gpu/command_list.hpp"

#include "vulkan/vk_result.hpp"
#include "vulkan/vulkan_device.hpp"
#include "vulkan/vulkan_queue.hpp"
#include "vulkan/vulkan_semaphore.hpp"

#include <boost/asio/error.hpp>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace ferrum::gpu {
namespace {

constexpr std::uint32_t max_frames_in_flight = 8;

}  // namespace

// --- the public class -------------------------------------------------------

result<std::unique_ptr<swapchain>> swapchain::create(device& d, const swapchain_options& options) {
  auto impl = vulkan_swapchain::create(d, options);
  if (!impl) return impl.error();
  return std::unique_ptr<swapchain>(new swapchain(std::move(*impl)));
}

swapchain::swapchain(std::unique_ptr<vulkan_swapchain> impl) noexcept : impl_(std::move(impl)) {}
swapchain::~swapchain() = default;

void swapchain::acquire(acquire_handler handler, boost::asio::any_io_executor work) {
  impl_->acquire(std::move(handler), std::move(work));
}
result<void> swapchain::record_copy(command_list& list, arena_range source, const swapchain_image& image) {
  return impl_->record_copy(list, source, image);
}
result<void> swapchain::present(const swapchain_image& image) { return impl_->present(image); }
void swapchain::resize(std::uint32_t width, std::uint32_t height) { impl_->resize(width, height); }
std::uint64_t swapchain::recreations() const noexcept { return impl_->recreations(); }
channel_order swapchain::order() const noexcept { return impl_->order(); }
std::uint32_t swapchain::width() const noexcept { return impl_->width(); }
std::uint32_t swapchain::height() const noexcept { return impl_->height(); }

// --- creation ---------------------------------------------------------------

VkSemaphore vulkan_swapchain::handle_of(const semaphore& s) noexcept {
  return static_cast<const vulkan_semaphore&>(s).handle();
}

vulkan_swapchain::vulkan_swapchain(vulkan_device& d, const swapchain_options& options)
    : device_(&d),
      queue_(&d.compute_queue()),
      vk_device_(d.native().device),
      physical_(d.native().physical_device),
      options_(options),
      state_(std::make_shared<shared_state>()),
      wanted_width_(options.width),
      wanted_height_(options.height) {}

result<std::unique_ptr<vulkan_swapchain>> vulkan_swapchain::create(device& d, const swapchain_options& options) {
  auto* v = dynamic_cast<vulkan_device*>(&d);
  if (v == nullptr)
    return make_error(errc::invalid_device_option,
                      "swapchain::create: device " + quote_text(d.name()) + " is not a Vulkan device");
  if (!v->presentation())
    return make_error(errc::invalid_device_option, "swapchain::create: device " + quote_text(d.name()) +
                                                       " was not made with vulkan_device_options::presentation");
  if (options.surface == VK_NULL_HANDLE)
    return make_error(errc::invalid_device_option, "swapchain::create: swapchain_options::surface is null");
  if (options.frames_in_flight == 0 || options.frames_in_flight > max_frames_in_flight)
    return make_error(errc::invalid_device_option, "swapchain::create: swapchain_options::frames_in_flight " +
                                                       std::to_string(options.frames_in_flight) + " is not in 1..8");

  std::unique_ptr<vulkan_swapchain> self(new vulkan_swapchain(*v, options));
  const std::uint32_t family = v->native().queue_family;
  VkBool32 supported = VK_FALSE;
  if (VkResult r = vkGetPhysicalDeviceSurfaceSupportKHR(self->physical_, family, options.surface, &supported);
      r != VK_SUCCESS)
    return make_vk_error(r, "swapchain::create: vkGetPhysicalDeviceSurfaceSupportKHR");
  if (supported != VK_TRUE)
    return make_error(errc::presentation_unsupported, "swapchain::create: queue family " + std::to_string(family) +
                                                          " of device " + quote_text(d.name()) +
                                                          " cannot present to the surface");

  // 8-bit UNORM, not sRGB: the bytes shown are the bytes written.
  std::vector<VkSurfaceFormatKHR> formats;
  for (;;) {
    std::uint32_t count = 0;
    if (VkResult r = vkGetPhysicalDeviceSurfaceFormatsKHR(self->physical_, options.surface, &count, nullptr);
        r != VK_SUCCESS)
      return make_vk_error(r, "swapchain::create: vkGetPhysicalDeviceSurfaceFormatsKHR");
    formats.resize(count);
    const VkResult r = vkGetPhysicalDeviceSurfaceFormatsKHR(self->physical_, options.surface, &count, formats.data());
    if (r == VK_INCOMPLETE) continue;
    if (r != VK_SUCCESS) return make_vk_error(r, "swapchain::create: vkGetPhysicalDeviceSurfaceFormatsKHR");
    formats.resize(count);
    break;
  }
  const auto find = [&](VkFormat format) {
    return std::find_if(formats.begin(), formats.end(),
                        [&](const VkSurfaceFormatKHR& f) { return f.format == format; });
  };
  if (auto rgba = find(VK_FORMAT_R8G8B8A8_UNORM); rgba != formats.end()) {
    self->format_ = *rgba;
    self->order_ = channel_order::rgba;
  } else if (auto bgra = find(VK_FORMAT_B8G8R8A8_UNORM); bgra != formats.end()) {
    self->format_ = *bgra;
    self->order_ = channel_order::bgra;
  } else {
    return make_error(errc::vulkan_feature_missing,
                      "swapchain::create: the surface offers neither R8G8B8A8_UNORM nor B8G8R8A8_UNORM");
  }

  std::vector<VkPresentModeKHR> modes;
  for (;;) {
    std::uint32_t count = 0;
    if (VkResult r = vkGetPhysicalDeviceSurfacePresentModesKHR(self->physical_, options.surface, &count, nullptr);
        r != VK_SUCCESS)
      return make_vk_error(r, "swapchain::create: vkGetPhysicalDeviceSurfacePresentModesKHR");
    modes.resize(count);
    const VkResult r =
        vkGetPhysicalDeviceSurfacePresentModesKHR(self->physical_, options.surface, &count, modes.data());
    if (r == VK_INCOMPLETE) continue;
    if (r != VK_SUCCESS) return make_vk_error(r, "swapchain::create: vkGetPhysicalDeviceSurfacePresentModesKHR");
    modes.resize(count);
    break;
  }
  // FIFO is always offered.
  const auto offered = [&](VkPresentModeKHR mode) {
    return std::find(modes.begin(), modes.end(), mode) != modes.end();
  };
  if (!options.vsync) {
    if (offered(VK_PRESENT_MODE_MAILBOX_KHR))
      self->present_mode_ = VK_PRESENT_MODE_MAILBOX_KHR;
    else if (offered(VK_PRESENT_MODE_IMMEDIATE_KHR))
      self->present_mode_ = VK_PRESENT_MODE_IMMEDIATE_KHR;
  }

  self->slots_.resize(options.frames_in_flight);
  for (frame_slot& slot : self->slots_) {
    auto acquired = d.create_semaphore(semaphore_kind::binary);
    if (!acquired) return acquired.error();
    slot.acquired = std::move(*acquired);
  }
  if (auto r = self->build(); !r) return r.error();
  // build() counted the first swapchain as a recreation.
  self->recreations_.store(0, std::memory_order_release);
  try {
    self->worker_ = std::thread([s = self.get()] { s->run(); });
  } catch (const std::system_error& e) {
    return make_error(errc::out_of_host_memory, std::string("swapchain::create: starting its thread: ") + e.what());
  }
  return self;
}

result<void> vulkan_swapchain::build() {
  VkSurfaceCapabilitiesKHR caps{};
  if (VkResult r = vkGetPhysicalDeviceSurfaceCapabilitiesKHR(physical_, options_.surface, &caps); r != VK_SUCCESS)
    return make_vk_error(r, "swapchain: vkGetPhysicalDeviceSurfaceCapabilitiesKHR");
  if ((caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_DST_BIT) == 0)
    return make_error(errc::vulkan_feature_missing, "swapchain: the surface's images cannot be transfer destinations");
  std::uint32_t width = 0, height = 0;
  {
    const std::lock_guard lock(state_->mutex);
    width = wanted_width_;
    height = wanted_height_;
    recreate_ = false;
  }
  VkExtent2D extent = caps.currentExtent;
  if (extent.width == 0xFFFFFFFFu) {
    // The surface takes the swapchain's extent.
    extent.width = std::clamp(width, caps.minImageExtent.width, caps.maxImageExtent.width);
    extent.height = std::clamp(height, caps.minImageExtent.height, caps.maxImageExtent.height);
  }
  if (extent.width == 0 || extent.height == 0)
    return make_error(errc::invalid_device_option, "swapchain: the extent is " + std::to_string(extent.width) + "x" +
                                                       std::to_string(extent.height) +
                                                       " (a zero size asked for, or a minimized window)");
  std::uint32_t images = caps.minImageCount + 1;
  if (caps.maxImageCount != 0) images = std::min(images, caps.maxImageCount);
  VkCompositeAlphaFlagBitsKHR alpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR;
  if ((caps.supportedCompositeAlpha & alpha) == 0) {
    for (std::uint32_t bit = 1; bit != 0 && bit <= caps.supportedCompositeAlpha; bit <<= 1u) {
      if ((caps.supportedCompositeAlpha & bit) != 0) {
        alpha = static_cast<VkCompositeAlphaFlagBitsKHR>(bit);
        break;
      }
    }
  }

  auto made = std::make_unique<chain>();
  VkSwapchainCreateInfoKHR info{};
  info.sType = VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR;
  info.surface = options_.surface;
  info.minImageCount = images;
  info.imageFormat = format_.format;
  info.imageColorSpace = format_.colorSpace;
  info.imageExtent = extent;
  info.imageArrayLayers = 1;
  // Copies and attachments always; copies out and storage where the
  // surface takes them (not every device stores BGRA).
  usage_ = image_usage::transfer_dst | image_usage::color_attachment;
  if ((caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_SRC_BIT) != 0) usage_ |= image_usage::transfer_src;
  if ((caps.supportedUsageFlags & VK_IMAGE_USAGE_STORAGE_BIT) != 0 && order_ == channel_order::rgba)
    usage_ |= image_usage::storage;
  info.imageUsage = vk_usage(usage_);
  // Only the compute queue's family writes and presents them.
  info.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;
  info.preTransform = caps.currentTransform;
  info.compositeAlpha = alpha;
  info.presentMode = present_mode_;
  info.clipped = VK_TRUE;
  info.oldSwapchain = current_ ? current_->handle : VK_NULL_HANDLE;
  {
    // oldSwapchain is externally synchronized.
    const std::lock_guard lock(vk_mutex_);
    if (VkResult r = vkCreateSwapchainKHR(vk_device_, &info, nullptr, &made->handle); r != VK_SUCCESS) {
      made->handle = VK_NULL_HANDLE;
      return make_vk_error(r, "swapchain: vkCreateSwapchainKHR at " + std::to_string(extent.width) + "x" +
                                  std::to_string(extent.height));
    }
  }
  const auto destroy_made = [&] { made->destroy(vk_device_); };
  for (;;) {
    std::uint32_t count = 0;
    if (VkResult r = vkGetSwapchainImagesKHR(vk_device_, made->handle, &count, nullptr); r != VK_SUCCESS) {
      destroy_made();
      return make_vk_error(r, "swapchain: vkGetSwapchainImagesKHR");
    }
    made->images.resize(count);
    const VkResult r = vkGetSwapchainImagesKHR(vk_device_, made->handle, &count, made->images.data());
    if (r == VK_INCOMPLETE) continue;
    if (r != VK_SUCCESS) {
      destroy_made();
      return make_vk_error(r, "swapchain: vkGetSwapchainImagesKHR");
    }
    made->images.resize(count);
    break;
  }
  const image_spec spec{order_ == channel_order::rgba ? image_format::rgba8_unorm : image_format::bgra8_unorm,
                        extent.width,
                        extent.height,
                        1,
                        1,
                        usage_};
  for (std::size_t i = 0; i < made->images.size(); ++i) {
    auto view = make_vk_image_view(vk_device_, made->images[i], spec);
    if (!view) {
      destroy_made();
      return view.error();
    }
    made->views.push_back(*view);
    made->wrapped.push_back(std::make_unique<vulkan_image>(*device_, placed_image{spec, 0}, made->images[i], *view));
  }
  for (std::size_t i = 0; i < made->images.size(); ++i) {
    auto presentable = device_->create_semaphore(semaphore_kind::binary);
    if (!presentable) {
      made->presentable.clear();
      destroy_made();
      return presentable.error();
    }
    made->presentable.push_back(std::move(*presentable));
  }
  made->width = extent.width;
  made->height = extent.height;

  std::vector<std::unique_ptr<chain>> gone;
  {
    const std::lock_guard lock(state_->mutex);
    if (current_) retired_.push_back(std::move(current_));
    current_ = std::move(made);
    // A retired swapchain goes once it is not the latest retired one (whose
    // last presentations may still be queued) and no acquired image of it
    // waits to be presented.
    for (std::size_t i = 0; i + 1 < retired_.size();) {
      const chain* c = retired_[i].get();
      const bool held =
          std::any_of(slots_.begin(), slots_.end(), [&](const frame_slot& s) { return s.in_use && s.owner == c; });
      if (held) {
        ++i;
        continue;
      }
      gone.push_back(std::move(retired_[i]));
      retired_.erase(retired_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  // The presentable semaphores stay until the swapchain goes: nothing says
  // when a presentation's wait on them happened but the queue's idling.
  for (const auto& c : gone) {
    c->destroy(vk_device_);
    for (auto& p : c->presentable) presented_.push_back(std::move(p));
  }
  width_.store(extent.width, std::memory_order_release);
  height_.store(extent.height, std::memory_order_release);
  recreations_.fetch_add(1, std::memory_order_acq_rel);
  return {};
}

vulkan_swapchain::~vulkan_swapchain() {
  std::deque<request> queued;
  {
    const std::lock_guard lock(state_->mutex);
    state_->stopping = true;
    queued.swap(state_->requests);
  }
  state_->wake.notify_all();
  for (request& r : queued) complete(std::move(r), boost::asio::error::operation_aborted, {});
  if (worker_.joinable()) worker_.join();
  // Everything the frames' waves and presentations used: the compute
  // queue's values recorded at each presentation. Bounded: after a device
  // loss or a hung GPU the objects go anyway.
  std::uint64_t last = 0;
  for (const frame_slot& s : slots_) last = std::max(last, s.reuse_value);
  (void)wait_compute(last, "destroying the swapchain", false);
  // The presentations' semaphore waits: no fence tells when they happened
  // (without VK_EXT_swapchain_maintenance1), so the queue is idled once,
  // under its submission lock; bounded by what is queued on it.
  if (frames_ != 0) (void)queue_->wait_idle();
  // Each swapchain before its presentable semaphores, the current one (made
  // with the others as oldSwapchain) first.
  if (current_) {
    current_->destroy(vk_device_);
    current_->presentable.clear();
  }
  for (auto& c : retired_) {
    c->destroy(vk_device_);
    c->presentable.clear();
  }
  presented_.clear();
  // The slots' semaphores go with slots_.
}

// --- use --------------------------------------------------------------------

vulkan_swapchain::frame_slot* vulkan_swapchain::handed_out(const swapchain_image& image) noexcept {
  if (image.frame == 0) return nullptr;
  frame_slot& slot = slots_[(image.frame - 1) % slots_.size()];
  if (!slot.in_use || slot.frame != image.frame || slot.owner == nullptr || slot.index != image.index) return nullptr;
  return &slot;
}

void vulkan_swapchain::chain::destroy(VkDevice device) noexcept {
  wrapped.clear();
  for (VkImageView view : views)
    if (view != VK_NULL_HANDLE) vkDestroyImageView(device, view, nullptr);
  views.clear();
  vkDestroySwapchainKHR(device, handle, nullptr);
}

result<void> vulkan_swapchain::record_copy(command_list& list, arena_range source, const swapchain_image& image) {
  const gpu::image* target = nullptr;
  {
    const std::lock_guard lock(state_->mutex);
    const frame_slot* slot = handed_out(image);
    if (slot == nullptr)
      return make_error(errc::invalid_device_option, "swapchain::record_copy: frame " + std::to_string(image.frame) +
                                                         " is not an acquired image of this swapchain waiting to be "
                                                         "presented");
    target = slot->owner->wrapped[slot->index].get();
  }
  // The swapchain's images are exclusive to the compute queue's family:
  // presentation's copy runs there (no ownership transfer).
  if (list.kind() != queue_kind::compute)
    return make_error(errc::unsupported_command, "swapchain::record_copy on a list made for the " +
                                                     std::string(to_string(list.kind())) +
                                                     " queue (the image belongs to the compute queue)");
  // The copy's checks before its transitions, so that a refused copy
  // leaves nothing recorded.
  if (auto ok = list.check_copy(source, *target, image_layout::transfer_dst); !ok) return ok;
  if (auto ok = list.transition(*target, image_layout::undefined, image_layout::transfer_dst); !ok) return ok;
  if (auto ok = list.copy(source, *target, image_layout::transfer_dst); !ok) return ok;
  return list.transition(*target, image_layout::transfer_dst, image_layout::present_src);
}

result<void> vulkan_swapchain::present(const swapchain_image& image) {
  VkSwapchainKHR handle = VK_NULL_HANDLE;
  VkSemaphore wait = VK_NULL_HANDLE;
  bool current = false;
  {
    const std::lock_guard lock(state_->mutex);
    frame_slot* slot = handed_out(image);
    if (slot == nullptr)
      return make_error(errc::invalid_device_option, "swapchain::present: frame " + std::to_string(image.frame) +
                                                         " is not an acquired image of this swapchain (presented "
                                                         "already?)");
    handle = slot->owner->handle;
    wait = handle_of(*slot->owner->presentable[slot->index]);
    current = slot->owner == current_.get();
  }
  // An image of a retired swapchain is still presented: that consumes the
  // presentable semaphore's signal (the engine may show it or not).
  VkPresentInfoKHR info{};
  info.sType = VK_STRUCTURE_TYPE_PRESENT_INFO_KHR;
  info.waitSemaphoreCount = 1;
  info.pWaitSemaphores = &wait;
  info.swapchainCount = 1;
  info.pSwapchains = &handle;
  info.pImageIndices = &image.index;
  std::uint64_t submitted = 0;
  VkResult r = VK_SUCCESS;
  {
    presenters_.fetch_add(1, std::memory_order_acq_rel);
    const std::lock_guard lock(vk_mutex_);
    presenters_.fetch_sub(1, std::memory_order_acq_rel);
    r = queue_->present(info, &submitted);
  }
  {
    const std::lock_guard lock(state_->mutex);
    frame_slot& slot = slots_[(image.frame - 1) % slots_.size()];
    // Out of date, suboptimal and errors alike: the queue operation was
    // enqueued (its semaphore wait happens), so the slot is reused once the
    // waves submitted until now are done.
    slot.in_use = false;
    slot.owner = nullptr;
    slot.reuse_value = submitted;
    if (current && (r == VK_ERROR_OUT_OF_DATE_KHR || r == VK_SUBOPTIMAL_KHR)) recreate_ = true;
  }
  state_->wake.notify_all();
  if (r == VK_SUCCESS || r == VK_SUBOPTIMAL_KHR || r == VK_ERROR_OUT_OF_DATE_KHR) return {};
  return make_vk_error(r, "swapchain::present: vkQueuePresentKHR of frame " + std::to_string(image.frame));
}

void vulkan_swapchain::resize(std::uint32_t width, std::uint32_t height) {
  const std::lock_guard lock(state_->mutex);
  wanted_width_ = width;
  wanted_height_ = height;
  recreate_ = true;
}

}  // namespace ferrum::gpu
