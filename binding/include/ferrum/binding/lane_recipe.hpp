// ferrum/binding/lane_recipe.hpp — what a lane of a compiled bucket is made
// from, so that a scheduler (or a lane pool) needs the compiled program and a
// device, and never the plan again.
//
// Made by compile (and by load_compiled_program, which has the plan), once per
// bucket: each node's resources resolved to their bytes in a lane (the
// plan's order per node, nodes side by side), and the binding domain's backing
// slices, which every lane's execution_binding::bind is checked against. Queue placement is the program's dependency
// graph (compiled_program::dependencies, a node's queue).
#pragma once

#include "ferrum/binding/execution_binding.hpp"
#include "ferrum/binding/plan.hpp"
#include "ferrum/binding/wave_layout.hpp"
#include "ferrum/sync_scope.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ferrum {

// One resource a node lists, placed in a lane of its bucket.
struct lane_use {
  std::size_t domain = 0;  // its pool's domain (program order)
  std::size_t member = 0;  // its place among the domain's members: its projection
  allocation_kind kind = allocation_kind::workspace;
  allocation_lifetime lifetime = allocation_lifetime::invocation;
  std::uint64_t offset = 0;  // in the lane: its pool's offset plus its projection's
  std::uint64_t size = 0;
  resource_access access = resource_access::read_write;  // how the node uses it
  // The part of an image the access reaches (plan_node::ranges), its
  // counts resolved, or {} for the whole image (ferrum::resolve gives its
  // counts) and for a buffer.
  subresource_range range{};
};

// A history resource's part in its pair (docs/design.md, "History").
enum class history_role : std::uint8_t { none, current, previous };

// One buffer of an imported pool (memory class `imported`): a buffer of
// the engine's that each wave names (wave_request::imports), never
// allocated by a lane.
// `size`: the resource's bytes in this bucket (base + per_unit * capacity),
// not rounded up to its alignment as its place in a lane would be: the
// bytes the buffer must have, and what its nodes get of it. `accesses`: the
// accesses nodes on the compute queue make of it, `transfer_accesses` those
// of nodes on the transfer queue (a bit per resource_access each): what the
// buffer's usage must allow (ferrum/scheduler/buffer_usage.hpp).
// A history buffer (`history` not none) is listed here too, as an imported
// one, but it is the scheduler's, not the engine's: each wave points its
// current and its previous at the two buffers the scheduler keeps for the
// pair (lane_recipe::histories).
struct lane_import {
  resource_id resource;
  std::size_t domain = 0;  // as lane_use's
  std::size_t member = 0;
  std::uint64_t size = 0;  // the bytes the buffer must have in this bucket
  bool written = false;    // whether a node writes it (any access but read)
  std::uint32_t accesses = 0;
  std::uint32_t transfer_accesses = 0;
  history_role history = history_role::none;

  [[nodiscard]] bool takes(resource_access a) const noexcept {
    return ((accesses | transfer_accesses) & (1u << static_cast<unsigned>(a))) != 0;
  }
};

// One image of the plan in a lane of this bucket (docs/design.md, "Images"):
// its description with the bucket's extent resolved (`image.bucket_extent`
// false), the accesses the plan makes of it (a bit per resource_access: what
// a device derives its usage flags from), and the layout it is in when a
// wave starts — undefined, except for a persistent image, which is in the
// layout its last use leaves (the lane puts it there when it is made).
// `aliasable`: an invocation image of an interval pool, which may share
// image memory with the pool's other aliasable images whose live intervals
// (`live`, the pool's: its first and last node, extended across queues) do
// not overlap (place_lane_images, ferrum/binding/image_placement.hpp).
// `imported`: an image of an imported pool, the engine's, which each wave
// names (wave_request::images) and no lane makes; its first transition in
// a wave starts from the layout the wave names (`from` here: undefined).
// A history image (`history` not none) is `imported` too, but the
// scheduler's: each wave points it at one of the two images the scheduler
// keeps for its pair (lane_recipe::histories), and hands in its layout as
// for the engine's; its `accesses` also hold transfer-dst, which the
// scheduler clears it by (on the first wave and after a resize).
struct lane_image {
  resource_id resource;
  std::size_t domain = 0;  // as lane_use's
  std::size_t member = 0;
  image_desc image;
  allocation_lifetime lifetime = allocation_lifetime::invocation;
  std::uint32_t accesses = 0;
  image_layout initial = image_layout::undefined;
  bool aliasable = false;
  live_interval live{};
  bool imported = false;
  // The extent as the plan declares it: 0 for a fixed one, else the divisor
  // of the bucket's (1: the bucket's own; image_desc::extent_divisor).
  std::uint32_t bucket_divisor = 0;
  history_role history = history_role::none;

  [[nodiscard]] bool takes(resource_access a) const noexcept {
    return (accesses & (1u << static_cast<unsigned>(a))) != 0;
  }
  // Whether a node draws into it or tests depth against it (an attachment
  // access: a raster node's).
  [[nodiscard]] bool attachment() const noexcept {
    return takes(resource_access::color_attachment) || takes(resource_access::depth_attachment) ||
           takes(resource_access::depth_read);
  }
  // The declared extent, as reports show it: "bucket", "bucket/4" or "64x32".
  [[nodiscard]] std::string declared_extent() const {
    image_desc declared = image;
    declared.bucket_extent = bucket_divisor != 0;
    declared.extent_divisor = bucket_divisor == 0 ? 1 : bucket_divisor;
    return extent_text(declared);
  }
  // Its extent in this bucket, with the fraction of the bucket's it is
  // where it is one: "480x270 (bucket/4)", "1920x1080", "64x32".
  [[nodiscard]] std::string extent_in_bucket() const {
    std::string text = std::to_string(image.width) + "x" + std::to_string(image.height);
    return bucket_divisor > 1 ? text + " (" + declared_extent() + ")" : text;
  }
  friend bool operator==(const lane_image&, const lane_image&) = default;
};

// A layout change of part of one image (`range`: mip levels and layers,
// counts resolved, or {} for the whole image), recorded in the barrier its node opens with: from the
// layout its previous use left (undefined for an invocation image's first
// use in the wave, whose contents are not kept) to the one this node's
// access needs. `after` is the access it waits for: the previous use's (the
// last wave's last use, for a persistent image's first), none for a first
// use. Subresources an access reaches that were left in different layouts
// (or by different accesses) get a transition each, one per run of levels
// and layers left alike.
struct image_transition {
  std::size_t image = 0;  // into lane_recipe::images
  image_layout from = image_layout::undefined;
  image_layout to = image_layout::undefined;
  std::optional<resource_access> after{};
  resource_access access = resource_access::sampled;  // this node's
  subresource_range range{};
  friend bool operator==(const image_transition&, const image_transition&) = default;
};

// One history pair: indices of its current and its previous into
// lane_recipe::images (image) or lane_recipe::imports (buffer).
struct history_pair {
  bool image = false;
  std::size_t current = 0;
  std::size_t previous = 0;
  friend bool operator==(const history_pair&, const history_pair&) = default;
};

// A split barrier (docs/design.md, "Barriers"): the node that sets it
// after its commands, and its scope — the producer's hazards' `before`,
// their consumers' `after` — which every wait for it gives too.
struct barrier_event {
  std::size_t producer = 0;
  barrier_scope scope;
  friend bool operator==(const barrier_event&, const barrier_event&) = default;
};

// A set of one-queue barriers with those whose hazards all come from two
// nodes (in level order: two levels) back or more replaced by events
// (derive_split_barriers, ferrum/binding/barriers.hpp): the barriers left,
// the events and who sets and waits for each. For a wave on one queue with
// scheduler_options::split_barriers.
struct split_barriers {
  static constexpr std::size_t no_event = std::numeric_limits<std::size_t>::max();

  // Per node: whether its list opens with a barrier still, and its scope.
  std::vector<bool> barrier_before;
  std::vector<barrier_scope> barrier_scopes;
  // The events, in the order of their first waiters; per node the event
  // it sets (no_event: none), and the events node n waits for before its
  // commands: waits[wait_begin[n] .. wait_begin[n + 1]).
  std::vector<barrier_event> events;
  std::vector<std::size_t> sets;
  std::vector<std::size_t> waits;
  std::vector<std::size_t> wait_begin;

  [[nodiscard]] std::span<const std::size_t> node_waits(std::size_t n) const noexcept {
    if (n + 1 >= wait_begin.size()) return {};
    return std::span<const std::size_t>(waits).subspan(wait_begin[n], wait_begin[n + 1] - wait_begin[n]);
  }
  [[nodiscard]] std::size_t set_by(std::size_t n) const noexcept { return n < sets.size() ? sets[n] : no_event; }
  [[nodiscard]] std::size_t barriers_per_wave() const noexcept {
    return static_cast<std::size_t>(std::count(barrier_before.begin(), barrier_before.end(), true));
  }
};

struct lane_recipe {
  static constexpr std::size_t no_domain = std::numeric_limits<std::size_t>::max();

  // Node n's resources are uses[use_begin[n] .. use_begin[n + 1]).
  std::vector<lane_use> uses;
  std::vector<std::size_t> use_begin;
  // The domain whose arena the program binding layout covers (no_domain
  // without binding resources), and where each of its resources lives: the
  // backing slices bind checks, recorded from the plan.
  std::size_t binding_domain = no_domain;
  std::vector<backing_slice> backing;
  // Per node: whether its list opens with a barrier (derive_barriers,
  // ferrum/binding/barriers.hpp), and how many do in one wave; right on
  // every device. The same for a device that runs every node on one queue
  // (barrier_queues::one), which the scheduler uses there.
  std::vector<bool> barrier_before;
  std::vector<bool> one_queue_barrier_before;
  // Per node: the scope of the barrier it opens with, empty where none
  // (derive_barrier_scopes); the same for one queue.
  std::vector<barrier_scope> barrier_scopes;
  std::vector<barrier_scope> one_queue_barrier_scopes;
  // The order a wave on one queue submits its nodes in (level_order,
  // ferrum/binding/node_order.hpp; empty: plan order), and the barriers of
  // that order on one queue.
  std::vector<std::size_t> order;
  std::vector<bool> ordered_barrier_before;
  std::vector<barrier_scope> ordered_barrier_scopes;
  // The one-queue barriers of plan order and of level order split into
  // events where a producer runs two nodes (levels) before its consumer
  // (scheduler_options::split_barriers).
  split_barriers one_queue_split;
  split_barriers ordered_split;
  // With `order`: each node's level, and where each level's nodes begin in
  // `order` (one more entry: its size). In level order the first node of a
  // level makes the layout changes of the whole level in its barrier
  // (level_transitions), so that a level takes one barrier. Culled nodes
  // (compiled_program::culling) come last, in a level of their own.
  std::vector<std::size_t> level;
  std::vector<std::size_t> level_begin;

  // The nodes of node n's level, in order (with `order`).
  [[nodiscard]] std::span<const std::size_t> level_nodes(std::size_t n) const noexcept {
    const std::size_t l = level[n];
    return std::span<const std::size_t>(order).subspan(level_begin[l], level_begin[l + 1] - level_begin[l]);
  }
  // Calls f(node, transition) for each layout change node n's barrier makes in
  // level order: its level's where n is the level's first node, none
  // otherwise; in plan order (`in_levels` false, or no `order`), its own.
  template <class F>
  void for_each_transition(std::size_t n, bool in_levels, F&& f) const {
    if (!in_levels || order.empty()) {
      for (const image_transition& t : node_transitions(n)) f(n, t);
      return;
    }
    const auto mates = level_nodes(n);
    if (mates.front() != n) return;
    for (std::size_t m : mates)
      for (const image_transition& t : node_transitions(m)) f(m, t);
  }
  // The imported resources, in program order (domain, then member).
  std::vector<lane_import> imports;
  // The images, in program order (domain, then member), and per node the
  // transitions its barrier makes: node n's are
  // transitions[transition_begin[n] .. transition_begin[n + 1]). A node
  // with transitions opens with a barrier, the first node too.
  std::vector<lane_image> images;
  std::vector<image_transition> transitions;
  std::vector<std::size_t> transition_begin;
  // The history pairs, in their currents' program order (docs/design.md,
  // "History"); the same in every bucket.
  std::vector<history_pair> histories;

  // The current whose history image `image` (into `images`) is, or nullptr
  // where it is no previous.
  [[nodiscard]] const lane_image* current_of(std::size_t image) const noexcept {
    for (const history_pair& h : histories)
      if (h.image && h.previous == image) return &images[h.current];
    return nullptr;
  }

  [[nodiscard]] std::size_t barriers_per_wave() const noexcept {
    return static_cast<std::size_t>(std::count(barrier_before.begin(), barrier_before.end(), true));
  }

  [[nodiscard]] std::span<const lane_use> node_uses(std::size_t n) const noexcept {
    return std::span<const lane_use>(uses).subspan(use_begin[n], use_begin[n + 1] - use_begin[n]);
  }

  [[nodiscard]] std::span<const image_transition> node_transitions(std::size_t n) const noexcept {
    if (n + 1 >= transition_begin.size()) return {};
    return std::span<const image_transition>(transitions)
        .subspan(transition_begin[n], transition_begin[n + 1] - transition_begin[n]);
  }
};

}  // namespace ferrum
