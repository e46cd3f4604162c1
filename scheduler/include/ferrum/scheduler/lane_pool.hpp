// ferrum/scheduler/lane_pool.hpp — the lanes of one bucket on one device: a
// bounded, fair, cancellable lane pool, each lane with lane-stable memory
// (its contents: ferrum/scheduler/held_lane.hpp).
//
// The lane pool makes its lanes on the cold path from the bucket's lane
// recipe: all of them when it is made, or each when a holder first waits for
// one (lane_making); trim() gives free lanes' memory back to the device.
// Lanes go to waiters first come, first served, and at most `lanes` holders
// of the bucket have one at a time. Code that drives lanes itself awaits one
// with async_acquire (ferrum/scheduler/async_acquire.hpp) and holds it
// through a lane_lease; a scheduler's waves hold theirs the same way, through
// a held_lane. Every lane goes back through its handle's one give-back
// (held_lane::give_back), which checks that the hand-out is current and that
// the GPU is done with the lane — never straight to a waiter while the GPU
// may still write it. A lane whose fence timed out or whose device was lost
// is *quarantined*: it serves no holder until its fence is reached after all
// (never, after a loss). When every lane is quarantined, waiters fail with
// all_lanes_quarantined instead of waiting forever.
//
// A scheduler over several devices makes one lane pool per (device, bucket)
// and joins a bucket's lane pools to one dispatcher (scheduler/src/
// lane_dispatcher.hpp), which hands their lanes to the bucket's waves; a lane
// pool's own waiters (async_acquire on it) still go first on its lanes.
//
// A lane's contents are reached only through a handle that holds it: a
// lease, a wave (its encoders see it through encode_context), or a wave
// readback that keeps a wave's lane for reading what the wave wrote
// (ferrum/scheduler/wave_readback.hpp). Its bytes belong to its holder, and
// to nobody while the GPU may write them.
//
// Thread safety: every member may be called from any thread.
#pragma once

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/error.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/detail/lane_waiter.hpp"
#include "ferrum/scheduler/held_lane.hpp"
#include "ferrum/scheduler/lane_counts.hpp"
#include "ferrum/scheduler/scheduler_options.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/system_executor.hpp>
#include <boost/system/error_code.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace ferrum {

class lane_pool;

namespace detail {

struct lane;
class lane_dispatcher;
struct lane_pool_factory;

// What a lane pool tells its owner (a scheduler; set by the scheduler's
// factory, lane_pool_factory.hpp): `watching` is called with +1 when a fence
// watch starts (a lane quarantined or returning after its fence) and with -1
// when it ends (on the device's thread: the lane is back, or its device
// failed); `making` with +1 when a lane starts being made and -1 once it was
// handed on; `released` when a lane went back at once.
struct lane_pool_hooks {
  void (*watching)(void* context, int delta) noexcept = nullptr;
  void (*making)(void* context, int delta) noexcept = nullptr;
  void (*released)(void* context) noexcept = nullptr;
  void* context = nullptr;
};

// async_acquire's door (ferrum/scheduler/async_acquire.hpp): hands a free
// lane of `pool` to `w` now (returned) or queues `w` (an empty handle
// returned). When no lane can ever come (all quarantined, or the pool is
// closed), or `cancelled` is set, `ec` is set. Checked under the lock: a
// canceller that sets `cancelled` and then calls cancel_acquire() either
// stops the acquisition here or finds the waiter queued.
[[nodiscard]] held_lane acquire_lane(lane_pool& pool, lane_waiter& w, boost::system::error_code& ec,
                                     const std::atomic<bool>* cancelled = nullptr);
// Removes a queued waiter; false when it was not queued (handed a lane already).
[[nodiscard]] bool cancel_acquire(lane_pool& pool, lane_waiter& w) noexcept;

}  // namespace detail

class lane_pool {
 public:
  // The executor async_acquire completes on for a handler without one.
  using executor_type = boost::asio::any_io_executor;

  // Makes the lane pool (cold path) with `program.lanes` lanes, each made
  // from the bucket's lane recipe — now, or with lane_making::when_needed
  // when a waiter finds no free lane (on `executor`): an arena per window of
  // the bucket, the recipe's backing slices, each node's resources
  // resolved, one command list per node (made for the queue `queues` places
  // it on) and, with `gpu_timestamps`, a timestamp pool of two slots per
  // node; then, with `make_state`, the engine's state of the lane
  // (ferrum/scheduler/lane_state.hpp). A lane made when needed that the
  // device (or `make_state`) refuses fails the waiter it was made for with
  // that code. `program` must outlive the lane pool. Errors:
  // missing_domain_layout, timestamps_unsupported, those
  // of the device, of execution_binding::bind and of `make_state`
  // (lane_state_failed where it throws).
  [[nodiscard]] static result<std::unique_ptr<lane_pool>> create(
      const compiled_program& program, const compiled_bucket& bucket, gpu::device& device,
      executor_type executor = executor_type(boost::asio::system_executor()), bool gpu_timestamps = false,
      queue_placement queues = queue_placement::plan, lane_making making = lane_making::at_create,
      lane_state_factory make_state = {});

  lane_pool(const lane_pool&) = delete;
  lane_pool& operator=(const lane_pool&) = delete;
  // Lanes still in quarantine are retired to the device (freed once their
  // fence is reached). No lane may be held. Waits for a lane being made (on
  // the executor) to be handed on.
  ~lane_pool();

  [[nodiscard]] const compiled_bucket& bucket() const noexcept { return *bucket_; }
  [[nodiscard]] executor_type get_executor() const noexcept { return executor_; }
  [[nodiscard]] gpu::device& device() const noexcept { return *device_; }
  // `waiting` counts the lane pool's own waiters and, joined, the
  // dispatcher's (who take a lane of whichever of its lane pools frees one
  // first).
  [[nodiscard]] lane_counts counts() const;

  // Frees the memory of every free lane (a free lane's fence is reached);
  // each is made again when needed. Returns the bytes given back (as lane_counts::bytes counts them). Lanes
  // held, returning or quarantined are left alone.
  std::uint64_t trim();

  // Fails every queued and later waiter with `ec` (scheduler_shut_down when
  // its scheduler goes); joined, those of every lane pool of the dispatcher.
  void close(boost::system::error_code ec);

 private:
  friend class held_lane;                   // give_back
  friend struct detail::lane_pool_factory;  // a scheduler's lane pools
  friend held_lane detail::acquire_lane(lane_pool&, detail::lane_waiter&, boost::system::error_code&,
                                        const std::atomic<bool>*);
  friend bool detail::cancel_acquire(lane_pool&, detail::lane_waiter&) noexcept;

  // A quarantined or returning lane's wait for its last submitted value,
  // linked into the device's timeline (lane_pool.cpp).
  struct fence_watch;

  lane_pool(const compiled_program& program, const compiled_bucket& bucket, gpu::device& device, executor_type executor,
            bool gpu_timestamps, queue_placement queues, std::shared_ptr<detail::lane_dispatcher> dispatcher);
  // Makes the pool joined to `dispatcher` (create's, or a scheduler's
  // shared by the bucket's lane pools on other devices).
  [[nodiscard]] static result<std::unique_ptr<lane_pool>> make(
      const compiled_program& program, const compiled_bucket& bucket, gpu::device& device, executor_type executor,
      bool gpu_timestamps, queue_placement queues, lane_making making, lane_state_factory make_state,
      std::shared_ptr<detail::lane_dispatcher> dispatcher, detail::lane_pool_hooks hooks);
  // Gives lane `index`, held under hand-out `hold`, back
  // (held_lane::give_back). Errors: lane_not_held, fence_not_reached
  // (fence_reached only).
  [[nodiscard]] result<void> give_back(std::uint32_t index, std::uint64_t hold, lane_return how);
  // Straight back, once `last` is reached. Errors: lane_not_held, fence_not_reached.
  [[nodiscard]] result<void> release(detail::lane& l, std::uint64_t hold, std::uint64_t last);
  // Sets a held lane aside (quarantined, or `returning`) and watches its
  // last submission's value.
  [[nodiscard]] result<void> watch(detail::lane& l, std::uint64_t hold, bool returning, const char* action);
  // The watch's completion: the fence was reached (or the device failed).
  static void watched(gpu::timeline_wait* wait, boost::system::error_code ec) noexcept;
  // The dispatcher's lane_maker: makes `l` on the executor, then made().
  static void start_making(void* self, detail::lane& l) noexcept;
  void made(detail::lane& l, boost::system::error_code ec) noexcept;
  void hook(void (*h)(void*, int) noexcept, int delta) const noexcept {
    if (h != nullptr) h(hooks_.context, delta);
  }

  const compiled_program* program_;
  const compiled_bucket* bucket_;
  gpu::device* device_;
  // A lane's bytes: its buffer's and its image memory's (the device's size
  // of its images, lane_image_placement).
  std::uint64_t lane_bytes_ = 0;
  executor_type executor_;
  bool gpu_timestamps_;
  queue_placement queues_;
  lane_state_factory make_state_;  // set by make, before any lane is made
  std::vector<std::unique_ptr<detail::lane>> lanes_;
  std::vector<std::unique_ptr<fence_watch>> watches_;  // per lane
  // Who holds which lane and who waits: the lane pool's (or its bucket's) dispatcher.
  std::shared_ptr<detail::lane_dispatcher> dispatcher_;
  std::size_t member_ = 0;  // the lane pool's number in the dispatcher
  detail::lane_pool_hooks hooks_;
  std::atomic<int> making_{0};  // lanes being made
};

}  // namespace ferrum
