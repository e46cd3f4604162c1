#include "ferrum/gpu/queue.hpp"

#include "ferrum/gpu/command_list.hpp"
#include "ferrum/gpu/device.hpp"

#include <algorithm>
#include <string>

namespace ferrum::gpu {

result<void> queue::submit(std::span<command_list* const> lists, std::uint64_t signal_value,
                           std::span<const queue_wait> waits, const external_sync& external) {
  const std::lock_guard lock(mutex_);
  return submit_locked(lists, signal_value, waits, external);
}

result<std::uint64_t> queue::submit_next(std::span<command_list* const> lists, std::span<const queue_wait> waits,
                                         const external_sync& external) {
  const std::lock_guard lock(mutex_);
  const std::uint64_t value = last_submitted_.load(std::memory_order_relaxed) + 1;
  if (auto r = submit_locked(lists, value, waits, external); !r) return r.error();
  return value;
}

result<void> queue::check_waits(std::span<const queue_wait> waits) {
  waits_.clear();
  for (std::size_t i = 0; i < waits.size(); ++i) {
    const queue_wait& w = waits[i];
    if (w.on == nullptr || &w.on->device() != device_)
      return make_error(errc::foreign_object, "wait " + std::to_string(i) + " of the submission is on " +
                                                  (w.on == nullptr ? "no queue" : "a queue of another device"));
    // Read without the other queue's lock (its last_submitted_ is atomic):
    // taking it here, under this queue's lock, would deadlock against a
    // submission there that waits on this queue. A value submitted there
    // concurrently and not yet published is refused, as if it came later.
    const std::uint64_t submitted = w.on->last_submitted();
    if (w.value > submitted)
      return make_error(errc::wait_not_submitted, "wait " + std::to_string(i) + " on value " + std::to_string(w.value) +
                                                      " of the " + std::string(to_string(w.on->kind())) +
                                                      " queue (index " + std::to_string(w.on->index()) +
                                                      "), whose last submitted is " + std::to_string(submitted));
    if (w.value == 0) continue;
    // One wait per queue, on the highest value: a timeline reaching it has
    // reached every lower one.
    auto same = std::find_if(waits_.begin(), waits_.end(), [&](const queue_wait& m) { return m.on == w.on; });
    if (same == waits_.end()) {
      waits_.push_back(w);
    } else {
      same->value = std::max(same->value, w.value);
    }
  }
  return {};
}

result<void> queue::submit_locked(std::span<command_list* const> lists, std::uint64_t signal_value,
                                  std::span<const queue_wait> waits, const external_sync& external) {
  if (const auto failure = timeline_.failure())
    return make_error(failure == make_error_code(errc::device_shut_down) ? errc::device_shut_down : errc::device_lost,
                      "submit of value " + std::to_string(signal_value));
  const std::uint64_t last = last_submitted_.load(std::memory_order_relaxed);
  if (signal_value <= last)
    return make_error(errc::timeline_not_monotonic,
                      "signal value " + std::to_string(signal_value) + " after " + std::to_string(last));
  if (auto r = check_waits(waits); !r) return r;
  for (std::size_t i = 0; i < external.waits.size(); ++i) {
    if (auto r = check_semaphore_op(external.waits[i], *device_, "semaphore wait", i); !r) return r;
    // Only a queue with graphics has the stage (the compute queue of a
    // device whose family has graphics).
    if (external.waits[i].stage == sync_stage::color_attachment_output &&
        (kind_ != queue_kind::compute || !device_->limits().graphics))
      return make_error(errc::invalid_semaphore_op,
                        "semaphore wait " + std::to_string(i) + " at color-attachment-output on the " +
                            std::string(to_string(kind_)) + " queue, which " +
                            (device_->limits().graphics ? "is not the one with graphics" : "has no graphics"));
  }
  for (std::size_t i = 0; i < external.signals.size(); ++i)
    if (auto r = check_semaphore_op(external.signals[i], *device_, "semaphore signal", i); !r) return r;
  // Each list is marked queued as it passes its checks, so a list given twice
  // fails on its second appearance; on any error the marks are undone.
  auto undo = [&](std::size_t marked) {
    for (std::size_t i = 0; i < marked; ++i) lists[i]->state_ = command_list::state::executable;
  };
  for (std::size_t i = 0; i < lists.size(); ++i) {
    command_list& list = *lists[i];
    const char* problem = nullptr;
    std::string mismatch;
    errc code = errc::ok;
    if (&list.device() != device_) {
      code = errc::foreign_object;
      problem = "belongs to another device";
    } else if (list.state_ == command_list::state::queued) {
      code = errc::command_list_state;
      problem = "appears twice";
    } else if (list.state_ == command_list::state::submitted &&
               !list.submitted_on_->timeline().reached(list.submitted_value_)) {
      code = errc::command_list_in_flight;
      problem = "is still in flight";
    } else if (!list.executable()) {
      code = errc::command_list_state;
      problem = "is not ended";
    } else if (&device_->queue(list.kind()) != this) {
      // A Vulkan list is recorded for one queue family and may run only on
      // queues of it; the null device follows the same rule, so that what
      // runs there runs on a GPU with a queue per kind too.
      code = errc::queue_mismatch;
      mismatch = "was made for the " + std::string(to_string(list.kind())) + " queue";
      problem = mismatch.c_str();
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
    list->previous_on_ = list->submitted_on_;
    list->submitted_value_ = signal_value;
    list->submitted_on_ = this;
    list->state_ = command_list::state::submitted;
  }
  if (auto r = do_submit(lists, signal_value, waits_, external); !r) {
    for (command_list* list : lists) {
      list->submitted_value_ = list->previous_value_;
      list->submitted_on_ = list->previous_on_;
    }
    undo(lists.size());
    return r;
  }
  // Release: a submission to another queue that reads this value and waits
  // on it finds the device's part of this submission done.
  last_submitted_.store(signal_value, std::memory_order_release);
  return {};
}

}  // namespace ferrum::gpu
