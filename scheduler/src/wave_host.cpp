// wave_host.cpp — what a wave needs of its scheduler (wave_host.hpp).
#include "wave_host.hpp"

#include <boost/asio/error.hpp>

#include <algorithm>
#include <thread>

namespace ferrum::detail {

void wave_counters::counted(boost::system::error_code ec) noexcept {
  if (!ec) {
    completed_.fetch_add(1, std::memory_order_relaxed);
  } else if (ec == boost::asio::error::operation_aborted) {
    cancelled_.fetch_add(1, std::memory_order_relaxed);
  } else {
    failed_.fetch_add(1, std::memory_order_relaxed);
  }
}

void wave_counters::lane_taken() noexcept {
  const std::uint32_t now = in_flight_.fetch_add(1, std::memory_order_relaxed) + 1;
  std::uint32_t most = max_in_flight_.load(std::memory_order_relaxed);
  while (now > most && !max_in_flight_.compare_exchange_weak(most, now, std::memory_order_relaxed)) {
  }
}

scheduler_stats wave_counters::read() const noexcept {
  scheduler_stats s;
  s.started = started_.load(std::memory_order_relaxed);
  s.completed = completed_.load(std::memory_order_relaxed);
  s.failed = failed_.load(std::memory_order_relaxed);
  s.cancelled = cancelled_.load(std::memory_order_relaxed);
  s.in_flight = in_flight_.load(std::memory_order_relaxed);
  s.max_in_flight = max_in_flight_.load(std::memory_order_relaxed);
  return s;
}

wave_host::wave_host(std::span<gpu::device* const> devices, boost::asio::any_io_executor executor,
                     const scheduler_options& options, void (*on_recycle)(void* owner, wave& w) noexcept, void* owner)
    : executor_(std::move(executor)),
      options_(options),
      recycle_(on_recycle),
      owner_(owner),
      watchdog_(options.fence_timeout) {
  devices_.reserve(devices.size());
  for (gpu::device* d : devices) devices_.push_back({d, devices_.size()});
}

const wave_device& wave_host::device_of(const lane& l) const noexcept {
  for (const wave_device& d : devices_)
    if (d.device == &l.owner->device()) return d;
  return devices_.front();  // unreachable: every lane is on one of them
}

bool wave_host::every_device_lost() const noexcept {
  return std::all_of(devices_.begin(), devices_.end(), [](const wave_device& d) { return d.device->lost(); });
}

void wave_host::wait_for_posts() const noexcept {
  while (posting_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

}  // namespace ferrum::detail
