// lane.hpp (private) — one lane of a bucket: its contents, made and freed
// by its lane pool (lane_memory, lane_pool.cpp), and its hand-out, which the
// dispatcher changes whenever the lane changes hands (both: held_lane.hpp).
// A lane without memory (not made, or trimmed) keeps its `index`, `owner`
// and hand-out. Holders reach a lane only through a held_lane.
#pragma once

#include "ferrum/scheduler/held_lane.hpp"

#include <cstdint>

namespace ferrum::detail {

struct lane {
  std::uint32_t index = 0;
  // The lane pool the lane belongs to (and so its device).
  lane_pool* owner = nullptr;
  // Written by the lane pool only while nobody holds the lane.
  lane_contents contents;
  lane_hand_out out;
};

}  // namespace ferrum::detail
