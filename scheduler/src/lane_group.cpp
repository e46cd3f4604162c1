#include "lane_group.hpp"

#include <algorithm>

namespace ferrum::detail {

lane_group::lane_group(std::vector<lane_pool*> pools) : pools_(std::move(pools)) {
  for (lane_pool* pool : pools_) {
    pool->group_ = this;
    pool->mutex_ = &mutex_;
    pool->freed_at_.assign(pool->lanes().size(), 0);
  }
}

lane* lane_group::acquire(lane_pool::waiter& w, boost::system::error_code& ec, const std::atomic<bool>* cancelled) {
  const std::lock_guard lock(mutex_);
  if (lane_pool::refused(closed_, cancelled, ec)) return nullptr;
  // With a free lane nobody waits (frees hand lanes over directly): the
  // newcomer takes the lane free longest, whichever device it is on.
  lane_pool* from = nullptr;
  for (lane_pool* pool : pools_) {
    if (pool->free_.empty() || pool->device_->lost()) continue;
    if (from == nullptr || pool->freed_at_[pool->free_.front()->index] < from->freed_at_[from->free_.front()->index])
      from = pool;
  }
  if (from != nullptr) return from->take_free_locked();
  if (hopeless_locked()) {
    ec = make_error_code(errc::all_lanes_quarantined);
    return nullptr;
  }
  waiters_.push(w);
  return nullptr;
}

bool lane_group::cancel(lane_pool::waiter& w) noexcept {
  const std::lock_guard lock(mutex_);
  return waiters_.remove(w);
}

void lane_group::close(boost::system::error_code ec) {
  lane_pool::waiter* all = nullptr;
  {
    const std::lock_guard lock(mutex_);
    if (!closed_) closed_ = ec;
    all = detach_if_hopeless_locked(ec);
  }
  lane_pool::fail_all(all, ec);
}

bool lane_group::hopeless_locked() const noexcept {
  return closed_ ||
         std::none_of(pools_.begin(), pools_.end(), [](const lane_pool* p) { return p->serves_group_locked(); });
}

lane_pool::waiter* lane_group::detach_if_hopeless_locked(boost::system::error_code& ec) noexcept {
  if (waiters_.empty() || !hopeless_locked()) return nullptr;
  ec = closed_ ? closed_ : make_error_code(errc::all_lanes_quarantined);
  return waiters_.take_all();
}

}  // namespace ferrum::detail
