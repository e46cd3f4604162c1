#include "ferrum/gpu/device.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <string>

namespace ferrum::gpu {

void device::set_queues(const std::array<gpu::queue*, queue_kind_count>& by_kind) {
  by_kind_ = by_kind;
  // A kind a device names no queue for runs on the compute queue.
  for (gpu::queue*& q : by_kind_)
    if (q == nullptr) q = by_kind_[0];
  queues_.clear();
  for (gpu::queue* q : by_kind_)
    if (std::find(queues_.begin(), queues_.end(), q) == queues_.end()) queues_.push_back(q);
}

bool device::lost() const noexcept {
  return std::any_of(queues_.begin(), queues_.end(),
                     [](const gpu::queue* q) { return q->timeline().failure() == make_error_code(errc::device_lost); });
}

result<void> device::check_usable() const {
  if (lost()) return make_error(errc::device_lost, "device " + quote_text(name_));
  return {};
}

result<std::unique_ptr<arena>> device::create_arena(std::size_t bytes) { return make_arena(bytes, std::nullopt); }

result<std::unique_ptr<arena>> device::create_arena(std::size_t bytes, memory_class cls) {
  return make_arena(bytes, cls);
}

result<std::unique_ptr<arena>> device::make_arena(std::size_t bytes, std::optional<memory_class> cls) {
  if (auto r = check_usable(); !r) return r.error();
  if (cls == memory_class::imported)
    return make_error(errc::invalid_memory_class,
                      "an arena of class 'imported' is an engine's buffer: import it (gpu::import_vulkan_buffer), "
                      "ferrum does not allocate one");
  if (bytes == 0 || bytes > limits_.max_arena_bytes)
    return make_error(errc::invalid_arena_size, std::to_string(bytes) + " bytes; the device allows 1 to " +
                                                    std::to_string(limits_.max_arena_bytes));
  return do_create_arena(bytes, cls);
}

result<std::unique_ptr<kernel>> device::create_kernel(const kernel_source& source) {
  if (auto r = check_usable(); !r) return r.error();
  if (source.push_words > max_kernel_push_words)
    return make_error(errc::push_constants_too_large, "kernel " + quote_text(source.name) + " declares " +
                                                          std::to_string(source.push_words) + " words, at most " +
                                                          std::to_string(max_kernel_push_words));
  const std::string what = "kernel " + quote_text(source.name);
  if (source.local_size_x == 0 || source.local_size_y == 0 ||
      std::uint64_t{source.local_size_x} * source.local_size_y > 1024)
    return make_error(errc::invalid_kernel, what + ": a workgroup of " + std::to_string(source.local_size_x) + " x " +
                                                std::to_string(source.local_size_y) +
                                                " invocations (each at least 1, at most 1024 in all)");
  if (source.primary == kernel_operand_kind::sampled_image)
    return make_error(errc::invalid_kernel, what + ": a sampled image as its primary (a buffer or a storage image)");
  if (source.primary == kernel_operand_kind::buffer && source.local_size_y != 1)
    return make_error(errc::invalid_kernel, what + ": local_size_y " + std::to_string(source.local_size_y) +
                                                " over a buffer primary (which dispatches in x alone)");
  return do_create_kernel(source);
}

result<std::unique_ptr<command_list>> device::create_command_list(queue_kind kind, list_stages stages) {
  if (auto r = check_usable(); !r) return r.error();
  if (stages == list_stages::graphics && (kind != queue_kind::compute || !limits_.graphics))
    return make_error(errc::unsupported_command,
                      "a command list with graphics stages for the " + std::string(to_string(kind)) +
                          " queue of device " + quote_text(name_) + ", which " +
                          (limits_.graphics ? "is not the one with graphics" : "has no queue family with graphics"));
  return do_create_command_list(kind, stages);
}

result<std::unique_ptr<semaphore>> device::create_semaphore(semaphore_kind kind) {
  if (auto r = check_usable(); !r) return r.error();
  return do_create_semaphore(kind);
}

result<std::unique_ptr<event>> device::create_event() {
  if (auto r = check_usable(); !r) return r.error();
  return do_create_event();
}

timestamp_clock device::timestamps() const {
  const std::lock_guard lock(timestamps_mutex_);
  return timestamps_;
}

result<std::unique_ptr<timestamp_pool>> device::create_timestamp_pool(std::size_t slots) {
  if (auto r = check_usable(); !r) return r.error();
  const std::lock_guard lock(timestamps_mutex_);
  if (!timestamps_.supported)
    return make_error(errc::timestamps_unsupported,
                      "device " + quote_text(name_) + ": " + std::string(timestamps_.calibration));
  if (slots == 0 || slots > std::numeric_limits<std::uint32_t>::max())
    return make_error(errc::invalid_device_option,
                      "a timestamp pool of " + std::to_string(slots) + " slots; the device allows 1 to 2^32 - 1");
  return do_create_timestamp_pool(static_cast<std::uint32_t>(slots), timestamps_);
}

result<void> timestamp_pool::read(std::uint32_t first, std::span<time_point> out) const {
  if (first > size_ || out.size() > size_ - first)
    return make_error(errc::range_out_of_bounds, "timestamp slots [" + std::to_string(first) + ", +" +
                                                     std::to_string(out.size()) + ") of a pool of " +
                                                     std::to_string(size_));
  if (out.empty()) return {};
  return do_read(first, out);
}

}  // namespace ferrum::gpu

namespace ferrum::gpu {

void device::retire(std::unique_ptr<arena> a, std::span<const queue_wait> until) {
  retire({{until.begin(), until.end()}, std::move(a), nullptr, nullptr, nullptr});
}

void device::retire(std::unique_ptr<command_list> list, std::span<const queue_wait> until) {
  retire({{until.begin(), until.end()}, nullptr, std::move(list), nullptr, nullptr});
}

void device::retire(std::unique_ptr<timestamp_pool> timestamps, std::span<const queue_wait> until) {
  retire({{until.begin(), until.end()}, nullptr, nullptr, std::move(timestamps), nullptr});
}

void device::retire(std::unique_ptr<arena> a, const gpu::queue& q, std::uint64_t value) {
  const queue_wait until{&q, value};
  retire(std::move(a), std::span(&until, 1));
}

void device::retire(std::unique_ptr<command_list> list, const gpu::queue& q, std::uint64_t value) {
  const queue_wait until{&q, value};
  retire(std::move(list), std::span(&until, 1));
}

void device::retire(std::unique_ptr<timestamp_pool> timestamps, const gpu::queue& q, std::uint64_t value) {
  const queue_wait until{&q, value};
  retire(std::move(timestamps), std::span(&until, 1));
}

void device::retire(std::unique_ptr<arena> a, std::uint64_t value) { retire(std::move(a), queue(), value); }

void device::retire(std::unique_ptr<command_list> list, std::uint64_t value) {
  retire(std::move(list), queue(), value);
}

void device::retire(std::unique_ptr<timestamp_pool> timestamps, std::uint64_t value) {
  retire(std::move(timestamps), queue(), value);
}

void device::retire(std::unique_ptr<retirable> object, std::uint64_t value) {
  retire({{{&queue(), value}}, nullptr, nullptr, nullptr, std::move(object)});
}

void device::retire(retired_object object) {
  std::vector<retired_object> reached;
  {
    const std::lock_guard lock(retired_mutex_);
    retired_.push_back(std::move(object));
    // Each retirement also frees what has become safe, so the list stays as
    // short as the work in flight.
    const auto safe_now = [&](const retired_object& r) {
      return std::all_of(r.until.begin(), r.until.end(), [&](const queue_wait& w) {
        return w.value == 0 || (w.on != nullptr && &w.on->device() == this && w.on->timeline().reached(w.value));
      });
    };
    auto safe =
        std::stable_partition(retired_.begin(), retired_.end(), [&](const retired_object& r) { return !safe_now(r); });
    std::move(safe, retired_.end(), std::back_inserter(reached));
    retired_.erase(safe, retired_.end());
  }
}

void device::release_retired() noexcept {
  const std::lock_guard lock(retired_mutex_);
  retired_.clear();
}

}  // namespace ferrum::gpu
