// ferrum/scheduler/lane_pool.hpp — the lanes of one bucket: a bounded, fair,
// cancellable pool of lanes, each with lane-stable memory.
//
// Each lane owns one arena holding every pool of the bucket (binding and
// workspace, invocation and persistent), laid out by the compiler
// (compiled_bucket::pool_offsets, lane_bytes) and made once, on the cold
// path; the pool's evidence of where every binding resource lives in it; each
// node's resources resolved to ranges of it; and one command list per node.
// A wave holds a lane from acquire to release; the pool hands lanes to
// waiters first come, first served, and at most `lanes` waves of the bucket
// hold one at a time.
//
// A lane goes back to the pool only through `release`, which checks that the
// lane is held from this pool and that the timeline value of its last
// submission — the lane's `submitted_value`, or any later value one of its
// command lists was submitted with — is reached. Code that drives lanes itself
// holds them through a lane_lease (ferrum/scheduler/async_acquire.hpp), which
// does this. A lane whose fence timed out or whose device was lost is
// *quarantined*: it serves no wave until its fence is reached after all
// (never, after a loss). When every lane of the pool is quarantined, waiters
// fail with all_lanes_quarantined instead of waiting forever.
//
// Pools of one bucket on several devices can be joined in a group (a
// scheduler over several devices does that): they then share the group's
// lock, and a lane that frees goes to the pool's own waiters first, then to
// the group's (detail::lane_group, scheduler/src/lane_group.hpp).
//
// Thread safety: every member may be called from any thread.
#pragma once

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/execution_binding.hpp"
#include "ferrum/error.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/system_executor.hpp>
#include <boost/system/error_code.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

namespace ferrum {

// Where a scheduler runs each node: on the queue the plan names (a v2 plan's
// `queue`; the device maps it onto one of its queues), or every node on the
// compute queue in plan order, as for a v1 plan (for encoders that record
// compute work in every node).
enum class queue_placement : std::uint8_t { plan, compute_only };

class lane_pool;
namespace detail {
class wave;
class lane_group;
}  // namespace detail

// One lane of a bucket: its memory, its binding evidence, its command lists.
struct lane {
  std::uint32_t index = 0;
  // The pool the lane belongs to (and so its device: pool->device()).
  lane_pool* pool = nullptr;
  // Every pool of the bucket, pool d at bucket().pool_offsets[d];
  // bucket().lane_bytes() bytes.
  std::unique_ptr<gpu::arena> arena;
  // What bind binds the layout to: the binding pool's bytes of the arena.
  lane_binding_target binding_target;
  std::vector<backing_slice> evidence;
  // The bucket's layout bound to this lane's arena and evidence, with every
  // check of execution_binding::bind, once, when the lane is made: the
  // arena never moves, so every wave on the lane uses this binding, and each
  // node's handle on its slot (`nodes[node]`, none for a node without one).
  std::optional<execution_binding> binding;
  std::vector<std::optional<node_binding>> nodes;
  // Per node, the resources it lists (the plan's order), all nodes' side by
  // side: node n's are [resource_begin[n], resource_begin[n + 1]).
  // `granted` holds their ranges, in the same places; `slots[n]` is node n's
  // binding slot as a range (empty for a node without one).
  std::vector<node_resource> resources;
  std::vector<gpu::arena_range> granted;
  std::vector<std::size_t> resource_begin;
  std::vector<gpu::arena_range> slots;
  // One list per node, in node order; `submit_lists` holds the same pointers
  // for queue::submit. The arena is guarded: each node's list reaches it only
  // through its node's ranges of `granted`, granted once here on the cold
  // path.
  std::vector<std::unique_ptr<gpu::command_list>> lists;
  std::vector<gpu::command_list*> submit_lists;
  // With GPU timestamps (scheduler_options::gpu_timestamps): slots 2n and
  // 2n + 1 are node n's begin and end on the GPU, written by its list.
  std::unique_ptr<gpu::timestamp_pool> stamps;
  // The submitted value of the last submission into this lane (0: none), as
  // waves and leases record it; release() also reads the lists' own.
  std::uint64_t submitted_value = 0;
  // The id of the last wave whose submission went to the GPU on this lane
  // (0: none): encode_context::lane_previous_wave.
  std::uint64_t last_wave = 0;
  // The lane's hand-out: it changes whenever the lane changes hands (handed
  // out, given back, quarantined, back in service). A holder keeps the
  // value it was granted under, and a give-back names it, so that a holder
  // whose hand-out is over (it gave the lane back already) cannot give
  // back, quarantine or submit through the lane of a later holder. Written
  // under the pool's lock; a holder reads its own.
  std::atomic<std::uint64_t> hold{0};
  // Node n's resources.
  [[nodiscard]] std::span<const node_resource> node_resources(std::size_t n) const noexcept {
    return std::span<const node_resource>(resources).subspan(resource_begin[n],
                                                             resource_begin[n + 1] - resource_begin[n]);
  }
  // The lists hold a complete recording that was submitted, which a
  // replaying scheduler submits again (scheduler_options::replay).
  bool recorded = false;

  // While the lane is quarantined: the pool's fence watch, a wait
  // linked into the device's timeline (no Asio handler: the pool cancels it
  // directly when it goes).
  struct fence_watch : gpu::timeline_wait {
    fence_watch(lane_pool& owner, lane& watched) noexcept;
    lane_pool* pool;
    lane* target;
    std::atomic<bool> active{false};
  };
  std::optional<fence_watch> watch;
};

struct lane_counts {
  std::uint32_t lanes = 0;
  std::uint32_t free = 0;
  std::uint32_t in_flight = 0;
  std::uint32_t quarantined = 0;
  std::size_t waiting = 0;
};

class lane_pool {
 public:
  // A queued request for a lane (intrusive: it lives in its waiter, e.g. a
  // wave). `granted` is called once, outside the pool's lock, with the lane
  // or an error (all_lanes_quarantined, the code the pool was closed with).
  struct waiter {
    using granted_fn = void (*)(waiter* w, boost::system::error_code ec, lane* l) noexcept;
    explicit waiter(granted_fn on_granted) noexcept : granted(on_granted) {}
    granted_fn granted;
    waiter* next = nullptr;
  };

  // Waiters first come, first served (intrusive: allocates nothing). Not
  // thread-safe: its owner's lock guards it.
  class waiter_queue {
   public:
    void push(waiter& w) noexcept;
    // Removes `w`; false when it is not queued.
    [[nodiscard]] bool remove(waiter& w) noexcept;
    // The first waiter, taken off; nullptr when none waits.
    [[nodiscard]] waiter* pop() noexcept;
    // Every waiter, taken off, as a list linked through `next`.
    [[nodiscard]] waiter* take_all() noexcept;
    [[nodiscard]] bool empty() const noexcept { return head_ == nullptr; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }

   private:
    waiter* head_ = nullptr;
    waiter* tail_ = nullptr;
    std::size_t size_ = 0;
  };

  // The executor async_acquire completes on for a handler without one.
  using executor_type = boost::asio::any_io_executor;

  // Makes the pool's lanes (cold path): per lane an arena of the bucket's
  // lane_bytes(), the backing evidence recorded from `p`, each node's
  // resources resolved, one command list per node and, with
  // `gpu_timestamps`, a timestamp pool of two slots per node; each node's
  // list is made for the queue `queues` places it on. Errors:
  // no_binding_layout, missing_domain_layout, those of the device
  // (timestamps_unsupported among them), of record_backing_slices and of
  // execution_binding::bind.
  [[nodiscard]] static result<std::unique_ptr<lane_pool>> create(
      const plan& p, const compiled_program& program, const compiled_bucket& bucket, gpu::device& device,
      executor_type executor = executor_type(boost::asio::system_executor()), bool gpu_timestamps = false,
      queue_placement queues = queue_placement::plan);

  lane_pool(const lane_pool&) = delete;
  lane_pool& operator=(const lane_pool&) = delete;
  // Lanes still in quarantine are retired to the device (freed once their
  // fence is reached). No lane may be held by a wave.
  ~lane_pool();

  [[nodiscard]] const compiled_bucket& bucket() const noexcept { return *bucket_; }
  [[nodiscard]] executor_type get_executor() const noexcept { return executor_; }
  [[nodiscard]] gpu::device& device() const noexcept { return *device_; }
  // `waiting` counts the pool's own waiters and, in a group, the group's
  // (who take a lane of whichever pool of the group frees one first).
  [[nodiscard]] lane_counts counts() const;
  // The lanes, for reading their arenas (a lane's bytes belong to the wave
  // holding it, and to nobody while the GPU may write them).
  [[nodiscard]] std::span<const std::unique_ptr<lane>> lanes() const noexcept { return lanes_; }

  // Hands a free lane to `w` now (returned) or queues it (nullptr). When no
  // lane can ever come (all quarantined, or the pool is closed), or
  // `cancelled` is set, `ec` is set and nullptr returned. Checked under the
  // pool's lock: a canceller that sets `cancelled` and then calls cancel()
  // either stops the acquisition here or finds the waiter queued.
  [[nodiscard]] lane* acquire(waiter& w, boost::system::error_code& ec, const std::atomic<bool>* cancelled = nullptr);

  // Removes a queued waiter; false when it was not queued (granted already).
  [[nodiscard]] bool cancel(waiter& w) noexcept;

  // Every give-back names the hand-out it ends (`hold`: the lane's `hold`
  // when it was granted to its holder). Refused, the lane staying with its
  // current holder: foreign_lane (`l` is another pool's), lane_not_held
  // (`l` is free, quarantined, on its way back through the fence watch, or
  // held under a later hand-out: given back twice, in any order).

  // Gives `l` back. Errors: as above, and fence_not_reached (its last
  // submission's value is not reached; the lane stays with the caller).
  [[nodiscard]] result<void> release(lane& l, std::uint64_t hold);

  // Puts `l` in quarantine — after its fence timed out or its device was
  // lost, or when its holder gives it up early: it serves no wave until its
  // last submission's value is reached, when the pool returns it to service
  // by itself (never, after a device failure). Errors: as above.
  [[nodiscard]] result<void> quarantine(lane& l, std::uint64_t hold);

  // Gives `l` back once its last submission's value is reached: at once when
  // it is, else through the pool's fence watch (the lane counts as in flight
  // until then, and is quarantined for good if the device fails first; it
  // is no longer its holder's). Errors: as above.
  [[nodiscard]] result<void> release_when_reached(lane& l, std::uint64_t hold);

  // The timeline value of the last submission into `l`: its `submitted_value`, or a
  // later value one of its lists was submitted with.
  [[nodiscard]] static std::uint64_t last_submitted(const lane& l) noexcept;

  // Fails every queued and later waiter with `ec` (scheduler_shut_down when its scheduler goes).
  void close(boost::system::error_code ec);

  // Called with +1 when a fence watch starts (quarantine,
  // release_when_reached) and with -1 when it ends (on the device's thread:
  // the lane is back, or its device failed). Set before any lane is used.
  void on_watch(void (*callback)(void* context, int delta) noexcept, void* context) noexcept {
    watch_changed_ = callback;
    watch_context_ = context;
  }

 private:
  friend struct lane::fence_watch;
  friend class detail::wave;
  friend class detail::lane_group;
  // in_flight: held; returning: given back, its fence watch returns it
  // (counted as in flight); quarantined: its fence watch may return it.
  enum class lane_state : std::uint8_t { free, in_flight, returning, quarantined };

  lane_pool(const compiled_bucket& bucket, gpu::device& device, executor_type executor)
      : bucket_(&bucket), device_(&device), executor_(std::move(executor)) {}
  // With mutex_ held: why `l` cannot be given back under hand-out `hold`, if so.
  [[nodiscard]] result<void> check_held_locked(const lane& l, std::uint64_t hold, const char* action) const;
  // With mutex_ held: `l` is in `state` now; its hold changes (whoever
  // held it holds it no more).
  void set_state_locked(lane& l, lane_state state) noexcept;
  // Puts a held lane in `state` (quarantined, or returning) and watches its
  // last submission's value. Errors: as check_held_locked.
  [[nodiscard]] result<void> watch(lane& l, std::uint64_t hold, lane_state state, const char* action);
  // Whether an acquisition is refused at once, and why (`ec`): the pool or
  // group was closed, or the waiter cancelled.
  [[nodiscard]] static bool refused(const boost::system::error_code& closed, const std::atomic<bool>* cancelled,
                                    boost::system::error_code& ec) noexcept;
  // With mutex_ held: the free lane free longest, now in flight.
  [[nodiscard]] lane* take_free_locked() noexcept;
  // With mutex_ held: whether no lane can come any more (closed, or every
  // lane quarantined).
  [[nodiscard]] bool hopeless_locked() const noexcept;
  // With mutex_ held: whether the pool may still serve its group's waves
  // (its device is not lost, and a lane can come).
  [[nodiscard]] bool serves_group_locked() const noexcept;
  // With mutex_ held: when no lane can come any more, detaches every waiter
  // of the pool and, when that is so for its group too, of the group
  // (returned, to be failed after unlocking: fail_hopeless).
  struct hopeless_waiters {
    waiter* own = nullptr;
    boost::system::error_code own_ec;
    waiter* group = nullptr;
    boost::system::error_code group_ec;
  };
  [[nodiscard]] hopeless_waiters detach_if_hopeless_locked() noexcept;
  static void fail_hopeless(const hopeless_waiters& hopeless) noexcept;
  // What a lane coming back sets off, done after unlocking (notify): the
  // waiter it is handed to, and the waiters that can no longer get one.
  struct handover {
    waiter* next = nullptr;
    hopeless_waiters hopeless;
  };
  // With mutex_ held: `l` is free again; hands it to the first waiter of
  // the pool, else of its group, or marks it free. A lost device's lane
  // serves its group no more, which may leave the group's waiters nothing
  // to wait for: they are detached then.
  [[nodiscard]] handover hand_over_locked(lane& l) noexcept;
  static void notify(const handover& h, lane& l) noexcept;
  static void fail_all(waiter* list, boost::system::error_code ec) noexcept;
  // The watch's completion: the fence was reached (or the device failed).
  static void watched(gpu::timeline_wait* wait, boost::system::error_code ec) noexcept;
  // For a wave whose submission of every list of `l` has reached its value
  // (lane::submitted_value): gives `l` back without reading each list's own
  // value (the wave holds it: nothing to check).
  void release_reached(lane& l) noexcept;

  const compiled_bucket* bucket_;
  gpu::device* device_;
  executor_type executor_;
  std::vector<std::unique_ptr<lane>> lanes_;

  // The pool's own lock, or its group's once it joins one (cold, before use).
  mutable std::mutex own_mutex_;
  std::mutex* mutex_ = &own_mutex_;
  detail::lane_group* group_ = nullptr;
  std::vector<lane_state> state_;
  std::vector<lane*> free_;  // capacity reserved for every lane: pushing never allocates
  // In a group: per lane, the group's count of frees when it last freed
  // (the group hands out the lane free longest, on any device).
  std::vector<std::uint64_t> freed_at_;
  waiter_queue waiters_;
  boost::system::error_code closed_;
  void (*watch_changed_)(void* context, int delta) noexcept = nullptr;
  void* watch_context_ = nullptr;
};

}  // namespace ferrum
