// null_device.hpp (private) — the null device behind
// ferrum/gpu/null_device.hpp: its options, its queues and the faults injected
// so far. The public entry point is null_device::create.
#pragma once

#include "ferrum/gpu/null_device.hpp"

#include "null/null_queue.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ferrum::gpu::null_detail {

class null_device_impl final : public null_device {
 public:
  explicit null_device_impl(const null_device_options& options);
  ~null_device_impl() override;

  [[nodiscard]] fault_counts injected_faults() const noexcept override {
    return {delays_.load(std::memory_order_relaxed), hangs_.load(std::memory_order_relaxed),
            losses_.load(std::memory_order_relaxed)};
  }
  void lose() noexcept override {
    for (const auto& q : queues_) q->own_timeline().fail(make_error_code(errc::device_lost));
  }
  [[nodiscard]] image_layout_report image_layout_errors() const override;
  [[nodiscard]] barrier_access_report barrier_access_errors() const override;

  // A worker met an image in another layout than its command expects.
  void report_image_layout(std::string what) noexcept { report(layout_errors_, std::move(what)); }
  // A worker found a barrier too narrow in its accesses (null_reorder.hpp).
  void report_barrier_access(std::string what) noexcept { report(access_errors_, std::move(what)); }

  [[nodiscard]] const null_device_options& options() const noexcept { return options_; }
  void count(fault_kind kind) noexcept {
    std::atomic<std::uint64_t>& counter =
        kind == fault_kind::delay ? delays_ : (kind == fault_kind::hang ? hangs_ : losses_);
    counter.fetch_add(1, std::memory_order_relaxed);
  }

 protected:
  result<std::unique_ptr<arena>> do_create_arena(std::size_t bytes, std::optional<memory_class> cls) override;
  result<std::unique_ptr<kernel>> do_create_kernel(const kernel_source& source) override;
  result<gpu::image_requirements> do_image_requirements(const image_spec& spec) override;
  result<std::unique_ptr<image_view>> do_create_image_view(const image& img, const image_subresources& range) override;
  result<std::unique_ptr<image_memory>> do_create_image_memory(std::span<const placed_image> images,
                                                               std::uint64_t bytes) override;
  result<std::unique_ptr<command_list>> do_create_command_list(queue_kind kind, list_stages stages) override;
  result<std::unique_ptr<semaphore>> do_create_semaphore(semaphore_kind kind) override;
  result<std::unique_ptr<event>> do_create_event() override;
  result<std::unique_ptr<timestamp_pool>> do_create_timestamp_pool(std::uint32_t slots, timestamp_clock&) override;

 private:
  void stop() noexcept;
  void report(error_report& into, std::string what) noexcept;

  null_device_options options_;
  std::vector<std::unique_ptr<null_queue>> queues_;

  std::atomic<std::uint64_t> delays_{0};
  std::atomic<std::uint64_t> hangs_{0};
  std::atomic<std::uint64_t> losses_{0};

  // Guards both reports.
  mutable std::mutex layout_mutex_;
  image_layout_report layout_errors_;
  barrier_access_report access_errors_;
};

}  // namespace ferrum::gpu::null_detail
