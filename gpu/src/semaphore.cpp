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
    case sync_stage::color_attachment_output:
      return "color-attachment-output";
    case sync_stage::all:
      break;
  }
  return "all";
}

namespace {

// Why `value` does not fit a semaphore of `kind`, or null. Nothing is
// allocated unless it does not: submissions check every semaphore.
const char* value_problem(semaphore_kind kind, std::uint64_t value) noexcept {
  if (kind == semaphore_kind::binary && value != 0) return " on a binary semaphore, which takes 0";
  if (kind == semaphore_kind::timeline && value == 0) return " on a timeline semaphore, which takes a value above 0";
  return nullptr;
}

error value_error(std::string what, std::uint64_t value, const char* problem) {
  return make_error(errc::invalid_semaphore_op, what + ": value " + std::to_string(value) + problem);
}

}  // namespace

result<void> check_semaphore_op(const semaphore_op& op, const gpu::device& owner, std::string_view role,
                                std::size_t index) {
  const auto what = [&] { return std::string(role) + " " + std::to_string(index); };
  if (op.on == nullptr) return make_error(errc::invalid_semaphore_op, what() + " names no semaphore");
  if (&op.on->device() != &owner)
    return make_error(errc::foreign_object, what() + " is on a semaphore of another device");
  if (const char* problem = value_problem(op.on->kind(), op.value)) return value_error(what(), op.value, problem);
  return {};
}

result<void> semaphore::signal_from_host(std::uint64_t value) {
  if (const char* problem = value_problem(kind_, value)) return value_error("host signal", value, problem);
  return do_signal_from_host(value);
}

result<std::uint64_t> semaphore::value() const { return do_value(); }

result<bool> semaphore::wait_from_host(std::uint64_t value, std::chrono::nanoseconds timeout) const {
  return do_wait_from_host(value, timeout);
}

}  // namespace ferrum::gpu
