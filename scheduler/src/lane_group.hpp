// lane_group (private) — the lane pools of one bucket on a scheduler's
// devices, one pool per device, serving one queue of waves.
//
// A wave takes the lane that has been free longest, on any device; when none
// is free it waits, first come, first served, for the first lane that frees
// on any of them: a wave goes to the device whose lane of its bucket frees
// first. A pool's own waiters (async_acquire on that pool) go first on its
// own lanes. Every pool of the group takes the group's lock, so a free lane
// and the queue it would serve are always seen together.
//
// A lost device's pool serves the group no more: its free lanes are passed
// over and its lanes that come back stay with it (its own waiters may still
// take them). Waiters fail with all_lanes_quarantined once no pool can serve
// them (each lost, or with every lane quarantined), and with the group's
// close code after close().
#pragma once

#include "ferrum/scheduler/lane_pool.hpp"

#include <boost/system/error_code.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

namespace ferrum::detail {

class lane_group {
 public:
  // Joins `pools` (one bucket's, on different devices; none in another
  // group, none used yet): cold. The group must outlive them.
  explicit lane_group(std::vector<lane_pool*> pools);
  lane_group(const lane_group&) = delete;
  lane_group& operator=(const lane_group&) = delete;

  [[nodiscard]] const compiled_bucket& bucket() const noexcept { return pools_.front()->bucket(); }
  [[nodiscard]] std::span<lane_pool* const> pools() const noexcept { return pools_; }

  // As lane_pool::acquire, over every pool of the group.
  [[nodiscard]] lane* acquire(lane_pool::waiter& w, boost::system::error_code& ec,
                              const std::atomic<bool>* cancelled = nullptr);
  // Removes a queued waiter; false when it was not queued (granted already).
  [[nodiscard]] bool cancel(lane_pool::waiter& w) noexcept;
  // Fails every queued and later waiter with `ec`; the pools are closed by
  // their owner.
  void close(boost::system::error_code ec);

 private:
  friend class ferrum::lane_pool;

  // With mutex_ held: the group's count of frees, for a lane freed now.
  [[nodiscard]] std::uint64_t tick_locked() noexcept { return ++frees_; }
  // With mutex_ held: the first waiter, taken off (nullptr: none).
  [[nodiscard]] lane_pool::waiter* pop_locked() noexcept { return waiters_.pop(); }
  // With mutex_ held: when no lane can come any more (closed, or every pool
  // hopeless), detaches every waiter, to be failed with `ec` after unlocking.
  [[nodiscard]] lane_pool::waiter* detach_if_hopeless_locked(boost::system::error_code& ec) noexcept;
  [[nodiscard]] bool hopeless_locked() const noexcept;
  [[nodiscard]] std::size_t waiting_locked() const noexcept { return waiters_.size(); }

  std::mutex mutex_;
  std::vector<lane_pool*> pools_;
  lane_pool::waiter_queue waiters_;
  boost::system::error_code closed_;
  std::uint64_t frees_ = 0;
};

}  // namespace ferrum::detail
