// program_lanes.cpp — one compiled program as a scheduler runs it
// (program_lanes.hpp).
#include "program_lanes.hpp"

#include "lane_pool_factory.hpp"

#include <algorithm>

namespace ferrum::detail {

program_lanes::program_lanes(std::shared_ptr<const compiled_program> program, std::uint64_t serial,
                             void* owner) noexcept
    : program_(std::move(program)), serial_(serial), owner_(owner), history_(program_->buckets.size()) {}

result<std::unique_ptr<program_lanes>> program_lanes::make(std::shared_ptr<const compiled_program> program,
                                                           std::uint64_t serial, std::span<gpu::device* const> devices,
                                                           const boost::asio::any_io_executor& executor,
                                                           const scheduler_options& options, lane_pool_hooks hooks,
                                                           void* owner) {
  std::unique_ptr<program_lanes> p(new program_lanes(std::move(program), serial, owner));
  const compiled_program& compiled = *p->program_;
  hooks.context = p.get();
  p->submissions_.reserve(devices.size());
  std::vector<bool> culled;
  if (compiled.culled_nodes != 0)
    for (std::size_t n = 0; n < compiled.node_count; ++n) culled.push_back(compiled.culled(n));
  for (gpu::device* d : devices) p->submissions_.emplace_back(compiled.dependencies, *d, options.queues, culled);
  for (const compiled_bucket& bucket : compiled.buckets)
    p->import_queues_.push_back(
        queues_using_imports(bucket.lane, {p->submissions_.front().node_queues(), &compiled, {}}));
  for (std::size_t b = 0; b < compiled.buckets.size(); ++b)
    p->dispatchers_.push_back(std::make_shared<lane_dispatcher>());
  for (gpu::device* d : devices) {
    for (std::size_t b = 0; b < compiled.buckets.size(); ++b) {
      auto pool =
          lane_pool_factory::create(compiled, compiled.buckets[b], *d, executor, options.gpu_timestamps, options.queues,
                                    options.make_lanes, options.make_lane_state, p->dispatchers_[b], hooks);
      if (!pool) return pool.error();
      p->pools_.push_back(std::move(*pool));
    }
  }
  return p;
}

submission_plan::values program_lanes::make_submission_values() const {
  submission_plan::values most = submissions_.front().make_values();
  for (const submission_plan& plan : submissions_) {
    submission_plan::values v = plan.make_values();
    if (v.submitted.size() > most.submitted.size()) most.submitted = std::move(v.submitted);
    if (v.waits.capacity() > most.waits.capacity()) most.waits = std::move(v.waits);
    if (v.lists.capacity() > most.lists.capacity()) most.lists = std::move(v.lists);
  }
  return most;
}

bool program_lanes::busy() const {
  if (waves.load() != 0 || making.load() != 0 || watching.load() != 0) return true;
  return std::any_of(pools_.begin(), pools_.end(), [](const std::unique_ptr<lane_pool>& pool) {
    const lane_counts c = pool->counts();
    return c.in_flight != 0 || c.waiting != 0;
  });
}

}  // namespace ferrum::detail
