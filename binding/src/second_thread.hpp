// second_thread — runs a stage of compile beside the caller, on a thread of
// its own only where the stage is big enough to pay for one.
//
// Starting and joining a std::async thread costs tens of microseconds (clone,
// a stack, waking it on a core that may be busy), more than a whole small
// plan's stage: below the threshold the stage runs inline, when its result is
// asked for.
//
//   auto hash = ferrum::detail::beside(ferrum::detail::worth_a_thread(estimate_ns),
//                                      [&] { return hash_plan(p, index); });
//   ...
//   const result<plan_hash> h = hash.get();
#pragma once

#include <cstdint>
#include <future>
#include <utility>

namespace ferrum::detail {

// Whether a stage of about `work_ns` nanoseconds is worth a thread: starting
// and joining one measured 30-110 us on 2 cores (ferrum_bench_compile), so
// only stages of more than about three times that go to one.
[[nodiscard]] constexpr bool worth_a_thread(std::uint64_t work_ns) noexcept { return work_ns >= 300'000; }

// `f` on a second thread when `worth_it` (inline where no thread can be
// made: libstdc++ honours the deferred flag then), otherwise deferred to the
// future's get(). Either way the future joins on every path.
template <class F>
[[nodiscard]] auto beside(bool worth_it, F&& f) {
  return std::async(worth_it ? std::launch::async | std::launch::deferred : std::launch::deferred, std::forward<F>(f));
}

}  // namespace ferrum::detail
