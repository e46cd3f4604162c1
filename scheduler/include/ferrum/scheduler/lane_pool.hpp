// ferrum/scheduler/lane_pool.hpp — the lanes of one bucket on one device: a
// bounded, fair, cancellable lane pool, each lane with lane-stable memory
// (ferrum/scheduler/lane.hpp).
//
// The lane pool makes its lanes on the cold path from the bucket's lane
// recipe: all of them when it is made, or each when a holder first waits for
// one (lane_making, lane.hpp); trim() gives free lanes' memory back to the
// device. A wave holds a lane from acquire to release; lanes go to
// waiters first come, first served, and at most `lanes` holders of the
// bucket have one at a time.
//
// A lane goes back only through `release`, which checks that the lane is
// held from this lane pool and that the timeline value of its last
// submission — the lane's `submitted_value`, or any later value one of its
// command lists was submitted with — is reached. Code that drives lanes itself
// holds them through a lane_lease (ferrum/scheduler/async_acquire.hpp), which
// does this. A lane whose fence timed out or whose device was lost is
// *quarantined*: it serves no holder until its fence is reached after all
// (never, after a loss). When every lane is quarantined, waiters fail with
// all_lanes_quarantined instead of waiting forever.
//
// A scheduler over several devices makes one lane pool per (device, bucket)
// and joins a bucket's lane pools to one dispatcher (scheduler/src/
// lane_dispatcher.hpp), which hands their lanes to the bucket's waves; a lane
// pool's own waiters (async_acquire on it) still go first on its lanes.
//
// Thread safety: every member may be called from any thread.
#pragma once

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/error.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/lane.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/system_executor.hpp>
#include <boost/system/error_code.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace ferrum {

namespace detail {
class lane_dispatcher;
}  // namespace detail

class lane_pool {
 public:
  // A queued request for a lane (lane.hpp).
  using waiter = lane_waiter;

  // The executor async_acquire completes on for a handler without one.
  using executor_type = boost::asio::any_io_executor;

  // Makes the lane pool (cold path) with `program.lanes` lanes, each made
  // from the bucket's lane recipe — now, or with lane_making::when_needed
  // when a waiter finds no free lane (on `executor`): an arena of the
  // bucket's lane_bytes(), the recipe's evidence, each node's resources
  // resolved, one command list per node (made for the queue `queues` places
  // it on) and, with `gpu_timestamps`, a timestamp pool of two slots per
  // node. A lane made when needed that the device refuses fails the waiter
  // it was made for with the device's code. `dispatcher`: the bucket's,
  // shared with the lane pools of the same bucket on other devices (a
  // scheduler's, internal); null: the lane pool's own. `program` must
  // outlive the lane pool. Errors: no_binding_layout,
  // missing_domain_layout, timestamps_unsupported, those of the device and
  // of execution_binding::bind.
  [[nodiscard]] static result<std::unique_ptr<lane_pool>> create(
      const compiled_program& program, const compiled_bucket& bucket, gpu::device& device,
      executor_type executor = executor_type(boost::asio::system_executor()), bool gpu_timestamps = false,
      queue_placement queues = queue_placement::plan, lane_making making = lane_making::at_create,
      std::shared_ptr<detail::lane_dispatcher> dispatcher = nullptr);

  lane_pool(const lane_pool&) = delete;
  lane_pool& operator=(const lane_pool&) = delete;
  // Lanes still in quarantine are retired to the device (freed once their
  // fence is reached). No lane may be held by a wave. Waits for a lane being
  // made (on the executor) to be handed on.
  ~lane_pool();

  [[nodiscard]] const compiled_bucket& bucket() const noexcept { return *bucket_; }
  [[nodiscard]] executor_type get_executor() const noexcept { return executor_; }
  [[nodiscard]] gpu::device& device() const noexcept { return *device_; }
  // `waiting` counts the lane pool's own waiters and, joined, the
  // dispatcher's (who take a lane of whichever of its lane pools frees one
  // first).
  [[nodiscard]] lane_counts counts() const;
  // The lanes, for reading their arenas (a lane's bytes belong to the wave
  // holding it, and to nobody while the GPU may write them; a lane not made
  // has no arena).
  [[nodiscard]] std::span<const std::unique_ptr<lane>> lanes() const noexcept { return lanes_; }

  // Frees the memory of every free lane (a free lane's fence is reached);
  // each is made again when needed. Returns the bytes given back. Lanes
  // held, returning or quarantined are left alone.
  std::uint64_t trim();

  // Hands a free lane to `w` now (returned) or queues it (nullptr). When no
  // lane can ever come (all quarantined, or the lane pool is closed), or
  // `cancelled` is set, `ec` is set and nullptr returned. Checked under the
  // lock: a canceller that sets `cancelled` and then calls cancel() either
  // stops the acquisition here or finds the waiter queued.
  [[nodiscard]] lane* acquire(waiter& w, boost::system::error_code& ec, const std::atomic<bool>* cancelled = nullptr);

  // Removes a queued waiter; false when it was not queued (handed a lane already).
  [[nodiscard]] bool cancel(waiter& w) noexcept;

  // Every give-back names the hand-out it ends (`hold`: the lane's `hold`
  // when it was handed to its holder). Refused, the lane staying with its
  // current holder: foreign_lane (`l` is another lane pool's), lane_not_held
  // (`l` is free, quarantined, on its way back through the fence watch, or
  // held under a later hand-out: given back twice, in any order).

  // Gives `l` back. Errors: as above, and fence_not_reached (its last
  // submission's value is not reached; the lane stays with the caller).
  [[nodiscard]] result<void> release(lane& l, std::uint64_t hold);

  // Puts `l` in quarantine — after its fence timed out or its device was
  // lost, or when its holder gives it up early: it serves no holder until
  // its last submission's value is reached, when the lane pool returns it to
  // service by itself (never, after a device failure). Errors: as above.
  [[nodiscard]] result<void> quarantine(lane& l, std::uint64_t hold);

  // Gives `l` back once its last submission's value is reached: at once when
  // it is, else through the fence watch (the lane counts as in flight until
  // then, and is quarantined for good if the device fails first; it is no
  // longer its holder's). Errors: as above.
  [[nodiscard]] result<void> release_when_reached(lane& l, std::uint64_t hold);

  // The timeline value of the last submission into `l`: its `submitted_value`, or a
  // later value one of its lists was submitted with.
  [[nodiscard]] static std::uint64_t last_submitted(const lane& l) noexcept;

  // Fails every queued and later waiter with `ec` (scheduler_shut_down when
  // its scheduler goes); joined, those of every lane pool of the dispatcher.
  void close(boost::system::error_code ec);

  // What the lane pool tells its owner (a scheduler): `watching` is called
  // with +1 when a fence watch starts (quarantine, release_when_reached) and
  // with -1 when it ends (on the device's thread: the lane is back, or its
  // device failed); `making` with +1 when a lane starts being made and -1
  // once it was handed on; `released` when release() gave a lane back. Set
  // before any lane is used.
  struct hooks {
    void (*watching)(void* context, int delta) noexcept = nullptr;
    void (*making)(void* context, int delta) noexcept = nullptr;
    void (*released)(void* context) noexcept = nullptr;
    void* context = nullptr;
  };
  void set_hooks(hooks h) noexcept { hooks_ = h; }

 private:
  // A quarantined or returning lane's wait for its last submitted value,
  // linked into the device's timeline (lane_pool.cpp).
  struct fence_watch;

  lane_pool(const compiled_program& program, const compiled_bucket& bucket, gpu::device& device, executor_type executor,
            bool gpu_timestamps, queue_placement queues, std::shared_ptr<detail::lane_dispatcher> dispatcher);
  // Sets a held lane aside (quarantined, or `returning`) and watches its
  // last submission's value. Errors: as the give-backs'.
  [[nodiscard]] result<void> watch(lane& l, std::uint64_t hold, bool returning, const char* action);
  // The watch's completion: the fence was reached (or the device failed).
  static void watched(gpu::timeline_wait* wait, boost::system::error_code ec) noexcept;
  // The dispatcher's lane_maker: makes `l` on the executor, then made().
  static void start_making(void* self, lane& l) noexcept;
  void made(lane& l, boost::system::error_code ec) noexcept;
  void hook(void (*h)(void*, int) noexcept, int delta) const noexcept {
    if (h != nullptr) h(hooks_.context, delta);
  }

  const compiled_program* program_;
  const compiled_bucket* bucket_;
  gpu::device* device_;
  executor_type executor_;
  bool gpu_timestamps_;
  queue_placement queues_;
  std::vector<std::unique_ptr<lane>> lanes_;
  std::vector<std::unique_ptr<fence_watch>> watches_;  // per lane
  // Who holds which lane and who waits: the lane pool's (or its bucket's) dispatcher.
  std::shared_ptr<detail::lane_dispatcher> dispatcher_;
  std::size_t member_ = 0;  // the lane pool's number in the dispatcher
  hooks hooks_;
  std::atomic<int> making_{0};  // lanes being made
};

}  // namespace ferrum
