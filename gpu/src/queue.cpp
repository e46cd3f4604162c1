#include "ferrum/gpu/queue.hpp"

#include "ferrum/gpu/command_list.hpp"
#include "ferrum/gpu/device.hpp"

#include <string>

namespace ferrum::gpu {

std::uint64_t queue::last_submitted() const noexcept {
  const std::lock_guard lock(mutex_);
  return last_submitted_;
}

result<void> queue::submit(std::span<command_list* const> lists, std::uint64_t signal_value) {
  const std::lock_guard lock(mutex_);
  return submit_locked(lists, signal_value);
}

result<std::uint64_t> queue::submit_next(std::span<command_list* const> lists) {
  const std::lock_guard lock(mutex_);
  const std::uint64_t value = last_submitted_ + 1;
  if (auto r = submit_locked(lists, value); !r) return r.error();
  return value;
}

result<void> queue::submit_locked(std::span<command_list* const> lists, std::uint64_t signal_value) {
  if (const auto failure = timeline_.failure())
    return make_error(failure == make_error_code(errc::device_shut_down) ? errc::device_shut_down : errc::device_lost,
                      "submit of value " + std::to_string(signal_value));
  if (signal_value <= last_submitted_)
    return make_error(errc::timeline_not_monotonic,
                      "signal value " + std::to_string(signal_value) + " after " + std::to_string(last_submitted_));
  // Each list is marked queued as it passes its checks, so a list given twice
  // fails on its second appearance; on any error the marks are undone.
  auto undo = [&](std::size_t marked) {
    for (std::size_t i = 0; i < marked; ++i) lists[i]->state_ = command_list::state::executable;
  };
  for (std::size_t i = 0; i < lists.size(); ++i) {
    command_list& list = *lists[i];
    const char* problem = nullptr;
    errc code = errc::ok;
    if (&list.device() != device_) {
      code = errc::foreign_object;
      problem = "belongs to another device";
    } else if (list.state_ == command_list::state::queued) {
      code = errc::command_list_state;
      problem = "appears twice";
    } else if (list.state_ == command_list::state::submitted && !timeline_.reached(list.submitted_value_)) {
      code = errc::command_list_in_flight;
      problem = "is still in flight";
    } else if (!list.executable()) {
      code = errc::command_list_state;
      problem = "is not ended";
    }
    if (code != errc::ok) {
      undo(i);
      return make_error(code, "list " + std::to_string(i) + " of the submission " + problem);
    }
    list.state_ = command_list::state::queued;
  }
  // Marked submitted before the device has them: a device may reach the
  // value inside do_submit (the null device's inline_completion) or on its
  // own thread at once, and a waiter woken then may use the lists.
  for (command_list* list : lists) {
    list->previous_value_ = list->submitted_value_;
    list->submitted_value_ = signal_value;
    list->state_ = command_list::state::submitted;
  }
  if (auto r = do_submit(lists, signal_value); !r) {
    for (command_list* list : lists) list->submitted_value_ = list->previous_value_;
    undo(lists.size());
    return r;
  }
  last_submitted_ = signal_value;
  return {};
}

}  // namespace ferrum::gpu
