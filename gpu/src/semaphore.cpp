#include "ferrum/gpu/semaphore.hpp"

#include "ferrum/gpu/device.hpp"

#include <string>

namespace ferrum::gpu {

std::string_view to_string(semaphore_kind kind) noexcept {
  return kind == semaphore_kind::binary ? "binary" : "timeline";
}

std::string_view to_string(sync_stage stage) noexcept {
  switch (stage) {
    case sync_stage::compute:
      return "compute";
    case sync_stage::transfer:
      return "transfer";
    case sync_stage::all:
      break;
  }
  return "all";
}

namespace {

result<void> check_value(semaphore_kind kind, std::uint64_t value, std::string_view what) {
  if (kind == semaphore_kind::binary && value != 0)
    return make_error(errc::invalid_semaphore_op,
                      std::string(what) + ": value " + std::to_string(value) + " on a binary semaphore, which takes 0");
  if (kind == semaphore_kind::timeline && value == 0)
    return make_error(errc::invalid_semaphore_op, std::string(what) + ": value 0 on a timeline semaphore");
  return {};
}

}  // namespace

result<void> check_semaphore_op(const semaphore_op& op, const gpu::device& owner, std::string_view role,
                                std::size_t index) {
  const std::string what = std::string(role) + " " + std::to_string(index);
  if (op.on == nullptr) return make_error(errc::invalid_semaphore_op, what + " names no semaphore");
  if (&op.on->device() != &owner) return make_error(errc::foreign_object, what + " is on a semaphore of another device");
  return check_value(op.on->kind(), op.value, what);
}

result<void> semaphore::signal_from_host(std::uint64_t value) {
  if (auto r = check_value(kind_, value, "host signal"); !r) return r;
  return do_signal_from_host(value);
}

result<std::uint64_t> semaphore::value() const { return do_value(); }

result<bool> semaphore::wait_from_host(std::uint64_t value, std::chrono::nanoseconds timeout) const {
  return do_wait_from_host(value, timeout);
}

}  // namespace ferrum::gpu
