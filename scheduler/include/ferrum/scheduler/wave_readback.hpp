// ferrum/scheduler/wave_readback.hpp — a wave's lane, kept for reading what
// the wave wrote: the held way to read a wave's output.
//
//   ferrum::wave_readback out;
//   const ferrum::wave_request request{.bucket_class = "step", .extent = {1, 48, 1}, .readback = &out};
//   auto [ec, report] = co_await scheduler.async_submit(request, encode, asio::as_tuple(asio::use_awaitable));
//   if (!ec) use(out.bytes("resource/result").value());   // std::span<const std::byte>
//   out.reset();   // the lane goes back to its pool (or let `out` go)
//
// A wave asked for a readback (wave_request::readback) that completes with
// success does not give its lane back: before its completion handler is
// called, it moves the lane into the readback — its fence reached, its
// readback memory invalidated — and the readback holds it until it is reset,
// destroyed or assigned over (each gives the lane back to its pool at once,
// as lane_return::after_fence). Until then the lane serves no other wave or
// lease, so nothing writes what the wave left in it: with one lane, the next
// wave of the bucket waits for the readback. A wave that fails or is
// cancelled leaves the readback as it was. Read-only: the lane's contents
// are const here (lane_contents hands their arenas and lists out read-only),
// and bytes() gives const bytes. Give a readback up before its scheduler
// goes, as a lease (a lane pool is destroyed with no lane held). The lane
// keeps its replay recording and its last wave: the next wave on it sees
// this one as encode_context::lane_previous_wave.
//
// Thread safety: one thread at a time uses a readback.
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/scheduler/held_lane.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

namespace ferrum {

namespace detail {
class wave;
}  // namespace detail

class wave_readback {
 public:
  // Holds nothing.
  wave_readback() noexcept = default;

  [[nodiscard]] explicit operator bool() const noexcept { return static_cast<bool>(held_); }
  // The wave whose output it holds (0: empty), its lane's number in its
  // pool (wave_report::lane), and the pool.
  [[nodiscard]] std::uint64_t wave() const noexcept { return held_ ? wave_ : 0; }
  [[nodiscard]] std::uint32_t lane() const noexcept { return held_.index(); }
  [[nodiscard]] lane_pool* pool() const noexcept { return held_.pool(); }
  // What the lane holds, read-only (a non-empty readback's).
  [[nodiscard]] const lane_contents& operator*() const noexcept { return *held_; }
  [[nodiscard]] const lane_contents* operator->() const noexcept { return held_.operator->(); }

  // Resource `id`'s host bytes as the wave left them: those of the first
  // node that lists it (lane_contents::find; node_resource::bytes says what
  // they hold). Errors: lane_not_held (an empty readback), unknown_resource
  // (no node lists `id`), no_host_bytes (device memory, which the host
  // never touches).
  [[nodiscard]] result<std::span<const std::byte>> bytes(std::string_view id) const;

  // Gives the lane back (see the top of this file); the readback is then empty.
  void reset() noexcept { (void)held_.give_back(lane_return::after_fence); }

 private:
  friend class detail::wave;  // hands its lane over
  wave_readback(held_lane held, std::uint64_t wave) noexcept : held_(std::move(held)), wave_(wave) {}

  held_lane held_;
  std::uint64_t wave_ = 0;
};

}  // namespace ferrum
