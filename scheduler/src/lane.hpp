// lane.hpp (private) — one lane of a bucket: its contents (held_lane.hpp),
// made and freed by its lane pool, and its hand-out, which the dispatcher
// changes whenever the lane changes hands. A lane without memory (not made,
// or trimmed) keeps its `index`, `owner` and `hold`. Holders reach a lane
// only through a held_lane.
#pragma once

#include "ferrum/scheduler/held_lane.hpp"

#include <atomic>
#include <cstdint>

namespace ferrum::detail {

struct lane {
  std::uint32_t index = 0;
  // The lane pool the lane belongs to (and so its device).
  lane_pool* owner = nullptr;
  // Written by the lane pool only while nobody holds the lane.
  lane_contents contents;
  // The hand-out: it changes whenever the lane changes hands (handed out,
  // given back, quarantined, back in service). A held_lane keeps the value
  // it was handed the lane under, so that a holder whose hand-out is over
  // cannot give back or submit through a later holder's lane. Written under
  // the dispatcher's lock; a holder reads its own.
  std::atomic<std::uint64_t> hold{0};
  // The holder's record (held_lane::record_submission): the value of the
  // last submission into the lane (0: none), the last wave that submitted
  // all of its lists, whether they hold a replayable recording, and whether
  // the last record was of all of them (a wave's: its value covers every
  // list's; else the lists' own values are read too). Reset when the lane's
  // memory is freed.
  std::uint64_t submitted_value = 0;
  std::uint64_t previous_wave = 0;
  bool recorded = false;
  bool covers_lists = false;
};

// The timeline value of the last submission into `l`: its recorded value,
// or a later value one of its lists was submitted with (held_lane.cpp).
[[nodiscard]] std::uint64_t last_submitted(const lane& l) noexcept;

}  // namespace ferrum::detail
