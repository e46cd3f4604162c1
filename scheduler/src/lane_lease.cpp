#include "ferrum/scheduler/lane_lease.hpp"

#include <algorithm>
#include <string>

namespace ferrum {

result<std::uint64_t> lane_lease::submit(std::span<gpu::command_list* const> lists) {
  if (lane_ == nullptr) return make_error(errc::lane_not_held, "submitting through an empty lane lease");
  for (std::size_t i = 0; i < lists.size(); ++i) {
    if (std::find(lane_->submit_lists.begin(), lane_->submit_lists.end(), lists[i]) == lane_->submit_lists.end())
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
  // returns it once reached. Cannot fail for a lane this lease holds.
  (void)pool_->release_when_reached(*lane_);
  forget();
}

}  // namespace ferrum
