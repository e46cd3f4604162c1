// A timeline that a test moves itself, playing the device: timeline::advance
// and fail are protected, so a test reaches them as a device does, through a
// subclass of its own. Only tests build it; the library has no such backdoor.
//
//   test::test_timeline t;
//   ferrum::gpu::async_wait(t, 3, handler);
//   t.advance(3);  // completes the wait, as a device's fence would
#pragma once

#include "test_namespace.hpp"

#include "ferrum/gpu/timeline.hpp"

namespace ferrum::test {

class test_timeline final : public ferrum::gpu::timeline {
 public:
  using timeline::advance;
  using timeline::fail;
};

}  // namespace ferrum::test
