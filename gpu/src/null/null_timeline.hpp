// null_timeline.hpp (private) — a queue's timeline on the null device.
#pragma once

#include "ferrum/gpu/timeline.hpp"

namespace ferrum::gpu::null_detail {

// The null device's timeline: only its queue's worker (advance) and the
// device's loss and shutdown (fail) move it.
class null_timeline final : public timeline {
 public:
  using timeline::advance;
  using timeline::fail;
};

}  // namespace ferrum::gpu::null_detail
