#include "ferrum/scheduler/lane_lease.hpp"

#include "ferrum/scheduler/lane_pool.hpp"

#include <algorithm>
#include <string>

namespace ferrum {

result<std::uint64_t> lane_lease::submit(std::span<gpu::command_list* const> lists) {
  if (auto held = held_.check_held("submitting through a lease of"); !held) return held.error();
  const std::span<gpu::command_list* const> own = held_->all_lists();
  for (std::size_t i = 0; i < lists.size(); ++i) {
    if (std::find(own.begin(), own.end(), lists[i]) == own.end())
      return make_error(errc::foreign_object, "list " + std::to_string(i) + " of the submission is not one of lane " +
                                                  std::to_string(held_.index()) + "'s");
  }
  auto value = held_.pool()->device().queue().submit_next(lists);
  if (!value) return value.error();
  if (auto recorded = held_.record_submission({*value}); !recorded) return recorded.error();
  return *value;
}

result<std::uint64_t> lane_lease::submit() {
  return submit(held_ ? held_->all_lists() : std::span<gpu::command_list* const>{});
}

}  // namespace ferrum
