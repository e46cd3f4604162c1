// lane_dispatcher.cpp — handing one bucket's lanes out, and taking them back
// (lane_dispatcher.hpp).
#include "lane_dispatcher.hpp"

#include <boost/asio/error.hpp>

#include <algorithm>
#include <string>

namespace ferrum::detail {

using boost::system::error_code;

held_lane lane_dispatcher::hand_out(lane& l) noexcept { return held_lane(*l.owner, l.index, l.contents, l.out); }

std::size_t lane_dispatcher::join(const lane_pool* pool, std::span<const std::unique_ptr<lane>> lanes,
                                  gpu::device& device, const bucket_id& bucket, lane_maker maker, bool made) {
  member_state m{pool,
                 lanes,
                 &device,
                 &bucket,
                 std::vector(lanes.size(), made ? lane_state::free : lane_state::absent),
                 {},
                 std::vector<std::uint64_t>(lanes.size(), 0),
                 {},
                 maker};
  m.free.reserve(lanes.size());
  if (made)
    for (const auto& l : lanes) m.free.push_back(l.get());
  const std::lock_guard lock(mutex_);
  members_.push_back(std::move(m));
  return members_.size() - 1;
}

lane_dispatcher::member_state& lane_dispatcher::member_of(const lane& l) noexcept {
  for (member_state& m : members_)
    if (m.pool == l.owner) return m;
  return members_.front();  // unreachable: a lane handed out here is a member's
}

bool lane_dispatcher::refused(const error_code& closed, const std::atomic<bool>* cancelled, error_code& ec) noexcept {
  if (closed) {
    ec = closed;
  } else if (cancelled != nullptr && cancelled->load()) {
    ec = boost::asio::error::operation_aborted;
  }
  return static_cast<bool>(ec);
}

held_lane lane_dispatcher::acquire(waiter& w, error_code& ec, const std::atomic<bool>* cancelled) {
  handover h;
  {
    const std::lock_guard lock(mutex_);
    if (refused(closed_, cancelled, ec)) return {};
    // With a free lane nobody waits (give-backs hand lanes over directly): the
    // newcomer takes the lane free longest, whichever device it is on.
    member_state* from = nullptr;
    for (member_state& m : members_) {
      if (m.free.empty() || m.device->lost()) continue;
      if (from == nullptr || m.freed_at[m.free.front()->index] < from->freed_at[from->free.front()->index]) from = &m;
    }
    if (from != nullptr) return hand_out(*take_free_locked(*from));
    if (any_hopeless_locked()) {
      ec = make_error_code(errc::all_lanes_quarantined);
      return {};
    }
    waiters_.push(w);
    make_if_needed_locked(nullptr, true, h);
  }
  notify(h);
  return {};
}

held_lane lane_dispatcher::acquire_from(std::size_t member, waiter& w, error_code& ec,
                                        const std::atomic<bool>* cancelled) {
  handover h;
  {
    const std::lock_guard lock(mutex_);
    if (refused(closed_, cancelled, ec)) return {};
    member_state& m = members_[member];
    // FIFO: free lanes rotate, the longest free first, so that every lane is
    // used in turn (its fence the oldest) and warm-up touches all of them.
    if (!m.free.empty()) return hand_out(*take_free_locked(m));
    if (hopeless_locked(m)) {
      ec = make_error_code(errc::all_lanes_quarantined);
      return {};
    }
    m.own.push(w);
    make_if_needed_locked(&m, false, h);
  }
  notify(h);
  return {};
}

bool lane_dispatcher::cancel(waiter& w) noexcept {
  const std::lock_guard lock(mutex_);
  if (waiters_.remove(w)) return true;
  return std::any_of(members_.begin(), members_.end(), [&](member_state& m) { return m.own.remove(w); });
}

void lane_dispatcher::close(error_code ec) {
  handover h;
  {
    const std::lock_guard lock(mutex_);
    if (!closed_) closed_ = ec;
    for (member_state& m : members_) take_hopeless_locked(m, h);
  }
  notify(h);
}

lane_counts lane_dispatcher::counts(std::size_t member) const {
  const std::lock_guard lock(mutex_);
  const member_state& m = members_[member];
  lane_counts c;
  c.capacity = static_cast<std::uint32_t>(m.state.size());
  c.making = m.making;
  for (const lane_state s : m.state) {
    c.lanes += s != lane_state::absent && s != lane_state::changing ? 1 : 0;
    c.free += s == lane_state::free ? 1 : 0;
    c.in_flight += s == lane_state::in_flight || s == lane_state::returning ? 1 : 0;
    c.quarantined += s == lane_state::quarantined ? 1 : 0;
  }
  c.waiting = m.own.size() + waiters_.size();
  return c;
}

result<void> lane_dispatcher::release(std::size_t member, lane& l, std::uint64_t hold, std::uint64_t last) {
  handover h;
  {
    const std::lock_guard lock(mutex_);
    member_state& m = members_[member];
    if (auto held = check_held_locked(m, l, hold, "releasing"); !held) return held;
    // The proof that the GPU is done with the lane: its last value is reached.
    if (!m.device->queue().timeline().reached(last))
      return make_error(errc::fence_not_reached, "lane " + std::to_string(l.index) + " of bucket " +
                                                     quote_text(m.bucket->str()) + ": value " + std::to_string(last) +
                                                     " is not reached");
    h = hand_over_locked(m, l);
  }
  notify(h);
  return {};
}

result<void> lane_dispatcher::set_aside(std::size_t member, lane& l, std::uint64_t hold, lane_state state,
                                        const char* action) {
  handover h;
  {
    const std::lock_guard lock(mutex_);
    member_state& m = members_[member];
    if (auto held = check_held_locked(m, l, hold, action); !held) return held;
    set_state_locked(m, l, state);
    take_hopeless_locked(m, h);
  }
  notify(h);
  return {};
}

void lane_dispatcher::hand_back(lane& l) noexcept {
  handover h;
  {
    const std::lock_guard lock(mutex_);
    h = hand_over_locked(member_of(l), l);
  }
  notify(h);
}

void lane_dispatcher::keep_quarantined(lane& l) noexcept {
  handover h;
  {
    const std::lock_guard lock(mutex_);
    member_state& m = member_of(l);
    set_state_locked(m, l, lane_state::quarantined);
    take_hopeless_locked(m, h);
  }
  notify(h);
}

void lane_dispatcher::made(lane& l, error_code ec) noexcept {
  handover h;
  {
    const std::lock_guard lock(mutex_);
    member_state& m = member_of(l);
    --m.making;
    if (!ec) {
      h = hand_over_locked(m, l);
    } else {
      m.state[l.index] = lane_state::absent;
      // The lane was made for the first waiter: it fails, and the others
      // still waiting get another try.
      h.failed = m.own.pop();
      if (h.failed == nullptr) h.failed = waiters_.pop();
      h.failed_ec = ec;
      make_if_needed_locked(&m, true, h);
    }
  }
  notify(h);
}

std::vector<lane*> lane_dispatcher::trim(std::size_t member) {
  const std::lock_guard lock(mutex_);
  member_state& m = members_[member];
  std::vector<lane*> taken = m.free;
  for (lane* l : taken) m.state[l->index] = lane_state::changing;
  m.free.clear();
  return taken;
}

void lane_dispatcher::trimmed(lane& l) noexcept {
  handover h;
  {
    const std::lock_guard lock(mutex_);
    member_state& m = member_of(l);
    m.state[l.index] = lane_state::absent;
    // A waiter that came while the lane was being freed has one made.
    make_if_needed_locked(&m, true, h);
  }
  notify(h);
}

result<void> lane_dispatcher::check_held_locked(const member_state& m, const lane& l, std::uint64_t hold,
                                                const char* action) const {
  const auto where = [&] { return std::string(action) + " lane " + std::to_string(l.index); };
  const std::string& bucket = m.bucket->str();
  const auto not_held = [&](const std::string& why) {
    return make_error(errc::lane_not_held, where() + " of bucket " + quote_text(bucket) + " under hand-out " +
                                               std::to_string(hold) + ": " + why);
  };
  switch (m.state[l.index]) {
    case lane_state::free:
      return not_held("it is free");
    case lane_state::returning:
      return not_held("it was given back already; its fence watch returns it");
    case lane_state::quarantined:
      return not_held("it is quarantined");
    case lane_state::absent:
    case lane_state::changing:
      return not_held("it has no memory (not made, or trimmed)");
    case lane_state::in_flight:
      break;
  }
  const std::uint64_t current = l.out.hold.load(std::memory_order_relaxed);
  if (hold != current)
    return not_held("that hand-out is over; the lane is held under hand-out " + std::to_string(current));
  return {};
}

void lane_dispatcher::set_state_locked(member_state& m, lane& l, lane_state state) noexcept {
  m.state[l.index] = state;
  // Every change ends the current hand-out, if any (a hand-out from one
  // holder straight to the next is a change too).
  l.out.hold.store(l.out.hold.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

lane* lane_dispatcher::take_free_locked(member_state& m) noexcept {
  lane* l = m.free.front();
  m.free.erase(m.free.begin());
  set_state_locked(m, *l, lane_state::in_flight);
  return l;
}

bool lane_dispatcher::hopeless_locked(const member_state& m) const noexcept {
  return closed_ ||
         std::all_of(m.state.begin(), m.state.end(), [](lane_state s) { return s == lane_state::quarantined; });
}

bool lane_dispatcher::serves_any_locked(const member_state& m) const noexcept {
  return !m.device->lost() && !hopeless_locked(m);
}

bool lane_dispatcher::any_hopeless_locked() const noexcept {
  return closed_ ||
         std::none_of(members_.begin(), members_.end(), [&](const member_state& m) { return serves_any_locked(m); });
}

void lane_dispatcher::take_hopeless_locked(member_state& m, handover& h) noexcept {
  const error_code ec = closed_ ? closed_ : make_error_code(errc::all_lanes_quarantined);
  if (!m.own.empty() && hopeless_locked(m)) {
    // Put in front of those taken before: close() takes every lane
    // pool's, all with one code.
    waiter* taken = m.own.take_all();
    waiter* tail = taken;
    while (tail->next != nullptr) tail = tail->next;
    tail->next = h.own_hopeless;
    h.own_hopeless = taken;
    h.own_ec = ec;
  }
  if (!waiters_.empty() && any_hopeless_locked()) {
    h.any_hopeless = waiters_.take_all();
    h.any_ec = ec;
  }
}

lane_dispatcher::handover lane_dispatcher::hand_over_locked(member_state& m, lane& l) noexcept {
  handover h;
  h.handed = &l;
  h.next = m.own.pop();
  // A lost device's lanes serve no more of the bucket's waves: they run on
  // the other devices.
  const bool lost = m.device->lost();
  if (h.next == nullptr && !lost) h.next = waiters_.pop();
  if (h.next != nullptr) {
    set_state_locked(m, l, lane_state::in_flight);
    return h;
  }
  set_state_locked(m, l, lane_state::free);
  m.freed_at[l.index] = ++frees_;
  m.free.push_back(&l);
  // Its return may leave the bucket's waiters nothing to wait for.
  if (lost) take_hopeless_locked(m, h);
  return h;
}

void lane_dispatcher::make_if_needed_locked(member_state* m, bool any, handover& h) noexcept {
  if (h.make != nullptr || closed_) return;
  const auto can_make = [](const member_state& x) {
    return std::find(x.state.begin(), x.state.end(), lane_state::absent) != x.state.end();
  };
  if (m != nullptr && m->making < m->own.size() && can_make(*m)) {
    start_making_locked(*m, h);
    return;
  }
  if (!any) return;
  std::size_t making = 0;
  for (const member_state& x : members_) making += x.making;
  if (making >= waiters_.size()) return;
  // On the device with the fewest lanes, so that waves spread over devices.
  member_state* to = nullptr;
  std::size_t fewest = 0;
  for (member_state& x : members_) {
    if (!serves_any_locked(x) || !can_make(x)) continue;
    const auto absent = static_cast<std::size_t>(std::count(x.state.begin(), x.state.end(), lane_state::absent));
    const std::size_t lanes = x.state.size() - absent;
    if (to == nullptr || lanes < fewest) {
      to = &x;
      fewest = lanes;
    }
  }
  if (to != nullptr) start_making_locked(*to, h);
}

void lane_dispatcher::start_making_locked(member_state& m, handover& h) noexcept {
  const auto absent = std::find(m.state.begin(), m.state.end(), lane_state::absent);
  *absent = lane_state::changing;
  ++m.making;
  h.maker = m.maker;
  h.make = m.lanes[static_cast<std::size_t>(absent - m.state.begin())].get();
}

void lane_dispatcher::notify(const handover& h) noexcept {
  // The hand-out was changed under the lock: the handle reads it here, on
  // the thread that changed it.
  if (h.next != nullptr) h.next->handed(h.next, {}, hand_out(*h.handed));
  if (h.failed != nullptr) h.failed->handed(h.failed, h.failed_ec, {});
  fail_all(h.own_hopeless, h.own_ec);
  fail_all(h.any_hopeless, h.any_ec);
  if (h.make != nullptr) h.maker.start(h.maker.pool, *h.make);
}

void lane_dispatcher::fail_all(waiter* list, error_code ec) noexcept {
  while (list != nullptr) {
    waiter* w = list;
    list = w->next;
    w->handed(w, ec, {});
  }
}

}  // namespace ferrum::detail
