// ferrum/scheduler/detail/lane_waiter.hpp — a queued request for a lane
// (internal: what async_acquire's operation and a wave wait as).
#pragma once

#include <boost/system/error_code.hpp>

namespace ferrum {

class held_lane;

namespace detail {

// Intrusive: it lives in its waiter. `handed` is called once, outside the
// lane pool's lock, with the lane or an error (all_lanes_quarantined, the
// code the lane pool was closed with, the device's when a lane made for it
// failed).
struct lane_waiter {
  using handed_fn = void (*)(lane_waiter* w, boost::system::error_code ec, held_lane l) noexcept;
  explicit lane_waiter(handed_fn on_handed) noexcept : handed(on_handed) {}
  handed_fn handed;
  lane_waiter* next = nullptr;
};

}  // namespace detail
}  // namespace ferrum
