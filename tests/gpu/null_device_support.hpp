// Helpers for tests that run on the null device.
#pragma once

#include "test_namespace.hpp"

#include "gpu_test_support.hpp"

#include "ferrum/gpu/null_device.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>

#include <array>
#include <memory>

namespace ferrum::test {

inline std::unique_ptr<ferrum::gpu::null_device> null_device(const ferrum::gpu::null_device_options& options = {}) {
  auto device = ferrum::gpu::null_device::create(options);
  REQUIRE(device.has_value());
  return std::move(*device);
}

// An arena that records when it is destroyed.
class observed_arena final : public ferrum::gpu::arena {
 public:
  observed_arena(const ferrum::gpu::device& owner, bool& destroyed) noexcept
      : arena(owner, storage_, 0), destroyed_(destroyed) {}
  ~observed_arena() override { destroyed_ = true; }

 private:
  std::byte storage_[16]{};
  bool& destroyed_;
};

}  // namespace ferrum::test
