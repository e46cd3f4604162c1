// barrier_scopes.cpp — derive_barrier_scopes and derive_split_barriers
// (ferrum/binding/barriers.hpp): one sweep over the nodes in plan order,
// keeping per run of lane bytes the scope of its last write and of the
// reads since, and which nodes made them; each hazard widens the scope of
// the last barrier that stands between its two nodes, or, split, of the
// event its earlier node sets where that node runs two nodes (levels) back.
#include "byte_runs.hpp"
#include "cross_wave.hpp"

#include "ferrum/binding/access_scope.hpp"
#include "ferrum/binding/barriers.hpp"
#include "ferrum/binding/image_access.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace ferrum {

node_stages stages_of(std::span<const lane_use> uses, queue_kind queue) noexcept {
  if (queue == queue_kind::transfer) return node_stages::transfer;
  const bool draws = std::any_of(uses.begin(), uses.end(), [](const lane_use& u) {
    return is_attachment_access(u.access) || is_draw_access(u.access);
  });
  return draws ? node_stages::drawing : node_stages::compute;
}

namespace {

constexpr std::size_t none = static_cast<std::size_t>(-1);

// What a run of bytes saw: its last write's scope and node, and the reads
// since (their scope, the last of their nodes), nodes by position.
struct byte_state {
  sync_scope written;
  std::size_t writer = none;
  sync_scope read;
  std::size_t reader = none;
};

// A hazard between two nodes (positions) and the barrier (node) that
// stands between them, for derive_split_barriers.
struct hazard {
  std::size_t barrier;
  std::size_t later;
  std::size_t earlier;
  sync_scope first;  // what the barrier waits for
  sync_scope then;   // what it blocks
  bool carriable;    // two nodes (levels) apart, no layout change of its image
};

// Split: a barrier whose hazards an event can all carry, and that orders
// nothing else (its scope empty so far: no layout change, no first use),
// is dropped; each of its later nodes waits for the event of the last of
// its earlier nodes, which every earlier one's commands precede. The other
// barriers wait for and block their hazards' scopes.
void place_events(std::span<const hazard> hazards, std::vector<barrier_scope>& scopes,
                  std::span<const std::size_t> order, split_barriers& split, std::size_t nodes) {
  const auto node_at = [&](std::size_t at) { return order.empty() ? at : order[at]; };
  std::vector<bool> kept(scopes.size(), false);
  for (std::size_t n = 0; n < scopes.size(); ++n) kept[n] = !scopes[n].empty();
  for (const hazard& h : hazards) kept[h.barrier] = kept[h.barrier] || !h.carriable;
  split.sets.assign(nodes, split_barriers::no_event);
  // Per later node (position), its last earlier node and their scope.
  std::map<std::size_t, std::pair<std::size_t, barrier_scope>> carried;
  for (const hazard& h : hazards) {
    barrier_scope& scope = kept[h.barrier] ? scopes[h.barrier] : carried[h.later].second;
    scope.before.stages |= h.first.stages;
    scope.before.accesses |= h.first.accesses & accesses::writes;
    scope.after |= h.then;
    if (!kept[h.barrier]) carried[h.later].first = std::max(carried[h.later].first, h.earlier);
  }
  std::vector<std::vector<std::size_t>> waits(nodes);
  for (const auto& [later, last] : carried) {
    std::size_t& event = split.sets[node_at(last.first)];
    if (event == split_barriers::no_event) {
      event = split.events.size();
      split.events.push_back({node_at(last.first), {}});
    }
    split.events[event].scope |= last.second;
    waits[node_at(later)].push_back(event);
  }
  split.wait_begin.assign(1, 0);
  for (const std::vector<std::size_t>& w : waits) {
    split.waits.insert(split.waits.end(), w.begin(), w.end());
    split.wait_begin.push_back(split.waits.size());
  }
}

// The sweep; with `split`, its events and waits too (derive_split_barriers).
std::vector<barrier_scope> sweep(const lane_recipe& recipe, const dependency_graph& graph,
                                 const std::vector<bool>& before, barrier_queues queues,
                                 std::span<const std::size_t> order, split_barriers* split) {
  const std::size_t nodes =
      std::min({graph.size(), before.size(), recipe.use_begin.empty() ? 0 : recipe.use_begin.size() - 1});
  std::vector<barrier_scope> scopes(before.size());
  // Positions in the order the nodes are submitted in: the last barrier so
  // far on each kind's queue, and on any; and the node at each.
  std::array<std::size_t, 2> last_of_kind{none, none};
  std::size_t last_any = none;
  const auto node_at = [&](std::size_t at) { return order.empty() ? at : order[at]; };
  detail::byte_runs<byte_state> bytes;
  // The pools (domains) of images that may share memory, and their uses so
  // far.
  std::set<std::size_t> aliasable_pools;
  for (const lane_image& image : recipe.images)
    if (image.aliasable) aliasable_pools.insert(image.domain);
  std::map<std::size_t, sync_scope> pool_uses;
  const detail::cross_wave_uses cross = detail::cross_wave_of(recipe, graph);
  std::set<std::pair<std::size_t, std::size_t>> first_uses;
  std::vector<hazard> hazards;  // split: every hazard, for place_events
  for (std::size_t at = 0; at < nodes; ++at) {
    const std::size_t n = node_at(at);
    const auto kind = static_cast<std::size_t>(queues == barrier_queues::any && graph.queue(n) == queue_kind::transfer);
    if (before[n]) last_of_kind[kind] = last_any = at;
    const auto uses = recipe.node_uses(n);
    const node_stages where = stages_of(uses, graph.queue(n));
    // The barrier that stands between the node at position `earlier` and
    // this one: the last on this node's queue after it, else (a node of the
    // other queue, ordered by a semaphore on a device with both) the last on
    // any.
    const auto between = [&](std::size_t earlier) -> barrier_scope* {
      if (last_of_kind[kind] != none && last_of_kind[kind] > earlier) return &scopes[node_at(last_of_kind[kind])];
      if (last_any != none && last_any > earlier) return &scopes[node_at(last_any)];
      return nullptr;
    };
    // A hazard between the node at position `earlier` and this node's use
    // `u`, which `barrier` stands between: the barrier waits for `first`
    // and blocks `s`. Split, it waits in `hazards` for the end of the
    // sweep, noted whether an event could carry it: two nodes (or levels)
    // apart, not on an image whose layout this node changes.
    const auto widen = [&](barrier_scope* barrier, std::size_t earlier, const lane_use& u, const sync_scope& first,
                           const sync_scope& s) {
      if (split == nullptr) {
        barrier->before.stages |= first.stages;
        barrier->before.accesses |= first.accesses & accesses::writes;
        barrier->after |= s;
        return;
      }
      const std::size_t apart = order.empty() ? at - earlier : recipe.level[n] - recipe.level[node_at(earlier)];
      bool carriable = apart >= 2;
      for (const image_transition& t : recipe.node_transitions(n))
        if (recipe.images[t.image].domain == u.domain && recipe.images[t.image].member == u.member) carriable = false;
      hazards.push_back({static_cast<std::size_t>(barrier - scopes.data()), at, earlier, first, s, carriable});
    };
    // A wave's first use of a resource the waves before used: its barrier
    // waits for what they did with it.
    for (const lane_use& u : uses)
      if (const auto* shared = cross.find(u); shared != nullptr && first_uses.insert({u.domain, u.member}).second &&
                                              before[n] && (shared->written || access_writes(u.access))) {
        scopes[n].before.stages |= shared->uses.stages;
        scopes[n].before.accesses |= shared->uses.accesses & accesses::writes;
        scopes[n].after |= access_scope(u.access, where);
      }
    for (const lane_use& u : uses) {
      if (u.size == 0) continue;
      const sync_scope s = access_scope(u.access, where);
      const bool reads = access_reads(u.access);
      const bool writes = access_writes(u.access);
      bytes.visit(u.offset, u.offset + u.size, [&](byte_state& b) {
        // Read after write, write after write: wait for the write and make
        // it visible. Write after read: wait for the reads.
        if (b.writer != none && b.writer != at) {
          if (barrier_scope* barrier = between(b.writer); barrier != nullptr) widen(barrier, b.writer, u, b.written, s);
        }
        if (writes && b.reader != none && b.reader != at) {
          if (barrier_scope* barrier = between(b.reader); barrier != nullptr)
            widen(barrier, b.reader, u, {b.read.stages, 0}, s);
        }
        if (writes) {
          b.written = b.writer == at ? (b.written |= s) : s;
          b.writer = at;
          b.read = {};
          b.reader = none;
        }
        if (reads && !writes) {
          b.read |= s;
          b.reader = at;
        }
      });
    }
    // A layout change blocks the node's use of the image (the device adds
    // its layouts' own stages). The first use of an image a lane may place
    // in memory another image of its pool used (lane_image::aliasable, by
    // the device's sizes, which the bytes above need not show) waits for
    // every earlier use of the pool's images.
    if (before[n])
      recipe.for_each_transition(n, !order.empty(), [&](std::size_t m, const image_transition& t) {
        scopes[n].after |= access_scope(t.access, stages_of(recipe.node_uses(m), graph.queue(m)));
        const lane_image& image = recipe.images[t.image];
        if (const auto used = pool_uses.find(image.domain);
            image.aliasable && t.from == image_layout::undefined && used != pool_uses.end()) {
          scopes[n].before.stages |= used->second.stages;
          scopes[n].before.accesses |= used->second.accesses & accesses::writes;
        }
      });
    for (const lane_use& u : uses)
      if (aliasable_pools.count(u.domain) != 0) pool_uses[u.domain] |= access_scope(u.access, where);
  }
  if (split != nullptr) place_events(hazards, scopes, order, *split, before.size());
  return scopes;
}

}  // namespace

std::vector<barrier_scope> derive_barrier_scopes(const lane_recipe& recipe, const dependency_graph& graph,
                                                 const std::vector<bool>& before, barrier_queues queues,
                                                 std::span<const std::size_t> order) {
  return sweep(recipe, graph, before, queues, order, nullptr);
}

split_barriers derive_split_barriers(const lane_recipe& recipe, const dependency_graph& graph,
                                     const std::vector<bool>& before, std::span<const std::size_t> order) {
  split_barriers out;
  out.barrier_scopes = sweep(recipe, graph, before, barrier_queues::one, order, &out);
  out.barrier_before = before;
  // A barrier whose hazards all went onto events, with no layout change
  // (whose access widens its `after`), is not recorded.
  for (std::size_t n = 0; n < out.barrier_before.size(); ++n)
    if (out.barrier_before[n] && out.barrier_scopes[n].empty()) out.barrier_before[n] = false;
  return out;
}

}  // namespace ferrum
