// ferrum/binding/barriers.hpp — where a wave of a bucket needs barriers,
// derived once per bucket on the cold path from the lane recipe: each
// node's resources as bytes of a lane (aliasing included), how it uses
// them (plan_node::access), and the queue it runs on.
//
// A wave records each node into its own list and submits them in plan
// order; on the device, a barrier before node j orders every earlier
// command on j's queue before j's commands. Node j needs one when it
// touches bytes of the lane that an earlier node on its queue touched
// since that queue's last barrier, and one of the two writes them (read
// after write, write after read, write after write). Independent nodes
// on disjoint bytes get none, and one barrier serves every hazard it
// stands between: a plan that lists its nodes level by level (every
// node after the ones it depends on, independent ones side by side) gets
// one barrier per level that has a hazard with the level before.
//
// The queues a device gives the kinds are only known to the scheduler: a
// device with one queue (lavapipe) runs every node on it; one with a
// transfer queue runs the transfer nodes there, ordered against compute
// nodes by the semaphore waits of the dependency graph. The barriers
// derived here are enough for both: a hazard between two nodes of one
// kind is stood between by a barrier before a node of that kind; one
// between nodes of different kinds by any barrier. A device that runs
// every node on one queue needs only the latter (barrier_queues::one), and
// the scheduler uses that set there (lane_recipe::one_queue_barrier_before).
//
//   std::vector<bool> before = ferrum::derive_barriers(bucket.lane, program.dependencies);
//   if (before[3]) { /* node 3's list opens with a barrier */ }
#pragma once

#include "ferrum/binding/dependency_graph.hpp"
#include "ferrum/binding/lane_recipe.hpp"
#include "ferrum/sync_scope.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace ferrum {

// Which devices a set of barriers is for: every device (a hazard between
// nodes of one kind stood between by a barrier of that kind), or one that
// runs every node on one queue (any barrier between them will do: fewer,
// where a plan mixes kinds).
enum class barrier_queues : std::uint8_t { any, one };

// Per node (plan order): whether its list opens with a barrier. A node
// with image layout transitions (lane_recipe::node_transitions) does, as
// the barrier makes them. Otherwise the first node never does: a lane's
// previous wave completed before its next one is submitted (the host saw
// its fence), and other lanes are other memory. O(u log u) in the recipe's
// uses.
// `order`: the nodes in the order a wave submits them (node_order.hpp),
// empty for plan order; the result is indexed by node either way.
[[nodiscard]] std::vector<bool> derive_barriers(const lane_recipe& recipe, const dependency_graph& graph,
                                                barrier_queues queues = barrier_queues::any,
                                                std::span<const std::size_t> order = {});

// Per node (plan order): the scope of the barrier its list opens with where
// `before` (derive_barriers with the same `queues`) says it opens with one,
// empty elsewhere: the stages and accesses of the earlier uses it stands
// between later ones and (access_scope), and of those later uses, every
// node's up to the next barrier that takes over. A hazard is credited to
// the last barrier on the later node's queue after the earlier node (on a
// device with both queues, one between nodes of different queues is also
// ordered by the dependency graph's semaphores). Read after write and
// write after write wait for the write's stages and make its accesses
// visible; write after read waits for the reads' stages alone. O(u log u).
[[nodiscard]] std::vector<barrier_scope> derive_barrier_scopes(const lane_recipe& recipe, const dependency_graph& graph,
                                                               const std::vector<bool>& before,
                                                               barrier_queues queues = barrier_queues::any,
                                                               std::span<const std::size_t> order = {});

// The one-queue barriers `before` (derive_barriers with barrier_queues::one
// and `order`) split where that pays. A barrier whose hazards (those
// derive_barrier_scopes credits to it: of its own node and of the later
// nodes that rely on it) all come from nodes at least two positions before
// their later node in plan order (`order` empty), or two levels before it
// in level order (recipe.level), and that orders nothing else (no layout
// change, no wave's first use of what the waves before used, no first use
// of a pool's aliasable image), is dropped: each of its later nodes waits
// instead for an event that the last of its earlier nodes sets after its
// commands, of their hazards' scope — so that the nodes in between are
// neither waited for nor held. A hazard on an image whose layout its later
// node changes keeps its barrier. The other barriers keep their scopes.
// One event per setting node, its scope the union over its waiters (a set
// and its waits give one scope). O(u log u).
[[nodiscard]] split_barriers derive_split_barriers(const lane_recipe& recipe, const dependency_graph& graph,
                                                   const std::vector<bool>& before,
                                                   std::span<const std::size_t> order = {});

}  // namespace ferrum
