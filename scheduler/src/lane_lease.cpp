#include "ferrum/scheduler/lane_lease.hpp"

#include <algorithm>
#include <string>

namespace ferrum {

result<std::uint64_t> lane_lease::submit(std::span<gpu::command_list* const> lists) {
  if (lane_ == nullptr) return make_error(errc::lane_not_held, "submitting through an empty lane lease");
  // A lease whose lane went back through the pool: the lane's lists may be
  // a later holder's now.
  if (const std::uint64_t current = lane_->hold.load(std::memory_order_relaxed); current != hold_)
    return make_error(errc::lane_not_held, "submitting through a lease of lane " + std::to_string(lane_->index) +
                                               " under hand-out " + std::to_string(hold_) +
                                               ", which is over (the lane was given back; hand-out " +
                                               std::to_string(current) + " is the latest)");
  for (std::size_t i = 0; i < lists.size(); ++i) {
    if (std::find(lane_->all_lists.begin(), lane_->all_lists.end(), lists[i]) == lane_->all_lists.end())
      return make_error(errc::foreign_object, "list " + std::to_string(i) + " of the submission is not one of lane " +
                                                  std::to_string(lane_->index) + "'s");
  }
  auto value = pool_->device().queue().submit_next(lists);
  if (!value) return value.error();
  lane_->submitted_value = *value;
  return *value;
}

void lane_lease::reset() noexcept {
  if (lane_ == nullptr) return;
  // Reached: straight back (a waiter may have it). Not yet: the fence watch
  // returns it once reached. Refused (lane_not_held) only for a hand-out
  // that is over, whose lane is not this lease's to give back any more.
  (void)pool_->release_when_reached(*lane_, hold_);
  forget();
}

}  // namespace ferrum
