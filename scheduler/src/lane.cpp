// lane.cpp — a lane's contents as its holder reads them, and the handle a
// holder records through (held_lane.hpp; its give-back is the lane pool's,
// lane_pool.cpp).
#include "lane.hpp"

#include <algorithm>
#include <string>

namespace ferrum {

gpu::arena_range lane_contents::range(std::uint64_t offset, std::uint64_t size) const noexcept {
  for (std::size_t c = 0; c < memory_.size(); ++c) {
    if (memory_[c] == nullptr || offset < window_begin_[c]) continue;
    const std::uint64_t at = offset - window_begin_[c];
    if (at <= memory_[c]->size() && size <= memory_[c]->size() - at)
      return memory_[c]->range(static_cast<std::size_t>(at), static_cast<std::size_t>(size));
  }
  return {};
}

std::uint64_t detail::last_submitted(const lane& l) noexcept {
  // The lists know their own last value, so a holder that submitted them
  // without recording it cannot have the lane reused too early. Values are
  // the compute queue's: a wave whose lists also ran on another queue joined
  // them there, and its recorded value is the join's (submission_plan.hpp).
  std::uint64_t last = l.submitted_value;
  for (const gpu::command_list* list : l.contents.all_lists())
    if (list->submitted_queue() == &list->device().queue()) last = std::max(last, list->submitted_value());
  return last;
}

held_lane::held_lane(detail::lane& l) noexcept
    : pool_(l.owner),
      lane_(&l),
      contents_(&l.contents),
      hold_(l.hold.load(std::memory_order_relaxed)),
      index_(l.index) {}

held_lane& held_lane::operator=(held_lane&& other) noexcept {
  if (this != &other) {
    (void)give_back(lane_return::after_fence);
    pool_ = other.pool_;
    lane_ = other.lane_;
    contents_ = other.contents_;
    hold_ = other.hold_;
    index_ = other.index_;
    other.forget();
  }
  return *this;
}

result<void> held_lane::check_held(const char* action) const {
  if (lane_ == nullptr) return make_error(errc::lane_not_held, std::string(action) + " through an empty lane handle");
  // A hand-out that is over: the lane's lists may be a later holder's now.
  if (const std::uint64_t current = lane_->hold.load(std::memory_order_relaxed); current != hold_)
    return make_error(errc::lane_not_held, std::string(action) + " lane " + std::to_string(index_) +
                                               " under hand-out " + std::to_string(hold_) +
                                               ", which is over (hand-out " + std::to_string(current) +
                                               " is the latest)");
  return {};
}

result<void> held_lane::record_submission(const lane_submission& s) noexcept {
  if (auto current = check_held("recording a submission into"); !current) return current;
  lane_->submitted_value = std::max(lane_->submitted_value, s.value);
  if (s.wave != 0) lane_->previous_wave = s.wave;
  lane_->recorded = s.replayable;
  lane_->covers_lists = s.wave != 0;
  return {};
}

bool held_lane::take_recording(bool replay) noexcept {
  if (lane_ == nullptr) return false;
  lane_->recorded = replay && lane_->recorded;
  return lane_->recorded;
}

std::uint64_t held_lane::previous_wave() const noexcept { return lane_ != nullptr ? lane_->previous_wave : 0; }

std::uint64_t held_lane::last_submitted() const noexcept {
  return lane_ != nullptr ? detail::last_submitted(*lane_) : 0;
}

}  // namespace ferrum
