// lane_pool_factory.hpp (private) — how a scheduler makes its lane pools:
// joined, per bucket, to one dispatcher shared with that bucket's lane
// pools on its other devices, and telling the scheduler what they do
// (detail::lane_pool_hooks).
#pragma once

#include "ferrum/scheduler/lane_pool.hpp"

#include <memory>
#include <utility>

namespace ferrum::detail {

struct lane_pool_factory {
  [[nodiscard]] static result<std::unique_ptr<lane_pool>> create(
      const compiled_program& program, const compiled_bucket& bucket, gpu::device& device,
      lane_pool::executor_type executor, bool gpu_timestamps, queue_placement queues, lane_making making,
      lane_state_factory make_state, std::shared_ptr<lane_dispatcher> dispatcher, lane_pool_hooks hooks) {
    return lane_pool::make(program, bucket, device, std::move(executor), gpu_timestamps, queues, making,
                           std::move(make_state), std::move(dispatcher), hooks);
  }
};

}  // namespace ferrum::detail
