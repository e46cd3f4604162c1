// ferrum/gpu/detail/wait_op.hpp — the type-erased record of one pending
// timeline wait (internal to async_wait and timeline).
#pragma once

#include <boost/system/error_code.hpp>

#include <cstdint>

namespace ferrum::gpu::detail {

// One pending wait, linked into its timeline's list, which is ordered by value.
// `complete` is called exactly once, from any thread, after the op has left the
// list; it must hand the completion to the waiter's executor and never run the
// waiter's code inline.
struct wait_op {
  using complete_fn = void (*)(wait_op* op, boost::system::error_code ec) noexcept;

  wait_op(std::uint64_t wait_value, complete_fn on_complete) noexcept
      : value(wait_value), complete(on_complete) {}

  std::uint64_t value;
  complete_fn complete;
  wait_op* next = nullptr;
};

}  // namespace ferrum::gpu::detail
