// lane_pool.cpp — a bucket's lanes on one device: made from the lane recipe,
// given back, watched while quarantined. Who holds which lane is the
// dispatcher's (lane_dispatcher.cpp).
#include "ferrum/scheduler/lane_pool.hpp"

#include "lane_dispatcher.hpp"
#include "submission_plan.hpp"

#include "ferrum/async/post_once.hpp"

#include <boost/asio/error.hpp>

#include <algorithm>
#include <new>
#include <string>
#include <thread>
#include <utility>

namespace ferrum {

struct lane_pool::fence_watch : gpu::timeline_wait {
  fence_watch(lane_pool& owner, lane& watched) noexcept
      : gpu::timeline_wait(0, &lane_pool::watched), pool(&owner), target(&watched) {}
  lane_pool* pool;
  lane* target;
  // Set from the watch's start until its completion is done with the pool.
  std::atomic<bool> active{false};
};

namespace {

// Records lane `l`'s staging lists (lane.hpp) for its staged arenas, once:
// every wave submits them again as they are.
result<void> record_staging(lane& l, gpu::device& device) {
  gpu::arena* upload = l.arena_of(memory_class::upload);
  gpu::arena* readback = l.arena_of(memory_class::readback);
  const auto record = [&](std::unique_ptr<gpu::command_list>& list, gpu::arena& staged, bool in) -> result<void> {
    auto made = device.create_command_list();
    if (!made) return made.error();
    list = std::move(*made);
    list->grant(l.windows);
    // Opening with none: the lane's previous wave completed, and the host
    // saw its fence, before this submission (docs/design.md, "Barriers").
    if (auto r = list->begin(gpu::list_opening::by_hazards); !r) return r;
    if (!in) {
      if (auto r = list->barrier(); !r) return r;
    }
    if (auto r = list->stage(staged); !r) return r;
    if (in) {
      if (auto r = list->barrier(); !r) return r;
    }
    return list->end();
  };
  if (upload != nullptr && upload->staged()) {
    if (auto r = record(l.stage_in, *upload, true); !r) return r;
  }
  if (readback != nullptr && readback->staged()) {
    if (auto r = record(l.stage_out, *readback, false); !r) return r;
  }
  return {};
}

// Makes lane `l`'s memory (it has none) for `bucket` on `device` from the
// bucket's lane recipe. On an error, what was made is freed again by the caller.
result<void> make_lane(lane& l, const compiled_program& program, const compiled_bucket& bucket, gpu::device& device,
                       bool gpu_timestamps, queue_placement queues) {
  const lane_recipe& recipe = bucket.lane;
  const program_binding_layout& layout = *bucket.binding;
  // An arena per window, each of its class.
  for (memory_class c : window_order) {
    const memory_window& window = bucket.window(c);
    if (window.size == 0) continue;
    auto arena = device.create_arena(static_cast<std::size_t>(window.size), c);
    if (!arena) return arena.error();
    (*arena)->guard();
    l.window_begin[index_of(c)] = window.begin;
    l.windows.push_back((*arena)->whole());
    l.memory[index_of(c)] = std::move(*arena);
  }
  // The binding pool is the upload window's first (compiled_program.hpp).
  gpu::arena& upload = *l.arena_of(memory_class::upload);
  const auto binding_offset = static_cast<std::size_t>(bucket.pool_offsets[recipe.binding_domain]);
  l.binding_target = {bucket.id, l.index, allocation_lifetime::invocation,
                      upload.bytes().subspan(binding_offset, static_cast<std::size_t>(layout.physical_size_bytes()))};
  l.evidence = recipe.evidence;
  auto bound = execution_binding::bind(program.hash, program.node_count, bucket.binding, l.binding_target, l.evidence);
  if (!bound) return bound.error();
  l.binding.emplace(std::move(*bound));
  // Every node's resources on this lane, and what each node's list is
  // granted; reserved first: the grants point into `granted`.
  l.resources.reserve(recipe.uses.size());
  l.granted.reserve(recipe.uses.size() + program.node_count * l.windows.size());
  l.grant_begin.reserve(program.node_count + 1);
  for (std::size_t node = 0; node < program.node_count; ++node) {
    l.grant_begin.push_back(l.granted.size());
    for (std::size_t u = recipe.use_begin[node]; u < recipe.use_begin[node + 1]; ++u) {
      const lane_use& use = recipe.uses[u];
      const memory_class c = program.domains[use.domain].memory;
      // A class without an arena has no bytes in this bucket (its window
      // is empty): nor has the resource.
      const gpu::arena* arena = l.arena_of(c);
      const gpu::arena_range range =
          arena == nullptr ? gpu::arena_range{}
                           : arena->range(static_cast<std::size_t>(use.offset - l.window_begin[index_of(c)]),
                                          static_cast<std::size_t>(use.size));
      std::span<std::byte> host = arena == nullptr ? std::span<std::byte>{} : l.arena_of(c)->bytes();
      if (!host.empty()) host = host.subspan(range.offset, range.size);
      l.granted.push_back(range);
      l.resources.emplace_back(&bucket.capacity_layouts[use.domain].projections[use.member].resource, use.kind,
                               use.lifetime, c, range, host);
    }
    for (const gpu::arena_range& window : l.windows) l.granted.push_back(window.arena->range(0, 0));
  }
  l.grant_begin.push_back(l.granted.size());
  l.resource_begin = recipe.use_begin;
  // Per node (bind checked every slot: node in range, inside the arena):
  // its handle on its slot, that slot as a range, and its list, granted the
  // node's resources.
  l.nodes.reserve(program.node_count);
  l.slots.reserve(program.node_count);
  l.lists.reserve(program.node_count);
  for (std::size_t node = 0; node < program.node_count; ++node) {
    const std::optional<node_binding>& handle = l.nodes.emplace_back(l.binding->node(node));
    l.slots.push_back(handle ? upload.range(binding_offset + static_cast<std::size_t>(handle->slot().offset),
                                            static_cast<std::size_t>(handle->slot().capacity))
                             : gpu::arena_range{});
    auto list = device.create_command_list(detail::placed_queue(program.dependencies, node, queues));
    if (!list) return list.error();
    (*list)->grant(std::span<const gpu::arena_range>(l.granted).subspan(l.grant_begin[node],
                                                                        l.grant_begin[node + 1] - l.grant_begin[node]));
    l.submit_lists.push_back(list->get());
    l.lists.push_back(std::move(*list));
  }
  if (auto staged = record_staging(l, device); !staged) return staged;
  if (l.stage_in) l.all_lists.push_back(l.stage_in.get());
  l.all_lists.insert(l.all_lists.end(), l.submit_lists.begin(), l.submit_lists.end());
  if (l.stage_out) l.all_lists.push_back(l.stage_out.get());
  if (gpu_timestamps) {
    auto timestamps = device.create_timestamp_pool(2 * program.node_count);
    if (!timestamps) return timestamps.error();
    l.timestamps = std::move(*timestamps);
  }
  return {};
}

// Frees lane `l`'s memory, which the GPU is done with: it is as before it was made.
void free_lane(lane& l) noexcept {
  l.timestamps.reset();
  l.all_lists.clear();
  l.stage_out.reset();
  l.stage_in.reset();
  l.submit_lists.clear();
  l.lists.clear();
  l.grant_begin.clear();
  l.granted.clear();
  l.slots.clear();
  l.nodes.clear();
  l.resource_begin.clear();
  l.resources.clear();
  l.binding.reset();
  l.evidence.clear();
  l.binding_target = {};
  l.windows.clear();
  for (auto& arena : l.memory) arena.reset();
  l.window_begin = {};
  l.submitted_value = 0;
  l.previous_wave = 0;
  l.recorded = false;
}

}  // namespace

result<std::unique_ptr<lane_pool>> lane_pool::create(const compiled_program& program, const compiled_bucket& bucket,
                                                     gpu::device& device, executor_type executor, bool gpu_timestamps,
                                                     queue_placement queues, lane_making making,
                                                     std::shared_ptr<detail::lane_dispatcher> dispatcher) {
  if (!bucket.binding) return make_error(errc::no_binding_layout, "bucket " + quote_text(bucket.id.str()));
  if (bucket.lane.binding_domain == lane_recipe::no_domain)
    return make_error(errc::missing_domain_layout, "bucket " + quote_text(bucket.id.str()));
  // Made when needed, a lane's timestamp pool would fail only then: the
  // device is asked now.
  if (const gpu::timestamp_clock clock = device.timestamps(); gpu_timestamps && !clock.supported)
    return make_error(errc::timestamps_unsupported,
                      "device " + quote_text(device.name()) + ": " + std::string(clock.calibration));
  if (!dispatcher) dispatcher = std::make_shared<detail::lane_dispatcher>();
  std::unique_ptr<lane_pool> pool(
      new lane_pool(program, bucket, device, std::move(executor), gpu_timestamps, queues, std::move(dispatcher)));
  pool->lanes_.reserve(program.lanes);
  pool->watches_.reserve(program.lanes);
  for (std::uint32_t index = 0; index < program.lanes; ++index) {
    auto l = std::make_unique<lane>();
    l->index = index;
    l->owner = pool.get();
    if (making == lane_making::at_create) {
      if (auto made = make_lane(*l, program, bucket, device, gpu_timestamps, queues); !made) return made.error();
    }
    pool->watches_.push_back(std::make_unique<fence_watch>(*pool, *l));
    pool->lanes_.push_back(std::move(l));
  }
  pool->member_ = pool->dispatcher_->join(pool.get(), pool->lanes_, device, bucket.id,
                                          {&lane_pool::start_making, pool.get()}, making == lane_making::at_create);
  return pool;
}

lane_pool::lane_pool(const compiled_program& program, const compiled_bucket& bucket, gpu::device& device,
                     executor_type executor, bool gpu_timestamps, queue_placement queues,
                     std::shared_ptr<detail::lane_dispatcher> dispatcher)
    : program_(&program),
      bucket_(&bucket),
      device_(&device),
      executor_(std::move(executor)),
      gpu_timestamps_(gpu_timestamps),
      queues_(queues),
      dispatcher_(std::move(dispatcher)) {}

lane_pool::~lane_pool() {
  // A lane being made touches this lane pool until it is handed on.
  while (making_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  gpu::timeline& timeline = device_->queue().timeline();
  for (std::size_t i = 0; i < lanes_.size(); ++i) {
    lane& l = *lanes_[i];
    fence_watch& watch = *watches_[i];
    if (watch.active.load(std::memory_order_acquire) && !timeline.cancel_wait(&watch)) {
      // The timeline is completing the watch on another thread right now:
      // it touches this lane pool until it clears `active`, which takes moments.
      while (watch.active.load(std::memory_order_acquire)) std::this_thread::yield();
    }
    // A lane not reached (a free lane always is) may still be written by
    // the GPU: the device keeps its memory until the fence is reached.
    const std::uint64_t last = last_submitted(l);
    if (!l.made() || timeline.reached(last)) continue;
    for (auto& list : l.lists) device_->retire(std::move(list), last);
    for (auto* staging : {&l.stage_in, &l.stage_out})
      if (*staging) device_->retire(std::move(*staging), last);
    for (auto& arena : l.memory)
      if (arena) device_->retire(std::move(arena), last);
    if (l.timestamps) device_->retire(std::move(l.timestamps), last);
  }
}

lane_counts lane_pool::counts() const {
  lane_counts c = dispatcher_->counts(member_);
  c.bytes = std::uint64_t{c.lanes} * bucket_->lane_bytes();
  return c;
}

std::uint64_t lane_pool::trim() {
  const std::vector<lane*> taken = dispatcher_->trim(member_);
  for (lane* l : taken) {
    // Free lanes are done on the GPU: a give-back checked their fence.
    free_lane(*l);
    dispatcher_->trimmed(*l);
  }
  return std::uint64_t{taken.size()} * bucket_->lane_bytes();
}

void lane_pool::start_making(void* self, lane& l) noexcept {
  auto* pool = static_cast<lane_pool*>(self);
  // Counted until handed on, so that neither the lane pool nor its
  // scheduler goes while the lane is being made.
  pool->making_.fetch_add(1, std::memory_order_acq_rel);
  pool->hook(pool->hooks_.making, +1);
  async::post_once(pool->executor_, [pool, target = &l](bool run) noexcept {
    // Not run: its executor went with it queued.
    boost::system::error_code ec = boost::asio::error::operation_aborted;
    if (run) {
      try {
        auto made =
            make_lane(*target, *pool->program_, *pool->bucket_, *pool->device_, pool->gpu_timestamps_, pool->queues_);
        ec = made ? boost::system::error_code() : made.error().code;
      } catch (const std::bad_alloc&) {
        ec = make_error_code(errc::out_of_host_memory);
      }
      if (ec) free_lane(*target);
    }
    pool->made(*target, ec);
  });
}

void lane_pool::made(lane& l, boost::system::error_code ec) noexcept {
  dispatcher_->made(l, ec);
  // Done with this lane pool before the hook, which may end the last thing
  // its scheduler waits for (and so the lane pool) on this very thread.
  const hooks h = hooks_;
  making_.fetch_sub(1, std::memory_order_acq_rel);
  if (h.making != nullptr) h.making(h.context, -1);
}

lane* lane_pool::acquire(waiter& w, boost::system::error_code& ec, const std::atomic<bool>* cancelled) {
  return dispatcher_->acquire_from(member_, w, ec, cancelled);
}

bool lane_pool::cancel(waiter& w) noexcept { return dispatcher_->cancel(w); }

void lane_pool::close(boost::system::error_code ec) { dispatcher_->close(ec); }

std::uint64_t lane_pool::last_submitted(const lane& l) noexcept {
  // The lists know their own last value, so a holder that submitted them
  // without recording `submitted_value` cannot have the lane reused too
  // early. Values are the compute queue's: a wave whose lists also ran on
  // another queue joined them there, and its submitted value is the join's
  // (submission_plan.hpp).
  std::uint64_t last = l.submitted_value;
  for (const gpu::command_list* list : l.all_lists)
    if (list->submitted_queue() == &list->device().queue()) last = std::max(last, list->submitted_value());
  return last;
}

result<void> lane_pool::release(lane& l, std::uint64_t hold) {
  auto released = dispatcher_->release(member_, l, hold, last_submitted(l));
  if (released && hooks_.released != nullptr) hooks_.released(hooks_.context);
  return released;
}

result<void> lane_pool::quarantine(lane& l, std::uint64_t hold) { return watch(l, hold, false, "quarantining"); }

result<void> lane_pool::release_when_reached(lane& l, std::uint64_t hold) {
  if (device_->queue().timeline().reached(last_submitted(l))) return release(l, hold);
  return watch(l, hold, true, "releasing");
}

result<void> lane_pool::watch(lane& l, std::uint64_t hold, bool returning, const char* action) {
  // Counted before the lane leaves its holder's hands, so that no shutdown
  // completes in between.
  hook(hooks_.watching, +1);
  using state = detail::lane_dispatcher::lane_state;
  if (auto aside = dispatcher_->set_aside(member_, l, hold, returning ? state::returning : state::quarantined, action);
      !aside) {
    hook(hooks_.watching, -1);
    return aside;
  }
  fence_watch& watch = *watches_[l.index];
  l.submitted_value = last_submitted(l);
  watch.value = l.submitted_value;
  watch.active.store(true, std::memory_order_release);
  // Completes at once when the fence is reached already or the device failed.
  // Never pending: the lane was held (set_aside checked), so its watch is idle.
  (void)device_->queue().timeline().start_wait(&watch);
  return {};
}

void lane_pool::watched(gpu::timeline_wait* wait, boost::system::error_code ec) noexcept {
  auto* watch = static_cast<fence_watch*>(wait);
  lane_pool& pool = *watch->pool;
  if (!ec) {
    // The GPU is done with the lane after all: back to service.
    pool.dispatcher_->hand_back(*watch->target);
  } else {
    // A device failure leaves the lane in quarantine for good.
    pool.dispatcher_->keep_quarantined(*watch->target);
  }
  pool.hook(pool.hooks_.watching, -1);
  // Last: once clear, the lane pool's destructor may go ahead.
  watch->active.store(false, std::memory_order_release);
}

}  // namespace ferrum
