// null_device.cpp — the null device: a worker thread, or the submitting
// thread, plays the GPU (ferrum/gpu/null_device.hpp). Creating the device,
// its arenas, kernels, command lists and timestamp pools; starting and
// stopping its queues' workers (null_queue.cpp).
#include "null/null_device.hpp"
#include "null/null_image.hpp"

#include "null/null_arena.hpp"
#include "null/null_command_list.hpp"
#include "null/null_kernel.hpp"
#include "null/null_semaphore.hpp"
#include "null/null_timestamp_pool.hpp"

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <system_error>

namespace ferrum::gpu {
namespace null_detail {

null_device_impl::null_device_impl(const null_device_options& options)
    : null_device("null", "null", {options.max_arena_bytes, 65535, max_image_extent, options.graphics}),
      options_(options) {
  queues_.push_back(std::make_unique<null_queue>(*this, 0, queue_kind::compute));
  if (options_.queues >= 2) queues_.push_back(std::make_unique<null_queue>(*this, 1, queue_kind::transfer));
  if (options_.queues == 3) queues_.push_back(std::make_unique<null_queue>(*this, 2, queue_kind::async_compute));
  // By kind: compute, transfer, async_compute (on the compute queue unless
  // it has its own).
  set_queues({queues_.front().get(), queues_[options_.queues >= 2 ? 1 : 0].get(),
              queues_[options_.queues == 3 ? 2 : 0].get()});
  for (const null_device_options::withheld_features& w : options.withheld)
    set_format_features(w.format, format_features(w.format) & ~w.features);
  set_timestamp_clock(options.timestamps ? timestamp_clock{true, "steady_clock", std::chrono::nanoseconds(0)}
                                         : timestamp_clock{false, "null_device_options::timestamps is off",
                                                           std::chrono::nanoseconds(0)});
  if (!options_.inline_completion) {
    try {
      for (const auto& q : queues_) q->start();
    } catch (...) {
      stop();
      throw;
    }
  }
}

null_device_impl::~null_device_impl() {
  stop();
  release_retired();
  // The workers ran or dropped everything they were given; waits on values
  // they did not reach would otherwise never complete.
  for (const auto& q : queues_) q->own_timeline().fail(make_error_code(errc::device_shut_down));
}

void null_device_impl::stop() noexcept {
  // Every worker is told before any is joined: one may be waiting for
  // another's value, which a stopping worker will never reach.
  for (const auto& q : queues_) q->request_stop();
  for (const auto& q : queues_) q->join();
}

result<std::unique_ptr<arena>> null_device_impl::do_create_arena(std::size_t bytes, std::optional<memory_class> cls) {
  const auto zeroed = [bytes]() -> std::byte* {
    auto* memory = static_cast<std::byte*>(::operator new[](bytes, null_arena::alignment, std::nothrow));
    if (memory != nullptr) std::memset(memory, 0, bytes);
    return memory;
  };
  std::byte* storage = zeroed();
  if (storage == nullptr) return make_error(errc::out_of_host_memory, std::to_string(bytes) + " bytes");
  if (!cls) return std::unique_ptr<arena>(new null_arena(*this, storage, bytes));
  // With discrete_layout, the host's bytes of upload and readback memory
  // are a buffer of their own, as on a GPU whose memory the host cannot map.
  std::byte* staging = nullptr;
  if (options_.discrete_layout && host_touches(*cls)) {
    staging = zeroed();
    if (staging == nullptr) {
      ::operator delete[](storage, null_arena::alignment);
      return make_error(errc::out_of_host_memory, std::to_string(bytes) + " bytes of staging");
    }
  }
  return std::unique_ptr<arena>(new null_arena(*this, storage, staging, bytes, *cls));
}

result<gpu::image_requirements> null_device_impl::do_image_requirements(const image_spec& spec) {
  return null_image_requirements(spec);
}

result<std::unique_ptr<image_memory>> null_device_impl::do_create_image_memory(std::span<const placed_image> images,
                                                                               std::uint64_t bytes) {
  return std::unique_ptr<image_memory>(std::make_unique<null_image_memory>(*this, *this, images, bytes));
}

result<std::unique_ptr<image_view>> null_device_impl::do_create_image_view(const image& img,
                                                                           const image_subresources& range) {
  return std::unique_ptr<image_view>(std::make_unique<null_image_view>(img, range));
}

image_layout_report null_device_impl::image_layout_errors() const {
  const std::lock_guard lock(layout_mutex_);
  return layout_errors_;
}

barrier_access_report null_device_impl::barrier_access_errors() const {
  const std::lock_guard lock(layout_mutex_);
  return access_errors_;
}

void null_device_impl::report(error_report& into, std::string what) noexcept {
  const std::lock_guard lock(layout_mutex_);
  ++into.count;
  if (into.first.size() >= error_report::kept) return;
  try {
    into.first.push_back(std::move(what));
  } catch (...) {
    // Out of memory: counted, not kept.
  }
}

result<std::unique_ptr<kernel>> null_device_impl::do_create_kernel(const kernel_source& source) {
  if (source.cpu == nullptr)
    return make_error(errc::invalid_kernel, "kernel " + quote_text(source.name) + " has no CPU form");
  return std::unique_ptr<kernel>(new null_kernel(*this, source));
}

result<std::unique_ptr<command_list>> null_device_impl::do_create_command_list(queue_kind kind, list_stages stages) {
  return std::unique_ptr<command_list>(new null_command_list(*this, kind, stages));
}

result<std::unique_ptr<semaphore>> null_device_impl::do_create_semaphore(semaphore_kind kind) {
  return std::unique_ptr<semaphore>(new null_semaphore(*this, kind));
}

result<std::unique_ptr<event>> null_device_impl::do_create_event() {
  return std::unique_ptr<event>(new null_event(*this));
}

result<std::unique_ptr<timestamp_pool>> null_device_impl::do_create_timestamp_pool(std::uint32_t slots,
                                                                                   timestamp_clock&) {
  return std::unique_ptr<timestamp_pool>(new null_timestamp_pool(*this, slots));
}

}  // namespace null_detail

result<std::unique_ptr<null_device>> null_device::create(const null_device_options& options) {
  const auto probability = [](double p) { return std::isfinite(p) && p >= 0.0 && p <= 1.0; };
  const null_fault_options& f = options.faults;
  if (!probability(f.lost) || !probability(f.hang) || !probability(f.delay))
    return make_error(errc::invalid_device_option, "fault probabilities must lie in [0, 1]");
  if (options.latency.count() < 0 || f.max_delay.count() < 0 || f.hang_duration.count() < 0)
    return make_error(errc::invalid_device_option, "latency, max_delay and hang_duration must not be negative");
  if (options.max_arena_bytes == 0) return make_error(errc::invalid_device_option, "max_arena_bytes must be positive");
  if (options.queues < 1 || options.queues > 3)
    return make_error(errc::invalid_device_option, "queues must be 1, 2 or 3, not " + std::to_string(options.queues));
  for (const null_device_options::withheld_features& w : options.withheld)
    if (static_cast<std::size_t>(w.format) >= image_format_count || (w.features & ~format_feature::all) != 0)
      return make_error(errc::invalid_device_option, "withheld: format " + std::to_string(static_cast<int>(w.format)) +
                                                         " or features " + std::to_string(w.features) +
                                                         " outside gpu::image_format and gpu::format_feature");
  if (options.inline_completion) {
    // Each of these would make the submitting thread sleep inside submit.
    std::string pausing;
    const auto conflicts = [&](bool set, const char* field) {
      if (set) pausing += (pausing.empty() ? "" : ", ") + std::string(field);
    };
    conflicts(options.latency.count() > 0, "latency");
    conflicts(f.delay > 0, "faults.delay");
    conflicts(f.hang > 0, "faults.hang");
    if (!pausing.empty())
      return make_error(errc::invalid_device_option, "inline_completion cannot be combined with " + pausing);
  }
  try {
    return std::unique_ptr<null_device>(new null_detail::null_device_impl(options));
  } catch (const std::system_error& e) {
    return make_error(errc::out_of_host_memory, std::string("starting a queue's worker thread: ") + e.what());
  }
}

}  // namespace ferrum::gpu
