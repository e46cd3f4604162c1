// wave_sync.cpp — a wave's engine semaphores: kept from the request, passed on when the wave did not submit them.
#include "wave_impl.hpp"

#include <new>
#include <span>
#include <string>
#include <utility>

namespace ferrum::detail {

namespace {

// `set`'s semaphores while it is still to be submitted, none once it was;
// marks it submitted.
std::span<const gpu::semaphore_op> take_unpassed(const copied_semaphores& set, bool& passed) noexcept {
  if (std::exchange(passed, true)) return {};
  return set.ops;
}

}  // namespace

void wave::keep_sync(const copied_request* sync) noexcept {
  waits_ = sync != nullptr ? sync->wait() : copied_semaphores();
  signals_ = sync != nullptr ? sync->signal() : copied_semaphores();
  waits_passed_ = false;
  signals_passed_ = false;
}

void wave::pass_on() noexcept {
  const gpu::external_sync left{take_unpassed(waits_, waits_passed_), take_unpassed(signals_, signals_passed_)};
  if (left.empty()) return;
  // The lane's device, or the one the semaphores were checked against (a
  // scheduler with semaphores has one device).
  gpu::device& d = device_ != nullptr ? *device_->device : *host_.devices().front().device;
  if (auto r = d.queue().submit_next({}, {}, left); !r) {
    // A lost or shut down device: nothing more runs on it, the engine's
    // semaphores with it. Said in the report.
    try {
      if (!message_.empty()) message_ += "; ";
      message_ += "the wave's semaphores could not be passed on: " + r.error().what();
    } catch (const std::bad_alloc&) {
      // The wave's code still says what failed.
    }
  }
}

}  // namespace ferrum::detail
