#include "ferrum/gpu/timeline.hpp"

#include "ferrum/error.hpp"

#include <cassert>

namespace ferrum::gpu {

boost::system::error_code timeline::failure() const noexcept {
  if (!failed_.load(std::memory_order_acquire)) return {};
  const std::lock_guard lock(mutex_);
  return failure_;
}

std::optional<std::uint64_t> timeline::lowest_pending() const noexcept {
  const std::lock_guard lock(mutex_);
  if (head_ == nullptr) return std::nullopt;
  return head_->value;
}

std::size_t timeline::pending() const noexcept {
  const std::lock_guard lock(mutex_);
  return pending_;
}

boost::system::error_code timeline::start_wait(timeline_wait* wait) noexcept {
  boost::system::error_code failed;
  // Once linked and unlocked the wait may complete and be freed at any moment,
  // so what is needed afterwards is copied first.
  const std::uint64_t value = wait->value;
  bool new_lowest = false;
  {
    const std::lock_guard lock(mutex_);
    // A wait pending on another timeline is read under this one's lock: the
    // misuse is caught where the two do not race (both ends on one thread).
    assert(!wait->pending && "timeline_wait started while pending");
    if (wait->pending) return make_error_code(errc::wait_already_pending);
    if (completed_.load(std::memory_order_relaxed) >= value) {
      // Reached already — before any failure, so the GPU work behind it is
      // done: success, completed below, outside the lock.
    } else if (failure_) {
      failed = failure_;
    } else {
      // Waits are few (one per wave in flight), so an ordered list is cheaper
      // than a heap and keeps advance() a prefix cut.
      timeline_wait** link = &head_;
      while (*link != nullptr && (*link)->value <= value) link = &(*link)->next;
      wait->next = *link;
      wait->pending = true;
      *link = wait;
      ++pending_;
      new_lowest = head_ == wait;
      wait = nullptr;
    }
  }
  if (wait != nullptr) {
    wait->complete(wait, failed);
  } else if (new_lowest) {
    on_new_lowest(value);
  }
  return {};
}

bool timeline::cancel_wait(timeline_wait* wait) noexcept {
  const std::lock_guard lock(mutex_);
  for (timeline_wait** link = &head_; *link != nullptr; link = &(*link)->next) {
    if (*link == wait) {
      *link = wait->next;
      wait->next = nullptr;
      wait->pending = false;
      --pending_;
      return true;
    }
  }
  return false;
}

void timeline::advance(std::uint64_t value) noexcept {
  timeline_wait* reached = nullptr;
  {
    const std::lock_guard lock(mutex_);
    if (value <= completed_.load(std::memory_order_relaxed)) return;
    // Release: whoever reads completed() >= value also sees what the device
    // did before reaching it.
    completed_.store(value, std::memory_order_release);
    timeline_wait** link = &head_;
    while (*link != nullptr && (*link)->value <= value) {
      (*link)->pending = false;
      link = &(*link)->next;
      --pending_;
    }
    if (link != &head_) {
      reached = head_;
      head_ = *link;
      *link = nullptr;
    }
  }
  complete_all(reached, {});
}

void timeline::fail(boost::system::error_code ec) noexcept {
  timeline_wait* all = nullptr;
  {
    const std::lock_guard lock(mutex_);
    if (!failure_) failure_ = ec;
    failed_.store(true, std::memory_order_release);
    all = head_;
    for (timeline_wait* w = all; w != nullptr; w = w->next) w->pending = false;
    head_ = nullptr;
    pending_ = 0;
    ec = failure_;
  }
  complete_all(all, ec);
}

void timeline::complete_all(timeline_wait* list, boost::system::error_code ec) noexcept {
  while (list != nullptr) {
    timeline_wait* wait = list;
    // Read the link first: completing may free the wait (on another thread).
    list = wait->next;
    wait->complete(wait, ec);
  }
}

}  // namespace ferrum::gpu
