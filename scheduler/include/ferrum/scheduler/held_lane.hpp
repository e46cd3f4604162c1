// ferrum/scheduler/held_lane.hpp — a lane as its holder sees it: what the
// lane holds (lane_contents), and the handle a holder (a wave, a lane lease,
// a wave readback) holds it through (held_lane): one record of a submission
// and one give-back, checked inside (docs/design.md, "Lane memory").
//
// A lane's contents are made on the cold path by its lane pool from the
// bucket's lane recipe (compiled_bucket::lane): an arena per memory class
// holding the bucket's resource pools of that class as the compiler placed
// them, the layout bound to the upload arena, each node's resources resolved
// to ranges of them, one command list per node granted exactly those ranges,
// and the staging lists a staged arena needs. A lane pool makes them when it
// is made, or — with lane_making::when_needed — when a holder first needs
// the lane; a trim frees a free lane's contents, made afresh when needed.
// Only the lane pool writes them, and the holder points the lane's imported
// resources at its wave's (held_lane::import). Nobody else reaches them: a
// holder records into the lists and writes the bytes of its lane through a
// non-const lane_contents (held_lane, lane_lease); a const one — a wave
// readback's, an encoder's view of its wave's lane — hands out the arenas,
// lists, timestamps and state read-only.
#pragma once

#include "ferrum/binding/execution_binding.hpp"
#include "ferrum/error.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/scheduler_options.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <boost/system/error_code.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ferrum {

class lane_pool;

namespace detail {
struct lane_memory;
class lane_dispatcher;
struct lane_test_access;
}  // namespace detail

// A lane's images (docs/design.md, "Images"): one block of the device's
// image memory holding the bucket's images, placed by the device's sizes
// (place_lane_images); per node, the layout changes its list's opening
// barrier makes and the images it lists. An imported image (the engine's)
// is none of the block's: its entries name no image until a wave names one
// (wave_request::images), then the last wave's.
struct lane_images {
  std::unique_ptr<gpu::image_memory> memory;
  // What the block takes, and would take with no image sharing memory.
  std::uint64_t bytes = 0;
  std::uint64_t unaliased_bytes = 0;
  // Node n's are [begin[n], begin[n + 1]) of each.
  std::vector<gpu::layout_change> transitions;
  std::vector<std::size_t> transition_begin;
  std::vector<node_image> uses;
  std::vector<std::size_t> use_begin;
  // The views of the parts of the lane's images that nodes reach
  // (node_image::view), destroyed before the images.
  std::vector<std::unique_ptr<gpu::image_view>> views;
  // Each entry of `uses` or `transitions` that names an imported image:
  // which one (its place among the recipe's imported images), and whether
  // it is one of the image's first transitions (of subresources no earlier
  // use left), whose `from` is the layout the wave names.
  static constexpr std::size_t no_entry = static_cast<std::size_t>(-1);
  struct import_site {
    std::size_t import = 0;
    std::size_t use = no_entry;
    std::size_t transition = no_entry;
    bool first = false;
  };
  std::vector<import_site> imports;
};

class lane_contents {
 public:
  // Whether the lane has memory (made, not trimmed); the rest is empty when not.
  [[nodiscard]] bool made() const noexcept { return !windows_.empty(); }

  // The arena of class `c` (null: the bucket has none of it). Each is made
  // of its class (gpu::device::create_arena), so device memory has no host
  // bytes, and upload or readback memory may be staged.
  [[nodiscard]] gpu::arena* arena_of(memory_class c) noexcept { return memory_[index_of(c)].get(); }
  [[nodiscard]] const gpu::arena* arena_of(memory_class c) const noexcept { return memory_[index_of(c)].get(); }
  // Each arena whole, in window order: what a list needs to reach all of the lane.
  [[nodiscard]] std::span<const gpu::arena_range> windows() const noexcept { return windows_; }
  // Lane bytes [offset, offset + size) (resource pool d lies at lane offset
  // bucket().pool_offsets[d]) as a range of the arena holding them; an
  // empty range (no arena) when no one arena holds them all.
  [[nodiscard]] gpu::arena_range range(std::uint64_t offset, std::uint64_t size) const noexcept {
    for (std::size_t c = 0; c < memory_.size(); ++c) {
      if (memory_[c] == nullptr || offset < window_begin_[c]) continue;
      const std::uint64_t at = offset - window_begin_[c];
      if (at <= memory_[c]->size() && size <= memory_[c]->size() - at)
        return memory_[c]->range(static_cast<std::size_t>(at), static_cast<std::size_t>(size));
    }
    return {};
  }

  // What bind bound the layout to: the binding pool's bytes of the upload
  // arena, and the backing slices bind checked them against.
  [[nodiscard]] const lane_binding_target& binding_target() const noexcept { return binding_target_; }
  [[nodiscard]] std::span<const backing_slice> backing() const noexcept { return backing_; }
  // The bucket's layout bound to this lane, once, when it was made (the
  // arena never moves: every wave on the lane uses it); null for a plan
  // without binding nodes (no node has a slot). Made lanes only.
  [[nodiscard]] const execution_binding* binding() const noexcept { return binding_ ? &*binding_ : nullptr; }

  // Per node n (of the program): its handle on its binding slot (none for a
  // node without one), that slot as a range of the upload arena (empty
  // without), the resources it lists (the plan's order), and what its list
  // is granted — its resources' ranges (to write), then an empty range of
  // each arena (to read anywhere in the lane).
  [[nodiscard]] const std::optional<node_binding>& node(std::size_t n) const noexcept { return nodes_[n]; }
  [[nodiscard]] gpu::arena_range slot(std::size_t n) const noexcept { return slots_[n]; }
  [[nodiscard]] std::span<const node_resource> resources(std::size_t n) const noexcept {
    return std::span<const node_resource>(resources_)
        .subspan(resource_begin_[n], resource_begin_[n + 1] - resource_begin_[n]);
  }
  [[nodiscard]] std::span<const gpu::arena_range> grants(std::size_t n) const noexcept {
    return std::span<const gpu::arena_range>(grants_).subspan(grant_begin_[n], grant_begin_[n + 1] - grant_begin_[n]);
  }

  // Node n's command list; every node's, in node order; the staging lists
  // (null where the lane has no staged arena of their class): `stage_in`
  // copies a staged upload arena's host bytes to the GPU, then a barrier;
  // `stage_out` opens with a barrier, then copies a staged readback arena to
  // its host bytes — recorded once when the lane was made, submitted again
  // by every wave; and all of them in the order one submission runs them
  // (stage_in, the nodes', stage_out): what a lane lease submits.
  [[nodiscard]] gpu::command_list& list(std::size_t n) noexcept { return *node_lists_[n]; }
  [[nodiscard]] const gpu::command_list& list(std::size_t n) const noexcept { return *node_lists_[n]; }
  [[nodiscard]] std::span<gpu::command_list* const> lists() noexcept { return lists_; }
  [[nodiscard]] std::span<const gpu::command_list* const> lists() const noexcept { return lists_; }
  // The live nodes' lists in their bucket's level order (lane_recipe::order;
  // culled nodes left out), what a wave on one queue submits; empty where
  // the bucket has no order.
  [[nodiscard]] std::span<gpu::command_list* const> ordered_lists() noexcept { return ordered_lists_; }
  [[nodiscard]] gpu::command_list* stage_in() noexcept { return stage_in_.get(); }
  [[nodiscard]] const gpu::command_list* stage_in() const noexcept { return stage_in_.get(); }
  [[nodiscard]] gpu::command_list* stage_out() noexcept { return stage_out_.get(); }
  [[nodiscard]] const gpu::command_list* stage_out() const noexcept { return stage_out_.get(); }
  [[nodiscard]] std::span<gpu::command_list* const> all_lists() noexcept { return all_lists_; }
  [[nodiscard]] std::span<const gpu::command_list* const> all_lists() const noexcept { return all_lists_; }
  // The lane's images: its block of image memory (null when the bucket has
  // no images), and per node the layout changes its list opens with and
  // the images it lists.
  [[nodiscard]] const lane_images& images() const noexcept { return images_; }
  [[nodiscard]] std::span<const gpu::layout_change> transitions(std::size_t n) const noexcept {
    if (images_.transition_begin.empty()) return {};
    return std::span<const gpu::layout_change>(images_.transitions)
        .subspan(images_.transition_begin[n], images_.transition_begin[n + 1] - images_.transition_begin[n]);
  }
  [[nodiscard]] std::span<const node_image> node_images(std::size_t n) const noexcept {
    if (images_.use_begin.empty()) return {};
    return std::span<const node_image>(images_.uses)
        .subspan(images_.use_begin[n], images_.use_begin[n + 1] - images_.use_begin[n]);
  }
  // Event `i` of the bucket's split barriers (lane_recipe::one_queue_split,
  // ordered_split), unsignaled between waves.
  [[nodiscard]] const gpu::event& event(std::size_t i) const noexcept { return *events_[i]; }
  // With GPU timestamps (scheduler_options::gpu_timestamps), else null:
  // slots 2n and 2n + 1 are node n's begin and end, written by its list.
  [[nodiscard]] gpu::timestamp_pool* timestamps() noexcept { return timestamps_.get(); }
  [[nodiscard]] const gpu::timestamp_pool* timestamps() const noexcept { return timestamps_.get(); }
  // The engine's state of this lane (ferrum/scheduler/lane_state.hpp), made
  // last and destroyed first; null without a factory or where it made none.
  [[nodiscard]] lane_state* state() noexcept { return state_.get(); }
  [[nodiscard]] const lane_state* state() const noexcept { return state_.get(); }

  // Resource `id` as the first node listing it has it (every node that
  // lists a resource has the same bytes of it); nullptr when none does.
  // Linear in the lane's resources.
  [[nodiscard]] const node_resource* find(std::string_view id) const noexcept {
    for (const node_resource& r : resources_)
      if (r.id->view() == id) return &r;
    return nullptr;
  }

 private:
  friend struct detail::lane_memory;  // makes, frees and retires them (lane_pool.cpp)
  friend class held_lane;             // points its imported resources at a wave's buffers and images

  // Points the lane's imported resources (lane_recipe::imports, in order)
  // at `ranges`: every node's node_resource::range of them, and its list's
  // grant. Whether any differs from before (a recording of the lane's lists
  // then names other buffers).
  bool point_imports(std::span<const gpu::arena_range> ranges) noexcept {
    bool changed = false;
    for (const import_use& u : import_uses_) {
      const gpu::arena_range r = u.import < ranges.size() ? ranges[u.import] : gpu::arena_range{};
      gpu::arena_range& grant = grants_[u.grant];
      changed = changed || grant.arena != r.arena || grant.offset != r.offset || grant.size != r.size;
      grant = r;
      resources_[u.resource].range = r;
    }
    return changed;
  }
  // Points the lane's imported images at `images` (the recipe's imported
  // images, in order; `resource` unread): every node_image and transition
  // of them, each image's first transition from its `layout`. Whether any
  // differs from before.
  bool point_images(std::span<const imported_image> images) noexcept {
    bool changed = false;
    for (const lane_images::import_site& site : images_.imports) {
      const imported_image given = site.import < images.size() ? images[site.import] : imported_image{};
      if (site.use != lane_images::no_entry) {
        node_image& use = images_.uses[site.use];
        changed = changed || use.image != given.image;
        use.image = given.image;
        if (given.image != nullptr) use.range = gpu::image_subresources::whole(given.image->spec());
        continue;
      }
      gpu::layout_change& change = images_.transitions[site.transition];
      changed = changed || change.image != given.image || (site.first && change.from != given.layout);
      change.image = given.image;
      // The plan reaches an imported image whole (check_image_uses).
      if (given.image != nullptr) change.range = gpu::image_subresources::whole(given.image->spec());
      if (site.first) change.from = given.layout;
    }
    return changed;
  }

  std::array<std::unique_ptr<gpu::arena>, memory_class_count> memory_;
  std::array<std::uint64_t, memory_class_count> window_begin_{};
  std::vector<gpu::arena_range> windows_;
  lane_binding_target binding_target_;
  std::vector<backing_slice> backing_;
  std::optional<execution_binding> binding_;
  std::vector<std::optional<node_binding>> nodes_;
  std::vector<gpu::arena_range> slots_;
  std::vector<node_resource> resources_;
  std::vector<std::size_t> resource_begin_;
  std::vector<gpu::arena_range> grants_;
  std::vector<std::size_t> grant_begin_;
  // Each use of an imported resource: its entries in resources_ and
  // grants_, and its place in lane_recipe::imports.
  struct import_use {
    std::size_t resource;
    std::size_t grant;
    std::size_t import;
  };
  std::vector<import_use> import_uses_;
  // Before the lists, which name its images: destroyed after them.
  lane_images images_;
  // The split barriers' events (lane_recipe::one_queue_split, ordered_split:
  // as many as the more of the two has), before the lists that set them.
  std::vector<std::unique_ptr<gpu::event>> events_;
  std::vector<std::unique_ptr<gpu::command_list>> node_lists_;
  std::vector<gpu::command_list*> lists_;
  std::vector<gpu::command_list*> ordered_lists_;
  std::unique_ptr<gpu::command_list> stage_in_;
  std::unique_ptr<gpu::command_list> stage_out_;
  std::vector<gpu::command_list*> all_lists_;
  std::unique_ptr<gpu::timestamp_pool> timestamps_;
  // Last: destroyed before the lists and arenas it may name.
  std::unique_ptr<lane_state> state_;
};

namespace detail {

// A lane's hand-out and its holder's record, beside its contents in the
// lane (scheduler/src/lane.hpp). `hold` changes whenever the lane changes
// hands (handed out, given back, quarantined, back in service), under the
// dispatcher's lock; a handle keeps the value it was handed the lane under,
// so that a holder whose hand-out is over cannot give back or submit
// through a later holder's lane. The record — the value of the last
// submission into the lane (0: none), the last wave that submitted all of
// its lists, whether they hold a replayable recording, and whether the last
// record was of all of them (a wave's: its value covers every list's) — is
// written only through the current holder's handle, and by the lane pool
// while nobody holds the lane.
struct lane_hand_out {
  std::atomic<std::uint64_t> hold{0};
  std::uint64_t submitted_value = 0;
  std::uint64_t previous_wave = 0;
  bool recorded = false;
  bool covers_lists = false;
};

// The timeline value of the last submission into a lane: its recorded
// value, or a later value one of its lists was submitted with. The lists
// know their own, so a holder that submitted them without recording it
// cannot have the lane reused too early. Values are the compute queue's: a
// wave whose lists also ran on another queue joined them there, and its
// recorded value is the join's (scheduler/src/submission_plan.hpp).
[[nodiscard]] inline std::uint64_t last_submitted(const lane_contents& c, const lane_hand_out& h) noexcept {
  std::uint64_t last = h.submitted_value;
  for (const gpu::command_list* list : c.all_lists())
    if (list->submitted_queue() == &list->device().queue()) last = std::max(last, list->submitted_value());
  return last;
}

}  // namespace detail

// How a holder gives its lane back (held_lane::give_back).
enum class lane_return : std::uint8_t {
  // It awaited the value of its last submission: checked — the recorded
  // value of a wave's submission of all the lane's lists, else the lists'
  // own values too (fence_not_reached when not reached, the lane staying
  // with the holder).
  fence_reached,
  // It never submitted (failed or cancelled first): back at once when the
  // lane's last value — an earlier holder's, or a list an encoder submitted
  // itself — is reached, else quarantined until it is.
  unsubmitted,
  // Back once its last value is reached: at once when it is, else through
  // the lane pool's fence watch (the lane counts as in flight until then,
  // and stays quarantined for good if the device fails first).
  after_fence,
  // Its fence timed out or its device failed (or the holder gives it up
  // early): it serves no holder until its last value is reached (never,
  // after a device failure).
  quarantined,
};

// A submission into a held lane (held_lane::record_submission).
struct lane_submission {
  // The queue timeline value it completes at (the compute queue's: a wave
  // whose lists also ran on another queue joined them there).
  std::uint64_t value = 0;
  // The wave that submitted all of the lane's lists (0: a part of them, or
  // a lease): the next wave's encode_context::lane_previous_wave.
  std::uint64_t wave = 0;
  // The lists hold a complete recording that a replaying scheduler may
  // submit again (scheduler_options::replay).
  bool replayable = false;
};

// One hand-out of a lane: move-only, held by one holder at a time, and
// empty once given back. A handle whose lane pool took the lane back
// (closed scheduler, ...) or whose hand-out is otherwise over refuses to
// give back or record with lane_not_held: it cannot touch a later holder's
// lane. Dropped while holding, it gives the lane back as after_fence.
//
// Thread safety: one thread at a time uses a handle.
class held_lane {
 public:
  held_lane() noexcept = default;
  held_lane(held_lane&& other) noexcept
      : pool_(other.pool_), contents_(other.contents_), out_(other.out_), hold_(other.hold_), index_(other.index_) {
    other.out_ = nullptr;
  }
  held_lane& operator=(held_lane&& other) noexcept {
    if (this != &other) {
      (void)give_back(lane_return::after_fence);
      pool_ = other.pool_;
      contents_ = other.contents_;
      out_ = std::exchange(other.out_, nullptr);
      hold_ = other.hold_;
      index_ = other.index_;
    }
    return *this;
  }
  held_lane(const held_lane&) = delete;
  held_lane& operator=(const held_lane&) = delete;
  ~held_lane() { (void)give_back(lane_return::after_fence); }

  [[nodiscard]] explicit operator bool() const noexcept { return out_ != nullptr; }
  // The lane's number in its pool, the pool, and the hand-out it is held under.
  [[nodiscard]] std::uint32_t index() const noexcept { return index_; }
  [[nodiscard]] lane_pool* pool() const noexcept { return pool_; }
  [[nodiscard]] std::uint64_t hold() const noexcept { return hold_; }
  // What the lane holds (a non-empty handle's), the holder's to write.
  [[nodiscard]] lane_contents& operator*() const noexcept { return *contents_; }
  [[nodiscard]] lane_contents* operator->() const noexcept { return contents_; }

  // Whether the handle still holds its lane: lane_not_held, naming
  // `action`, when it is empty or its hand-out is over.
  [[nodiscard]] result<void> check_held(const char* action) const {
    if (current()) return {};
    if (out_ == nullptr) return make_error(errc::lane_not_held, std::string(action) + " through an empty lane handle");
    // A hand-out that is over: the lane's lists may be a later holder's now.
    return make_error(errc::lane_not_held,
                      std::string(action) + " lane " + std::to_string(index_) + " under hand-out " +
                          std::to_string(hold_) + ", which is over (hand-out " +
                          std::to_string(out_->hold.load(std::memory_order_relaxed)) + " is the latest)");
  }
  // Records a submission into the lane: its value becomes the lane's last
  // (never lowered), and `s.wave`/`s.replayable` what the next holder sees.
  // Errors: lane_not_held (empty, or a hand-out that is over).
  [[nodiscard]] result<void> record_submission(const lane_submission& s) {
    if (!current()) return check_held("recording a submission into");
    out_->submitted_value = std::max(out_->submitted_value, s.value);
    if (s.wave != 0) out_->previous_wave = s.wave;
    out_->recorded = s.replayable;
    out_->covers_lists = s.wave != 0;
    return {};
  }
  // Whether the lists hold a replayable recording and `replay` asks for it
  // (bind of a replaying wave); anything else forgets it (false when empty).
  [[nodiscard]] bool take_recording(bool replay) noexcept {
    if (out_ == nullptr) return false;
    out_->recorded = replay && out_->recorded;
    return out_->recorded;
  }
  // Points the lane's imported resources at a wave's buffers (`ranges`, in
  // lane_recipe::imports order); a replayable recording that named other
  // buffers is forgotten. Nothing on an empty handle.
  void import(std::span<const gpu::arena_range> ranges) noexcept {
    if (out_ == nullptr) return;
    if (contents_->point_imports(ranges)) out_->recorded = false;
  }
  // The same for the lane's imported images (`images`: the recipe's
  // imported images in order, each with the layout the wave finds it in).
  void import_images(std::span<const imported_image> images) noexcept {
    if (out_ == nullptr) return;
    if (contents_->point_images(images)) out_->recorded = false;
  }
  // The last wave whose submission of all the lane's lists went to the GPU
  // (0: none, its memory was made afresh since, or an empty handle).
  [[nodiscard]] std::uint64_t previous_wave() const noexcept { return out_ != nullptr ? out_->previous_wave : 0; }
  // The timeline value of the last submission into the lane: the recorded
  // one, or a later value one of its lists was submitted with (0: empty).
  [[nodiscard]] std::uint64_t last_submitted() const noexcept {
    return out_ != nullptr ? detail::last_submitted(*contents_, *out_) : 0;
  }

  // Gives the lane back (lane_return says how; lane_pool.cpp); the handle
  // is then empty. An empty handle gives nothing back (no error). Errors:
  // lane_not_held (a hand-out that is over: the lane is not this handle's
  // to give back; the handle is emptied), fence_not_reached (fence_reached
  // while the last value is not reached; the handle keeps the lane).
  result<void> give_back(lane_return how) noexcept;

 private:
  friend class detail::lane_dispatcher;  // hands lanes out
  // Defined by tests only: forges a second handle of a hand-out, so that the
  // checks inside can be tried as a holder whose hand-out is over.
  friend struct detail::lane_test_access;
  // Whether the handle holds a lane under its current hand-out.
  [[nodiscard]] bool current() const noexcept {
    return out_ != nullptr && out_->hold.load(std::memory_order_relaxed) == hold_;
  }
  held_lane(lane_pool& pool, std::uint32_t index, lane_contents& contents, detail::lane_hand_out& out) noexcept
      : pool_(&pool),
        contents_(&contents),
        out_(&out),
        hold_(out.hold.load(std::memory_order_relaxed)),
        index_(index) {}

  lane_pool* pool_ = nullptr;
  lane_contents* contents_ = nullptr;
  detail::lane_hand_out* out_ = nullptr;  // null: empty
  std::uint64_t hold_ = 0;
  std::uint32_t index_ = 0;
};

}  // namespace ferrum
