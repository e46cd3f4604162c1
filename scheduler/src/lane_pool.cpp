#include "ferrum/scheduler/lane_pool.hpp"

#include "lane_group.hpp"
#include "submission_plan.hpp"

#include <boost/asio/error.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

namespace ferrum {

namespace {

// One resource a node lists, resolved for every lane of a bucket: its
// descriptor and its bytes' place in a lane's memory.
struct resolved_resource {
  const resource_descriptor* descriptor;
  const resource_id* id;  // the compiled program's
  std::size_t offset;
  std::size_t size;
};

// Every node's resources (the plan's order), nodes side by side; `begin`
// gets where each node's start (node_count + 1 entries). Errors:
// binding_plan_mismatch when `p` is not the plan `program` was compiled from.
result<std::vector<resolved_resource>> resolve_node_resources(const plan& p, const compiled_program& program,
                                                              const compiled_bucket& bucket,
                                                              std::vector<std::size_t>& begin) {
  const auto mismatch = [&](const std::string& what) {
    return make_error(errc::binding_plan_mismatch, "bucket " + quote_text(bucket.id.str()) + ": " + what +
                                                       ": the plan is not the one the program was compiled from");
  };
  if (p.nodes.size() != program.node_count) return mismatch(std::to_string(p.nodes.size()) + " nodes");
  // Per plan resource: its projection in the bucket and its pool's offset.
  std::vector<std::optional<resolved_resource>> places(p.resources.size());
  for (std::size_t d = 0; d < program.domains.size(); ++d) {
    const std::vector<std::size_t>& members = program.domains[d].members;
    const std::vector<projection>& projections = bucket.capacity_layouts[d].projections;
    for (std::size_t m = 0; m < members.size(); ++m) {
      if (members[m] >= p.resources.size() || p.resources[members[m]].id != projections[m].resource)
        return mismatch("resource " + quote_text(projections[m].resource.str()));
      places[members[m]] = resolved_resource{&p.resources[members[m]], &projections[m].resource,
                                             static_cast<std::size_t>(bucket.pool_offsets[d] + projections[m].offset),
                                             static_cast<std::size_t>(projections[m].capacity)};
    }
  }
  std::vector<std::pair<std::string_view, std::size_t>> by_id;
  by_id.reserve(p.resources.size());
  for (std::size_t r = 0; r < p.resources.size(); ++r) by_id.emplace_back(p.resources[r].id.view(), r);
  std::sort(by_id.begin(), by_id.end());

  std::vector<resolved_resource> resolved;
  begin.assign(1, 0);
  begin.reserve(p.nodes.size() + 1);
  for (const plan_node& node : p.nodes) {
    for (const resource_id& id : node.resources) {
      const auto at = std::lower_bound(by_id.begin(), by_id.end(), std::pair(id.view(), std::size_t{0}));
      if (at == by_id.end() || at->first != id.view() || !places[at->second])
        return mismatch("node " + quote_text(node.id.str()) + "'s resource " + quote_text(id.str()));
      resolved.push_back(*places[at->second]);
    }
    begin.push_back(resolved.size());
  }
  return resolved;
}

}  // namespace

result<std::unique_ptr<lane_pool>> lane_pool::create(const plan& p, const compiled_program& program,
                                                     const compiled_bucket& bucket, gpu::device& device,
                                                     executor_type executor, bool gpu_timestamps,
                                                     queue_placement queues) {
  if (!bucket.binding) return make_error(errc::no_binding_layout, "bucket " + quote_text(bucket.id.str()));
  const program_binding_layout& layout = *bucket.binding;
  // The binding domain is the pool whose claim the layout covers.
  const auto domain = std::find_if(program.wave_layouts.begin(), program.wave_layouts.end(),
                                   [&](const wave_domain_layout& w) { return w.claim == layout.claim(); });
  if (domain == program.wave_layouts.end())
    return make_error(errc::missing_domain_layout, "bucket " + quote_text(bucket.id.str()));
  const std::size_t domain_index = static_cast<std::size_t>(domain - program.wave_layouts.begin());
  std::vector<std::size_t> resource_begin;
  auto resolved = resolve_node_resources(p, program, bucket, resource_begin);
  if (!resolved) return resolved.error();
  auto evidence = record_backing_slices(p, bucket.id, domain->claim, bucket.capacity_layouts[domain_index]);
  if (!evidence) return evidence.error();
  const auto binding_offset = static_cast<std::size_t>(bucket.pool_offsets[domain_index]);

  std::unique_ptr<lane_pool> pool(new lane_pool(bucket, device, std::move(executor)));
  pool->lanes_.reserve(program.lanes);
  pool->free_.reserve(program.lanes);
  pool->state_.assign(program.lanes, lane_state::free);
  for (std::uint32_t index = 0; index < program.lanes; ++index) {
    auto l = std::make_unique<lane>();
    l->index = index;
    l->pool = pool.get();
    // Every pool of the bucket, as the compiler placed them.
    auto arena = device.create_arena(static_cast<std::size_t>(bucket.lane_bytes()));
    if (!arena) return arena.error();
    l->arena = std::move(*arena);
    l->arena->guard();
    l->binding_target = {
        bucket.id, index, allocation_lifetime::invocation,
        l->arena->bytes().subspan(binding_offset, static_cast<std::size_t>(layout.physical_size_bytes()))};
    l->evidence = *evidence;
    auto bound =
        execution_binding::bind(program.hash, program.node_count, bucket.binding, l->binding_target, l->evidence);
    if (!bound) return bound.error();
    l->binding.emplace(std::move(*bound));
    // Every node's resources on this lane; reserved first: the grants point
    // into `granted`.
    l->resources.reserve(resolved->size());
    l->granted.reserve(resolved->size());
    for (const resolved_resource& r : *resolved) {
      const gpu::arena_range& range = l->granted.emplace_back(l->arena->range(r.offset, r.size));
      l->resources.push_back(
          {r.id, r.descriptor->kind, r.descriptor->lifetime, range, l->arena->bytes().subspan(r.offset, r.size)});
    }
    l->resource_begin = resource_begin;
    // Per node (bind checked every slot: node in range, inside the arena):
    // its handle on its slot, that slot as a range, and its list, granted the
    // node's resources.
    l->nodes.reserve(program.node_count);
    l->slots.reserve(program.node_count);
    l->lists.reserve(program.node_count);
    for (std::size_t node = 0; node < program.node_count; ++node) {
      const std::optional<node_binding>& handle = l->nodes.emplace_back(l->binding->node(node));
      l->slots.push_back(handle ? l->arena->range(binding_offset + static_cast<std::size_t>(handle->slot().offset),
                                                  static_cast<std::size_t>(handle->slot().capacity))
                                : gpu::arena_range{});
      auto list = device.create_command_list(detail::placed_queue(program.dependencies, node, queues));
      if (!list) return list.error();
      (*list)->grant(std::span<const gpu::arena_range>(l->granted)
                         .subspan(resource_begin[node], resource_begin[node + 1] - resource_begin[node]));
      l->submit_lists.push_back(list->get());
      l->lists.push_back(std::move(*list));
    }
    if (gpu_timestamps) {
      auto stamps = device.create_timestamp_pool(2 * program.node_count);
      if (!stamps) return stamps.error();
      l->stamps = std::move(*stamps);
    }
    l->watch.emplace(*pool, *l);
    pool->free_.push_back(l.get());
    pool->lanes_.push_back(std::move(l));
  }
  return pool;
}

lane::fence_watch::fence_watch(lane_pool& owner, lane& watched) noexcept
    : gpu::timeline_wait(0, &lane_pool::watched), pool(&owner), target(&watched) {}

lane_pool::~lane_pool() {
  gpu::timeline& timeline = device_->queue().timeline();
  for (std::size_t i = 0; i < lanes_.size(); ++i) {
    lane& l = *lanes_[i];
    if (l.watch->active.load(std::memory_order_acquire) && !timeline.cancel_wait(&*l.watch)) {
      // The timeline is completing the watch on another thread right now:
      // it touches this pool until it clears `active`, which takes moments.
      while (l.watch->active.load(std::memory_order_acquire)) std::this_thread::yield();
    }
    // A watched lane's GPU work may still run: the device keeps its memory
    // until the fence is reached.
    const std::uint64_t last = last_submitted(l);
    if (state_[i] == lane_state::free || timeline.reached(last)) continue;
    for (auto& list : l.lists) device_->retire(std::move(list), last);
    device_->retire(std::move(l.arena), last);
    if (l.stamps) device_->retire(std::move(l.stamps), last);
  }
}

lane_counts lane_pool::counts() const {
  const std::lock_guard lock(*mutex_);
  lane_counts c;
  c.lanes = static_cast<std::uint32_t>(lanes_.size());
  for (const lane_state s : state_) {
    c.free += s == lane_state::free ? 1 : 0;
    c.in_flight += s == lane_state::in_flight || s == lane_state::returning ? 1 : 0;
    c.quarantined += s == lane_state::quarantined ? 1 : 0;
  }
  c.waiting = waiters_.size() + (group_ != nullptr ? group_->waiting_locked() : 0);
  return c;
}

lane* lane_pool::acquire(waiter& w, boost::system::error_code& ec, const std::atomic<bool>* cancelled) {
  const std::lock_guard lock(*mutex_);
  if (refused(closed_, cancelled, ec)) return nullptr;
  // FIFO: a free lane goes to the newcomer only when nobody waits before it
  // (with a free lane nobody waits: releases hand lanes over directly).
  // Free lanes rotate, the longest free first: every lane is used in turn
  // (its fence the oldest), so that warm-up touches all of them.
  if (!free_.empty()) return take_free_locked();
  if (hopeless_locked()) {
    ec = make_error_code(errc::all_lanes_quarantined);
    return nullptr;
  }
  waiters_.push(w);
  return nullptr;
}

bool lane_pool::refused(const boost::system::error_code& closed, const std::atomic<bool>* cancelled,
                        boost::system::error_code& ec) noexcept {
  if (closed) {
    ec = closed;
  } else if (cancelled != nullptr && cancelled->load()) {
    ec = boost::asio::error::operation_aborted;
  }
  return static_cast<bool>(ec);
}

lane* lane_pool::take_free_locked() noexcept {
  lane* l = free_.front();
  free_.erase(free_.begin());
  set_state_locked(*l, lane_state::in_flight);
  return l;
}

void lane_pool::set_state_locked(lane& l, lane_state state) noexcept {
  state_[l.index] = state;
  // Every change ends the current hand-out, if any (a hand-out from one
  // holder straight to the next is a change too).
  l.hold.store(l.hold.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

bool lane_pool::cancel(waiter& w) noexcept {
  const std::lock_guard lock(*mutex_);
  return waiters_.remove(w);
}

lane_pool::handover lane_pool::hand_over_locked(lane& l) noexcept {
  handover h;
  h.next = waiters_.pop();
  // A lost device's lanes serve no more of its group's waves: they run on
  // the other devices.
  const bool lost_in_group = group_ != nullptr && device_->lost();
  if (h.next == nullptr && group_ != nullptr && !lost_in_group) h.next = group_->pop_locked();
  if (h.next != nullptr) {
    set_state_locked(l, lane_state::in_flight);
    return h;
  }
  set_state_locked(l, lane_state::free);
  if (group_ != nullptr) freed_at_[l.index] = group_->tick_locked();
  free_.push_back(&l);
  if (lost_in_group) h.hopeless = detach_if_hopeless_locked();
  return h;
}

void lane_pool::notify(const handover& h, lane& l) noexcept {
  if (h.next != nullptr) h.next->granted(h.next, {}, &l);
  fail_hopeless(h.hopeless);
}

bool lane_pool::hopeless_locked() const noexcept {
  return closed_ ||
         std::all_of(state_.begin(), state_.end(), [](lane_state s) { return s == lane_state::quarantined; });
}

bool lane_pool::serves_group_locked() const noexcept { return !device_->lost() && !hopeless_locked(); }

lane_pool::hopeless_waiters lane_pool::detach_if_hopeless_locked() noexcept {
  hopeless_waiters hopeless;
  if (!waiters_.empty() && hopeless_locked()) {
    hopeless.own_ec = closed_ ? closed_ : make_error_code(errc::all_lanes_quarantined);
    hopeless.own = waiters_.take_all();
  }
  if (group_ != nullptr) hopeless.group = group_->detach_if_hopeless_locked(hopeless.group_ec);
  return hopeless;
}

void lane_pool::fail_hopeless(const hopeless_waiters& hopeless) noexcept {
  fail_all(hopeless.own, hopeless.own_ec);
  fail_all(hopeless.group, hopeless.group_ec);
}

void lane_pool::fail_all(waiter* list, boost::system::error_code ec) noexcept {
  while (list != nullptr) {
    waiter* w = list;
    list = w->next;
    w->granted(w, ec, nullptr);
  }
}

std::uint64_t lane_pool::last_submitted(const lane& l) noexcept {
  // The lists know their own last value, so a holder that submitted them
  // without recording `fence` cannot have the lane reused too early. Values
  // are the compute queue's: a wave whose lists also ran on another queue
  // joined them there, and its submitted value is the join's
  // (submission_plan.hpp).
  std::uint64_t last = l.submitted_value;
  for (const gpu::command_list* list : l.submit_lists)
    if (list->submitted_queue() == &list->device().queue()) last = std::max(last, list->submitted_value());
  return last;
}

result<void> lane_pool::check_held_locked(const lane& l, std::uint64_t hold, const char* action) const {
  const auto where = [&] { return std::string(action) + " lane " + std::to_string(l.index); };
  if (l.index >= lanes_.size() || lanes_[l.index].get() != &l)
    return make_error(errc::foreign_lane,
                      where() + ": it belongs to another pool than bucket " + quote_text(bucket_->id.str()) + "'s");
  const auto not_held = [&](const std::string& why) {
    return make_error(errc::lane_not_held, where() + " of bucket " + quote_text(bucket_->id.str()) +
                                               " under hand-out " + std::to_string(hold) + ": " + why);
  };
  switch (state_[l.index]) {
    case lane_state::free:
      return not_held("it is free");
    case lane_state::returning:
      return not_held("it was given back already; its fence watch returns it");
    case lane_state::quarantined:
      return not_held("it is quarantined");
    case lane_state::in_flight:
      break;
  }
  const std::uint64_t current = l.hold.load(std::memory_order_relaxed);
  if (hold != current)
    return not_held("that hand-out is over; the lane is held under hand-out " + std::to_string(current));
  return {};
}

result<void> lane_pool::release(lane& l, std::uint64_t hold) {
  // The proof that the GPU is done with the lane: its last value is reached.
  const std::uint64_t last = last_submitted(l);
  handover h;
  {
    const std::lock_guard lock(*mutex_);
    if (auto held = check_held_locked(l, hold, "releasing"); !held) return held;
    if (!device_->queue().timeline().reached(last))
      return make_error(errc::fence_not_reached, "lane " + std::to_string(l.index) + " of bucket " +
                                                     quote_text(bucket_->id.str()) + ": value " + std::to_string(last) +
                                                     " is not reached");
    h = hand_over_locked(l);
  }
  notify(h, l);
  return {};
}

void lane_pool::release_reached(lane& l) noexcept {
  handover h;
  {
    const std::lock_guard lock(*mutex_);
    h = hand_over_locked(l);
  }
  notify(h, l);
}

result<void> lane_pool::quarantine(lane& l, std::uint64_t hold) {
  return watch(l, hold, lane_state::quarantined, "quarantining");
}

result<void> lane_pool::release_when_reached(lane& l, std::uint64_t hold) {
  if (device_->queue().timeline().reached(last_submitted(l))) return release(l, hold);
  return watch(l, hold, lane_state::returning, "releasing");
}

result<void> lane_pool::watch(lane& l, std::uint64_t hold, lane_state state, const char* action) {
  hopeless_waiters hopeless;
  {
    const std::lock_guard lock(*mutex_);
    if (auto held = check_held_locked(l, hold, action); !held) return held;
    set_state_locked(l, state);
    hopeless = detach_if_hopeless_locked();
    // Counted before the lane leaves its holder's hands, so that no shutdown
    // completes in between (lock order: this pool's, then the owner's).
    if (watch_changed_ != nullptr) watch_changed_(watch_context_, +1);
  }
  fail_hopeless(hopeless);
  l.submitted_value = last_submitted(l);
  l.watch->value = l.submitted_value;
  l.watch->active.store(true, std::memory_order_release);
  // Completes at once when the fence is reached already or the device failed.
  // Never pending: the lane was held (check_held_locked), so its watch is idle.
  (void)device_->queue().timeline().start_wait(&*l.watch);
  return {};
}

void lane_pool::watched(gpu::timeline_wait* wait, boost::system::error_code ec) noexcept {
  auto* watch = static_cast<lane::fence_watch*>(wait);
  lane_pool& pool = *watch->pool;
  handover h;
  {
    const std::lock_guard lock(*pool.mutex_);
    if (!ec) {
      // The GPU is done with the lane after all: back to service.
      h = pool.hand_over_locked(*watch->target);
    } else {
      // A device failure leaves the lane in quarantine for good.
      pool.set_state_locked(*watch->target, lane_state::quarantined);
      h.hopeless = pool.detach_if_hopeless_locked();
    }
  }
  notify(h, *watch->target);
  if (pool.watch_changed_ != nullptr) pool.watch_changed_(pool.watch_context_, -1);
  // Last: once clear, the pool's destructor may go ahead.
  watch->active.store(false, std::memory_order_release);
}

void lane_pool::close(boost::system::error_code ec) {
  hopeless_waiters hopeless;
  {
    const std::lock_guard lock(*mutex_);
    if (!closed_) closed_ = ec;
    hopeless = detach_if_hopeless_locked();
  }
  fail_hopeless(hopeless);
}

// --- waiter_queue -------------------------------------------------------------------

void lane_pool::waiter_queue::push(waiter& w) noexcept {
  w.next = nullptr;
  (tail_ != nullptr ? tail_->next : head_) = &w;
  tail_ = &w;
  ++size_;
}

bool lane_pool::waiter_queue::remove(waiter& w) noexcept {
  waiter* previous = nullptr;
  for (waiter* at = head_; at != nullptr; previous = at, at = at->next) {
    if (at != &w) continue;
    (previous != nullptr ? previous->next : head_) = at->next;
    if (tail_ == at) tail_ = previous;
    --size_;
    return true;
  }
  return false;
}

lane_pool::waiter* lane_pool::waiter_queue::pop() noexcept {
  waiter* first = head_;
  if (first == nullptr) return nullptr;
  head_ = first->next;
  if (head_ == nullptr) tail_ = nullptr;
  --size_;
  return first;
}

lane_pool::waiter* lane_pool::waiter_queue::take_all() noexcept {
  waiter* all = head_;
  head_ = tail_ = nullptr;
  size_ = 0;
  return all;
}

}  // namespace ferrum
