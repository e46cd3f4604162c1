// program_lanes.hpp (private) — one compiled program as a scheduler runs it:
// per device its submission plan, per bucket its lane dispatcher, per
// (device, bucket) its lane pool, and what of it still runs. A scheduler
// runs waves on its current program; a replaced one stays until nothing of
// it runs any more (scheduler.cpp, "replacement"), then goes, and its lanes'
// memory with it.
#pragma once

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/error.hpp"
#include "ferrum/scheduler/detail/completion_waiter.hpp"
#include "ferrum/scheduler/lane_pool.hpp"
#include "ferrum/scheduler/scheduler_options.hpp"
#include "history_store.hpp"
#include "lane_dispatcher.hpp"
#include "submission_plan.hpp"
#include "wave_imports.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace ferrum::detail {

class program_lanes {
 public:
  // Makes its lane pools over `devices`, lanes made as `options` says, each
  // pool telling `hooks` (whose context is set to the new object).
  // `serial`: its number in its scheduler `owner`, from 1. Errors:
  // lane_pool::create's.
  [[nodiscard]] static result<std::unique_ptr<program_lanes>> make(std::shared_ptr<const compiled_program> program,
                                                                   std::uint64_t serial,
                                                                   std::span<gpu::device* const> devices,
                                                                   const boost::asio::any_io_executor& executor,
                                                                   const scheduler_options& options,
                                                                   lane_pool_hooks hooks, void* owner);
  program_lanes(const program_lanes&) = delete;
  program_lanes& operator=(const program_lanes&) = delete;

  [[nodiscard]] const compiled_program& program() const noexcept { return *program_; }
  [[nodiscard]] const std::shared_ptr<const compiled_program>& shared_program() const noexcept { return program_; }
  [[nodiscard]] std::uint64_t serial() const noexcept { return serial_; }
  [[nodiscard]] void* owner() const noexcept { return owner_; }
  // Device-major: device d's lane pool of bucket b at d * buckets + b.
  [[nodiscard]] std::span<const std::unique_ptr<lane_pool>> pools() const noexcept { return pools_; }
  [[nodiscard]] lane_dispatcher& dispatcher(std::size_t bucket) const noexcept { return *dispatchers_[bucket]; }
  // How a wave on device `device` (the scheduler's index) submits its nodes.
  [[nodiscard]] const submission_plan& submissions(std::size_t device) const noexcept { return submissions_[device]; }
  // Where a wave of bucket `bucket` runs its nodes on a scheduler's one
  // device (a wave imports resources only there): node_placement, with
  // the queue kinds each imported resource's live nodes run on.
  [[nodiscard]] node_placement placement(std::size_t bucket) const noexcept {
    return {submissions_.front().node_queues(), program_.get(), import_queues_[bucket]};
  }
  // Its history resources' copies and turn (history_store.hpp).
  [[nodiscard]] history_store& history() const noexcept { return history_; }
  // Room for any device's segment values and waits (a wave runs on any).
  [[nodiscard]] submission_plan::values make_submission_values() const;

  // Whether anything of it still runs: a wave accepted on it, a lane held
  // (by a lease), being made, or whose fence is watched.
  [[nodiscard]] bool busy() const;

  // Waves accepted on it and not yet recycled; lanes being made and fence
  // watches (kept by the scheduler's lane pool hooks).
  std::atomic<std::uint64_t> waves{0};
  std::atomic<std::uint64_t> making{0};
  std::atomic<std::uint64_t> watching{0};
  // Replaced: no wave is accepted on it any more.
  std::atomic<bool> retired{false};
  // Under the scheduler's state lock: it is going (posted), and the
  // replacements that wait for it to go.
  bool retiring = false;
  std::vector<completion_waiter> replaced;

 private:
  program_lanes(std::shared_ptr<const compiled_program> program, std::uint64_t serial, void* owner) noexcept;

  std::shared_ptr<const compiled_program> program_;
  std::uint64_t serial_;
  void* owner_;
  std::vector<submission_plan> submissions_;  // per device
  // Per bucket: queues_using_imports on the first device.
  std::vector<std::vector<std::uint32_t>> import_queues_;
  // Before the pools: its copies go after every lane (whose recordings
  // name them).
  mutable history_store history_;
  std::vector<std::shared_ptr<lane_dispatcher>> dispatchers_;
  // Last: they go first, before the program they were made from.
  std::vector<std::unique_ptr<lane_pool>> pools_;
};

}  // namespace ferrum::detail
