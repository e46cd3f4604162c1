// lane_dispatcher.hpp (private) — who holds which lane of one bucket, and
// who waits for one: the lock, the FIFOs and the choice of a free lane
// across the bucket's lane pools (one per device; one alone for a lane pool
// made on its own).
//
// A wave takes the lane that has been free longest, on any device whose lane
// pool still serves; when none is free it waits, first come, first served,
// for the first lane that frees on any of them. A lane pool's own waiters
// (async_acquire on that lane pool) go first on its own lanes. A lost
// device's lane pool serves the bucket's waves no more: its free lanes are
// passed over and its lanes that come back stay with it (its own waiters may
// still take them). Waiters fail with all_lanes_quarantined once no lane can
// come to them (a lane pool's own: every lane of it quarantined; the
// bucket's: no lane pool serves), and with the close code after close().
//
// Each lane's state (free, in flight, returning, quarantined, absent,
// changing) lives here, under the lock, beside the free lists and the waiters
// it decides; the lane pool keeps its lanes and their fence watches and calls
// in. A lane pool whose lanes are made when needed joins with its lanes
// absent (no memory): a waiter that finds no free lane has one made for it —
// while fewer are being made than wait, on the lane pool with an absent lane
// and the fewest lanes — and the lane made goes to the first waiter, as any
// lane that frees. Whatever a change hands on — a lane to a waiter, errors to
// waiters that can no longer get one, a lane to make — is called after
// unlocking.
#pragma once

#include "ferrum/binding/ids.hpp"
#include "ferrum/error.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/lane_counts.hpp"
#include "lane.hpp"
#include "waiter_queue.hpp"

#include <boost/system/error_code.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace ferrum::detail {

class lane_dispatcher {
 public:
  using waiter = lane_waiter;
  // in_flight: held; returning: given back, its fence watch returns it
  // (counted as in flight); quarantined: its fence watch may return it;
  // absent: no memory (not made yet, or trimmed); changing: its lane pool
  // makes its memory or frees it.
  enum class lane_state : std::uint8_t { free, in_flight, returning, quarantined, absent, changing };

  // How a lane pool makes a lane's memory: `start(pool, l)` begins making it
  // (asynchronously), and calls made() once done.
  struct lane_maker {
    void (*start)(void* pool, lane& l) noexcept = nullptr;
    void* pool = nullptr;
  };

  lane_dispatcher() = default;
  lane_dispatcher(const lane_dispatcher&) = delete;
  lane_dispatcher& operator=(const lane_dispatcher&) = delete;

  // Joins lane pool `pool`: its `lanes` (each lane's `owner` is `pool`), on
  // `device`, of bucket `bucket`, every lane free when `made`, else absent;
  // `maker` makes an absent lane when needed (cold, before any lane is
  // handed out). Returns its number, which the lane pool names itself by.
  [[nodiscard]] std::size_t join(const lane_pool* pool, std::span<const std::unique_ptr<lane>> lanes,
                                 gpu::device& device, const bucket_id& bucket, lane_maker maker, bool made);

  // A lane of any lane pool (a wave's), or queued (an empty handle); as
  // detail::acquire_lane (lane_pool.hpp).
  [[nodiscard]] held_lane acquire(waiter& w, boost::system::error_code& ec, const std::atomic<bool>* cancelled);
  // A lane of lane pool `member` (its own waiters'), or queued.
  [[nodiscard]] held_lane acquire_from(std::size_t member, waiter& w, boost::system::error_code& ec,
                                       const std::atomic<bool>* cancelled);
  // Removes a queued waiter, wherever it waits; false when it was not queued.
  [[nodiscard]] bool cancel(waiter& w) noexcept;
  // Fails every queued and later waiter with `ec`.
  void close(boost::system::error_code ec);
  [[nodiscard]] lane_counts counts(std::size_t member) const;

  // Gives `l` back from its holder under hand-out `hold`, once `last` (its
  // last submitted value) is reached on its device. Errors:
  // lane_not_held, fence_not_reached.
  [[nodiscard]] result<void> release(std::size_t member, lane& l, std::uint64_t hold, std::uint64_t last);
  // Takes `l` from its holder under `hold` and sets it aside — quarantined,
  // or returning — until its fence watch hands it back. Errors:
  // lane_not_held.
  [[nodiscard]] result<void> set_aside(std::size_t member, lane& l, std::uint64_t hold, lane_state state,
                                       const char* action);
  // `l` is free again: its fence watch saw its fence reached.
  void hand_back(lane& l) noexcept;
  // `l`'s fence watch ended with its device failed: quarantined for good.
  void keep_quarantined(lane& l) noexcept;

  // `l` was made (`ec` clear: to the first waiter, or free), or could not be
  // (`ec`: the first waiter fails with it; `l` is absent again).
  void made(lane& l, boost::system::error_code ec) noexcept;
  // Takes every free lane of lane pool `member` out of service for its pool
  // to free their memory (each is `changing` until trimmed() says so).
  [[nodiscard]] std::vector<lane*> trim(std::size_t member);
  // `l`'s memory is freed: absent, made again when needed.
  void trimmed(lane& l) noexcept;

 private:
  struct member_state {
    const lane_pool* pool;
    std::span<const std::unique_ptr<lane>> lanes;
    gpu::device* device;
    const bucket_id* bucket;
    std::vector<lane_state> state;  // per lane
    std::vector<lane*> free;        // longest free first; capacity for every lane
    // Per lane, the dispatcher's count of frees when it last freed: a wave
    // takes the lane free longest, on any device.
    std::vector<std::uint64_t> freed_at;
    waiter_queue own;  // the lane pool's own waiters
    lane_maker maker;
    std::uint32_t making = 0;  // lanes being made
  };
  // What a change sets off, done after unlocking (notify): the waiter a lane
  // is handed to, and waiters that can no longer get one.
  struct handover {
    waiter* next = nullptr;
    lane* handed = nullptr;
    waiter* own_hopeless = nullptr;
    boost::system::error_code own_ec;
    waiter* any_hopeless = nullptr;
    boost::system::error_code any_ec;
    waiter* failed = nullptr;  // its lane could not be made
    boost::system::error_code failed_ec;
    lane_maker maker;  // makes `make`
    lane* make = nullptr;
  };

  [[nodiscard]] member_state& member_of(const lane& l) noexcept;
  [[nodiscard]] static bool refused(const boost::system::error_code& closed, const std::atomic<bool>* cancelled,
                                    boost::system::error_code& ec) noexcept;
  // With mutex_ held: why `l` cannot be given back under `hold`, if so.
  [[nodiscard]] result<void> check_held_locked(const member_state& m, const lane& l, std::uint64_t hold,
                                               const char* action) const;
  // With mutex_ held: `l` is in `state` now, and its hand-out changes.
  static void set_state_locked(member_state& m, lane& l, lane_state state) noexcept;
  [[nodiscard]] static lane* take_free_locked(member_state& m) noexcept;
  // A handle of `l`'s current hand-out (the dispatcher's lock no longer held).
  [[nodiscard]] static held_lane hand_out(lane& l) noexcept;
  // With mutex_ held: no lane can come to `m`'s own waiters (closed, or
  // every lane of it quarantined); `m` serves the bucket's waves (its device
  // is not lost, and a lane can come); none of the lane pools does.
  [[nodiscard]] bool hopeless_locked(const member_state& m) const noexcept;
  [[nodiscard]] bool serves_any_locked(const member_state& m) const noexcept;
  [[nodiscard]] bool any_hopeless_locked() const noexcept;
  // With mutex_ held: takes `m`'s own waiters when no lane can come to
  // them, and the bucket's when none can come to those.
  void take_hopeless_locked(member_state& m, handover& h) noexcept;
  // With mutex_ held: `l` is back; to `m`'s first own waiter, else (a device
  // not lost) the bucket's first, else free.
  [[nodiscard]] handover hand_over_locked(member_state& m, lane& l) noexcept;
  // With mutex_ held: starts making a lane when fewer are being made than
  // wait — `m`'s own waiters, then (with `any`) the bucket's.
  void make_if_needed_locked(member_state* m, bool any, handover& h) noexcept;
  static void start_making_locked(member_state& m, handover& h) noexcept;
  static void notify(const handover& h) noexcept;
  static void fail_all(waiter* list, boost::system::error_code ec) noexcept;

  mutable std::mutex mutex_;
  std::vector<member_state> members_;
  waiter_queue waiters_;  // the bucket's waves, for a lane of any lane pool
  boost::system::error_code closed_;
  std::uint64_t frees_ = 0;
};

}  // namespace ferrum::detail
