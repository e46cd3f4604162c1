// held_lanes.hpp — lanes held through the raw door async_acquire uses
// (detail::acquire_lane), and forged handles, for tests of the lane pool's
// hand-outs and of the checks inside every held_lane.
#pragma once

#include "ferrum/scheduler/lane_pool.hpp"

#include <boost/system/error_code.hpp>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ferrum::detail {

// A second handle of a hand-out (held_lane.hpp befriends this; only tests
// define it): what a holder whose hand-out is over would hold.
struct lane_test_access {
  static held_lane forge(const held_lane& h) { return held_lane(*h.pool_, h.index_, *h.contents_, *h.out_); }
};

}  // namespace ferrum::detail

namespace ferrum::test {

// A waiter that records what it was handed, and in which order.
struct recording_waiter : ferrum::detail::lane_waiter {
  recording_waiter(std::vector<int>& order, int number)
      : ferrum::detail::lane_waiter(&on_handed), order_(&order), number_(number) {}
  static void on_handed(ferrum::detail::lane_waiter* w, boost::system::error_code ec, ferrum::held_lane l) noexcept {
    auto* self = static_cast<recording_waiter*>(w);
    self->ec = ec;
    self->handed = std::move(l);
    self->order_->push_back(self->number_);
  }
  boost::system::error_code ec;
  ferrum::held_lane handed;

 private:
  std::vector<int>* order_;
  int number_;
};

// `w` asks `pool` for a lane: the lane, or an empty handle (queued, or `ec` set).
inline ferrum::held_lane acquire(ferrum::lane_pool& pool, recording_waiter& w, boost::system::error_code& ec) {
  return ferrum::detail::acquire_lane(pool, w, ec);
}

// Every lane of `pool`, held, at its index: for tests that look into lanes
// between waves. A lane that is not free (or not made) stays an empty handle.
inline std::vector<ferrum::held_lane> hold_every_lane(ferrum::lane_pool& pool) {
  std::vector<ferrum::held_lane> held(pool.counts().capacity);
  std::vector<int> order;
  for (std::size_t i = 0; i < held.size(); ++i) {
    recording_waiter w(order, 0);
    boost::system::error_code ec;
    ferrum::held_lane l = acquire(pool, w, ec);
    if (!l) {
      (void)ferrum::detail::cancel_acquire(pool, w);
      continue;
    }
    const std::uint32_t index = l.index();
    held[index] = std::move(l);
  }
  return held;
}

// A second handle of `h`'s hand-out.
inline ferrum::held_lane forge(const ferrum::held_lane& h) { return ferrum::detail::lane_test_access::forge(h); }

}  // namespace ferrum::test
