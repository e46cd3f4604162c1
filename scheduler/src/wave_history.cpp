// wave_history.cpp — a wave's part in its program's history (docs/design.md,
// "History"): the copies its turn gives it, and the turn handed on; the
// turn itself is awaited in the coroutine (wave_impl.cpp, awaiting_turn).
#include "program_lanes.hpp"
#include "wave_impl.hpp"

#include <string>
#include <utility>

namespace ferrum::detail {

using boost::system::error_code;

namespace {

// The bucket's index in its program (the history store's buckets).
std::size_t index_of(const program_lanes& program, const compiled_bucket* bucket) noexcept {
  return static_cast<std::size_t>(bucket - program.program().buckets.data());
}

}  // namespace

error_code wave::take_history() noexcept {
  if (host_.devices().size() != 1) {
    message_ = "bucket " + quote_text(bucket_->id.str()) +
               " has history resources, which a scheduler over several devices cannot keep (each wave may "
               "run on another device)";
    return make_error_code(errc::invalid_wave_request);
  }
  auto grant = program_->history().assign(index_of(*program_, bucket_), bucket_->lane, *device_->device, imports_);
  if (!grant) {
    message_ = "the history's copies: " + grant.error().what();
    return grant.error().code;
  }
  history_ = *grant;
  history_wave_ = grant->previous_wave;
  return {};
}

void wave::settle_history(history_outcome how) noexcept {
  if (!std::exchange(turn_held_, false)) return;
  history_ = {};
  program_->history().settle(index_of(*program_, bucket_), id_, how);
}

void wave::turn_granted(history_waiter* waiter_of) noexcept {
  // Through the executor: the settling wave's stack goes on.
  static_cast<turn_waiter*>(waiter_of)->self->resume_later();
}

}  // namespace ferrum::detail
