// lane_pool.cpp — a bucket's lanes on one device: made from the lane recipe,
// given back, watched while quarantined. Who holds which lane is the
// dispatcher's (lane_dispatcher.cpp).
#include "ferrum/scheduler/lane_pool.hpp"

#include "ferrum/binding/image_access.hpp"
#include "ferrum/scheduler/lane_image_placement.hpp"

#include "lane.hpp"
#include "lane_dispatcher.hpp"
#include "lane_images.hpp"
#include "submission_plan.hpp"

#include "ferrum/async/post_once.hpp"
#include "ferrum/scheduler/lane_state.hpp"

#include <boost/asio/error.hpp>

#include <algorithm>
#include <new>
#include <string>
#include <thread>
#include <utility>

namespace ferrum {

using detail::lane;

namespace {

// What makes a bucket draw: an attachment among its images, or a buffer
// a node reads as vertices or indices (is_draw_access); nullptr where it
// does not.
const resource_id* drawn_resource(const compiled_bucket& bucket) noexcept {
  if (const auto i = std::ranges::find_if(bucket.lane.images, &lane_image::attachment); i != bucket.lane.images.end())
    return &i->resource;
  for (const lane_use& use : bucket.lane.uses)
    if (is_draw_access(use.access)) return &bucket.capacity_layouts[use.domain].projections[use.member].resource;
  return nullptr;
}

// The stages of a lane's lists on the compute queue: graphics where the
// bucket draws, so that every barrier of the wave covers the raster nodes'
// draws.
gpu::list_stages stages_of(const compiled_bucket& bucket) noexcept {
  return drawn_resource(bucket) != nullptr ? gpu::list_stages::graphics : gpu::list_stages::compute;
}

}  // namespace

struct lane_pool::fence_watch : gpu::timeline_wait {
  fence_watch(lane_pool& owner, lane& watched) noexcept
      : gpu::timeline_wait(0, &lane_pool::watched), pool(&owner), target(&watched) {}
  lane_pool* pool;
  lane* target;
  // Set from the watch's start until its completion is done with the pool.
  std::atomic<bool> active{false};
};

// Makes, frees and retires a lane's contents (the only writer of them).
struct detail::lane_memory {
  // Makes lane `l`'s contents (it has none) for `bucket` on `device` from
  // the bucket's lane recipe. On an error, what was made is freed again by
  // the caller.
  static result<void> make(lane& l, const compiled_program& program, const compiled_bucket& bucket, gpu::device& device,
                           bool gpu_timestamps, queue_placement queues, const lane_state_factory& make_state);
  // Frees `l`'s contents, which the GPU is done with: as before it was made.
  static void free(lane& l) noexcept;
  // Hands `l`'s contents to `device`, freed once `last` is reached.
  static void retire(lane& l, gpu::device& device, std::uint64_t last);

 private:
  // The engine's state of `l`, made last (lane_state.hpp).
  static result<void> make_state(lane& l, const compiled_program& program, const compiled_bucket& bucket,
                                 gpu::device& device, const lane_state_factory& factory);
  // Records the staging lists (held_lane.hpp) for the staged arenas, once:
  // every wave submits them again as they are.
  static result<void> record_staging(lane_contents& c, gpu::device& device, gpu::list_stages stages);
};

result<void> detail::lane_memory::record_staging(lane_contents& c, gpu::device& device, gpu::list_stages stages) {
  gpu::arena* upload = c.arena_of(memory_class::upload);
  gpu::arena* readback = c.arena_of(memory_class::readback);
  const auto record = [&](std::unique_ptr<gpu::command_list>& list, gpu::arena& staged, bool in) -> result<void> {
    auto made = device.create_command_list(queue_kind::compute, stages);
    if (!made) return made.error();
    list = std::move(*made);
    list->grant(c.windows_);
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
    if (auto r = record(c.stage_in_, *upload, true); !r) return r;
  }
  if (readback != nullptr && readback->staged()) {
    if (auto r = record(c.stage_out_, *readback, false); !r) return r;
  }
  return {};
}

result<void> detail::lane_memory::make_state(lane& l, const compiled_program& program, const compiled_bucket& bucket,
                                             gpu::device& device, const lane_state_factory& factory) {
  const auto failed = [&](std::string_view what) {
    return make_error(errc::lane_state_failed, "bucket " + quote_text(bucket.id.str()) + ", lane " +
                                                   std::to_string(l.index) + ": " + printable(what, 256));
  };
  try {
    auto state = factory(lane_state_context{device, program, bucket, l.index, l.contents});
    if (!state) return state.error();
    l.contents.state_ = std::move(*state);
  } catch (const std::exception& e) {
    return failed(e.what());
  } catch (...) {
    return failed("an exception of unknown type");
  }
  return {};
}

result<void> detail::lane_memory::make(lane& l, const compiled_program& program, const compiled_bucket& bucket,
                                       gpu::device& device, bool gpu_timestamps, queue_placement queues,
                                       const lane_state_factory& make_state) {
  const lane_recipe& recipe = bucket.lane;
  lane_contents& c = l.contents;
  // An arena per window, each of its class.
  for (memory_class m : window_order) {
    const memory_window& window = bucket.window(m);
    // Imported memory is the engine's, named by each wave.
    if (window.size == 0 || !allocated(m)) continue;
    auto arena = device.create_arena(static_cast<std::size_t>(window.size), m);
    if (!arena) return arena.error();
    (*arena)->guard();
    c.window_begin_[index_of(m)] = window.begin;
    c.windows_.push_back((*arena)->whole());
    c.memory_[index_of(m)] = std::move(*arena);
  }
  auto images = detail::make_lane_images(program, bucket, device);
  if (!images) return images.error();
  c.images_ = std::move(*images);
  // The binding pool is the upload window's first (compiled_program.hpp).
  // A plan without binding nodes has none: no node has a slot.
  gpu::arena* upload = c.arena_of(memory_class::upload);
  std::size_t binding_offset = 0;
  if (bucket.binding) {
    binding_offset = static_cast<std::size_t>(bucket.pool_offsets[recipe.binding_domain]);
    c.binding_target_ = {
        bucket.id, l.index, allocation_lifetime::invocation,
        upload->bytes().subspan(binding_offset, static_cast<std::size_t>(bucket.binding->physical_size_bytes()))};
    c.backing_ = recipe.backing;
    auto bound =
        execution_binding::bind(program.hash, program.node_count, bucket.binding, c.binding_target_, c.backing_);
    if (!bound) return bound.error();
    c.binding_.emplace(std::move(*bound));
  }
  // Every node's resources on this lane, and what each node's list is
  // granted; reserved first: the lists' grants point into `grants_`.
  c.resources_.reserve(recipe.uses.size());
  c.grants_.reserve(recipe.uses.size() + program.node_count * c.windows_.size());
  c.grant_begin_.reserve(program.node_count + 1);
  for (std::size_t node = 0; node < program.node_count; ++node) {
    c.grant_begin_.push_back(c.grants_.size());
    for (std::size_t u = recipe.use_begin[node]; u < recipe.use_begin[node + 1]; ++u) {
      const lane_use& use = recipe.uses[u];
      const memory_class m = program.domains[use.domain].memory;
      // A class without an arena has no bytes in this bucket (its window
      // is empty): nor has the resource. An image has none in any arena
      // (lane_contents::node_images has it).
      gpu::arena* arena = program.domains[use.domain].images ? nullptr : c.arena_of(m);
      const gpu::arena_range range =
          arena == nullptr ? gpu::arena_range{}
                           : arena->range(static_cast<std::size_t>(use.offset - c.window_begin_[index_of(m)]),
                                          static_cast<std::size_t>(use.size));
      std::span<std::byte> host = arena == nullptr ? std::span<std::byte>{} : arena->bytes();
      if (!host.empty()) host = host.subspan(range.offset, range.size);
      if (m == memory_class::imported && !program.domains[use.domain].images) {
        const auto k = std::find_if(recipe.imports.begin(), recipe.imports.end(), [&](const lane_import& i) {
          return i.domain == use.domain && i.member == use.member;
        });
        c.import_uses_.push_back(
            {c.resources_.size(), c.grants_.size(), static_cast<std::size_t>(k - recipe.imports.begin())});
      }
      c.grants_.push_back(range);
      c.resources_.emplace_back(&bucket.capacity_layouts[use.domain].projections[use.member].resource, use.kind,
                                use.lifetime, m, range, host);
    }
    for (const gpu::arena_range& window : c.windows_) c.grants_.push_back(window.arena->range(0, 0));
  }
  c.grant_begin_.push_back(c.grants_.size());
  c.resource_begin_ = recipe.use_begin;
  // Per node (bind checked every slot: node in range, inside the arena):
  // its handle on its slot, that slot as a range, and its list, granted the
  // node's resources.
  c.nodes_.reserve(program.node_count);
  c.slots_.reserve(program.node_count);
  c.node_lists_.reserve(program.node_count);
  for (std::size_t node = 0; node < program.node_count; ++node) {
    const std::optional<node_binding>& handle =
        c.nodes_.emplace_back(c.binding_ ? c.binding_->node(node) : std::nullopt);
    c.slots_.push_back(handle ? upload->range(binding_offset + static_cast<std::size_t>(handle->slot().offset),
                                              static_cast<std::size_t>(handle->slot().capacity))
                              : gpu::arena_range{});
    const queue_kind kind = detail::placed_queue(program.dependencies, node, queues, device);
    auto list =
        device.create_command_list(kind, kind == queue_kind::compute ? stages_of(bucket) : gpu::list_stages::compute);
    if (!list) return list.error();
    (*list)->grant(c.grants(node));
    c.lists_.push_back(list->get());
    c.node_lists_.push_back(std::move(*list));
  }
  for (std::size_t node : recipe.order)
    if (!program.culled(node)) c.ordered_lists_.push_back(c.lists_[node]);
  // Made whether or not the scheduler splits barriers: a few handles a lane.
  const std::size_t events = std::max(recipe.one_queue_split.events.size(), recipe.ordered_split.events.size());
  c.events_.reserve(events);
  for (std::size_t i = 0; i < events; ++i) {
    auto made = device.create_event();
    if (!made) return made.error();
    c.events_.push_back(std::move(*made));
  }
  if (auto staged = record_staging(c, device, stages_of(bucket)); !staged) return staged;
  if (c.stage_in_) c.all_lists_.push_back(c.stage_in_.get());
  c.all_lists_.insert(c.all_lists_.end(), c.lists_.begin(), c.lists_.end());
  if (c.stage_out_) c.all_lists_.push_back(c.stage_out_.get());
  if (gpu_timestamps) {
    auto timestamps = device.create_timestamp_pool(2 * program.node_count);
    if (!timestamps) return timestamps.error();
    c.timestamps_ = std::move(*timestamps);
  }
  if (make_state) return lane_memory::make_state(l, program, bucket, device, make_state);
  return {};
}

void detail::lane_memory::free(lane& l) noexcept {
  // Destroyed in reverse order of declaration: the lists before the arenas they reach.
  { const lane_contents gone = std::exchange(l.contents, lane_contents()); }
  l.out.submitted_value = 0;
  l.out.previous_wave = 0;
  l.out.recorded = false;
  l.out.covers_lists = false;
}

void detail::lane_memory::retire(lane& l, gpu::device& device, std::uint64_t last) {
  // Whole, so that its parts go in their order: the engine's state first,
  // then the lists, then the arenas they reach.
  struct retired_lane final : gpu::retirable {
    explicit retired_lane(lane_contents&& c) noexcept : contents(std::move(c)) {}
    lane_contents contents;
  };
  device.retire(std::make_unique<retired_lane>(std::exchange(l.contents, lane_contents())), last);
}

result<std::unique_ptr<lane_pool>> lane_pool::create(const compiled_program& program, const compiled_bucket& bucket,
                                                     gpu::device& device, executor_type executor, bool gpu_timestamps,
                                                     queue_placement queues, lane_making making,
                                                     lane_state_factory make_state) {
  return make(program, bucket, device, std::move(executor), gpu_timestamps, queues, making, std::move(make_state),
              std::make_shared<detail::lane_dispatcher>(), {});
}

result<std::unique_ptr<lane_pool>> lane_pool::make(const compiled_program& program, const compiled_bucket& bucket,
                                                   gpu::device& device, executor_type executor, bool gpu_timestamps,
                                                   queue_placement queues, lane_making making,
                                                   lane_state_factory make_state,
                                                   std::shared_ptr<detail::lane_dispatcher> dispatcher,
                                                   detail::lane_pool_hooks hooks) {
  if (bucket.binding && bucket.lane.binding_domain == lane_recipe::no_domain)
    return make_error(errc::missing_domain_layout, "bucket " + quote_text(bucket.id.str()));
  // Made when needed, a lane's timestamp pool would fail only then: the
  // device is asked now.
  if (const gpu::timestamp_clock clock = device.timestamps(); gpu_timestamps && !clock.supported)
    return make_error(errc::timestamps_unsupported,
                      "device " + quote_text(device.name()) + ": " + std::string(clock.calibration));
  // A plan that draws needs graphics on the compute queue: refused now, not
  // when its first lane is made.
  if (const resource_id* drawn = drawn_resource(bucket); drawn != nullptr && !device.limits().graphics)
    return make_error(errc::raster_unsupported, "bucket " + quote_text(bucket.id.str()) + ": " +
                                                    quote_text(drawn->view()) +
                                                    " is drawn (an attachment, vertices or indices), and the "
                                                    "compute queue of device " +
                                                    quote_text(device.name()) + " has no graphics");
  // Formats the device cannot use as the plan does: refused now, naming
  // the image, its access and the feature missing.
  if (auto formats = check_lane_image_formats(bucket, device); !formats) return formats.error();
  std::unique_ptr<lane_pool> pool(
      new lane_pool(program, bucket, device, std::move(executor), gpu_timestamps, queues, std::move(dispatcher)));
  auto images = lane_image_placement(bucket, device);
  if (!images) return images.error();
  pool->lane_bytes_ = bucket.lane_bytes() + images->bytes;
  pool->hooks_ = hooks;
  pool->make_state_ = std::move(make_state);
  pool->lanes_.reserve(program.lanes);
  pool->watches_.reserve(program.lanes);
  for (std::uint32_t index = 0; index < program.lanes; ++index) {
    auto l = std::make_unique<lane>();
    l->index = index;
    l->owner = pool.get();
    if (making == lane_making::at_create) {
      if (auto made = detail::lane_memory::make(*l, program, bucket, device, gpu_timestamps, queues, pool->make_state_);
          !made)
        return made.error();
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
    const std::uint64_t last = detail::last_submitted(l.contents, l.out);
    if (l.contents.made() && !timeline.reached(last)) detail::lane_memory::retire(l, *device_, last);
  }
}

lane_counts lane_pool::counts() const {
  lane_counts c = dispatcher_->counts(member_);
  c.bytes = std::uint64_t{c.lanes} * lane_bytes_;
  return c;
}

std::uint64_t lane_pool::trim() {
  const std::vector<lane*> taken = dispatcher_->trim(member_);
  for (lane* l : taken) {
    // Free lanes are done on the GPU: a give-back checked their fence.
    detail::lane_memory::free(*l);
    dispatcher_->trimmed(*l);
  }
  return std::uint64_t{taken.size()} * lane_bytes_;
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
        auto made = detail::lane_memory::make(*target, *pool->program_, *pool->bucket_, *pool->device_,
                                              pool->gpu_timestamps_, pool->queues_, pool->make_state_);
        ec = made ? boost::system::error_code() : made.error().code;
      } catch (const std::bad_alloc&) {
        ec = make_error_code(errc::out_of_host_memory);
      }
      if (ec) detail::lane_memory::free(*target);
    }
    pool->made(*target, ec);
  });
}

void lane_pool::made(lane& l, boost::system::error_code ec) noexcept {
  dispatcher_->made(l, ec);
  // Done with this lane pool before the hook, which may end the last thing
  // its scheduler waits for (and so the lane pool) on this very thread.
  const detail::lane_pool_hooks h = hooks_;
  making_.fetch_sub(1, std::memory_order_acq_rel);
  if (h.making != nullptr) h.making(h.context, -1);
}

held_lane detail::acquire_lane(lane_pool& pool, lane_waiter& w, boost::system::error_code& ec,
                               const std::atomic<bool>* cancelled) {
  return pool.dispatcher_->acquire_from(pool.member_, w, ec, cancelled);
}

bool detail::cancel_acquire(lane_pool& pool, lane_waiter& w) noexcept { return pool.dispatcher_->cancel(w); }

void lane_pool::close(boost::system::error_code ec) { dispatcher_->close(ec); }

result<void> held_lane::give_back(lane_return how) noexcept {
  if (out_ == nullptr) return {};
  auto back = pool_->give_back(index_, hold_, how);
  // Kept only while the GPU may still write the lane and the holder must wait.
  if (back || back.error().code != errc::fence_not_reached) out_ = nullptr;
  return back;
}

result<void> lane_pool::give_back(std::uint32_t index, std::uint64_t hold, lane_return how) {
  lane& l = *lanes_[index];
  const auto last = [&] { return detail::last_submitted(l.contents, l.out); };
  switch (how) {
    case lane_return::fence_reached:
      // The holder awaited its submission: its value must be reached (the
      // dispatcher checks). A wave's record covers every list; any other
      // holder's lists are read too.
      return release(l, hold, l.out.covers_lists ? l.out.submitted_value : last());
    case lane_return::unsubmitted: {
      // The lane's last value is an earlier holder's (reached: that is how
      // the lane came to this holder), unless an encoder submitted a list
      // itself: then it waits in quarantine for that.
      auto back = release(l, hold, last());
      if (back || back.error().code != errc::fence_not_reached) return back;
      return watch(l, hold, false, "quarantining");
    }
    case lane_return::after_fence:
      if (const std::uint64_t value = last(); device_->queue().timeline().reached(value))
        return release(l, hold, value);
      return watch(l, hold, true, "releasing");
    case lane_return::quarantined:
      return watch(l, hold, false, "quarantining");
  }
  return {};
}

result<void> lane_pool::release(lane& l, std::uint64_t hold, std::uint64_t last) {
  auto released = dispatcher_->release(member_, l, hold, last);
  if (released && hooks_.released != nullptr) hooks_.released(hooks_.context);
  return released;
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
  l.out.submitted_value = detail::last_submitted(l.contents, l.out);
  watch.value = l.out.submitted_value;
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
