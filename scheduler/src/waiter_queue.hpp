// waiter_queue.hpp (private) — lane pool waiters, first come, first served.
#pragma once

#include "ferrum/scheduler/detail/lane_waiter.hpp"

#include <cstddef>

namespace ferrum::detail {

// Intrusive (allocates nothing): waiters link through `next`. Not
// thread-safe: its owner's lock guards it.
class waiter_queue {
 public:
  using waiter = lane_waiter;

  void push(waiter& w) noexcept {
    w.next = nullptr;
    (tail_ != nullptr ? tail_->next : head_) = &w;
    tail_ = &w;
    ++size_;
  }

  // Removes `w`; false when it is not queued.
  [[nodiscard]] bool remove(waiter& w) noexcept {
    waiter* previous = nullptr;
    for (waiter* at = head_; at != nullptr; previous = at, at = at->next) {
      if (at != &w) continue;
      (previous != nullptr ? previous->next : head_) = at->next;
      if (tail_ == at) tail_ = previous;
      --size_;
      return true;
    }
    return false;
  }

  // The first waiter, taken off; nullptr when none waits.
  [[nodiscard]] waiter* pop() noexcept {
    waiter* first = head_;
    if (first == nullptr) return nullptr;
    head_ = first->next;
    if (head_ == nullptr) tail_ = nullptr;
    --size_;
    return first;
  }

  // Every waiter, taken off, as a list linked through `next`.
  [[nodiscard]] waiter* take_all() noexcept {
    waiter* all = head_;
    head_ = tail_ = nullptr;
    size_ = 0;
    return all;
  }

  [[nodiscard]] bool empty() const noexcept { return head_ == nullptr; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  waiter* head_ = nullptr;
  waiter* tail_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace ferrum::detail
