// tools/listing_checks.hpp — what `ferrum run`'s checking encoders do with
// each resource a node lists (a *listing*), decided once per plan from its
// dependency graph (docs/interfaces.md, "ferrum.run.v1", violations).
//
//   auto listings = ferrum::tools::plan_listing_checks(plan, program.dependencies);
//   for (const listing_check& l : listings) if (l.writes) ...
//
// The rule for a resource's users, which need not be ordered by the graph
// (in two_queues.json node/readback and node/shade both list
// resource/state and both run after node/simulate, on two queues):
//   * a user *writes* its pattern only when the graph orders it against every
//     other user of the resource (it runs after or before each). So the
//     writers of a resource are totally ordered, and no user reads while a
//     writer may be running;
//   * every user checks, before its own commands, the pattern of the
//     resource's last writer that it runs after: that writer is the latest
//     writer in plan order before it (a writer is ordered against it, and
//     plan order is topological). With none: nothing for an invocation
//     resource (its bytes may hold another resource's leftovers), the lane's
//     previous wave's last writer for a persistent one;
//   * a writer then checks its own pattern at the compiled offset.
// A user that neither writes nor has an earlier writer to check (unordered
// users with nothing written before them) checks nothing: it is reported as
// unchecked, never skipped silently. In a v1 plan, or any plan whose users
// of each resource are ordered, every user writes, as before.
//
// A transfer node records no dispatch (a transfer queue runs no kernels),
// so its checks are copies: before its own commands it copies what the
// resource holds at the compiled offset into a snapshot, writes its pattern
// by copying a staging area the host filled for the wave, then snapshots the
// compiled range again. The first compute node (plan order) that runs after
// it in the graph checks the snapshots with check_pattern. A transfer node
// with no such node has its listings reported as unchecked.
#pragma once

#include "ferrum/binding/dependency_graph.hpp"
#include "ferrum/binding/plan.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace ferrum::tools {

struct listing_check {
  static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

  // The pattern a listing holds before its node's commands.
  enum class expectation : std::uint8_t {
    nothing,        // an invocation resource's first users: leftovers
    this_wave,      // what `writer` wrote in this wave
    previous_wave,  // what `writer` wrote in the lane's previous wave (persistent)
  };
  // Why a listing is not checked.
  enum class unchecked_reason : std::uint8_t {
    checked,
    unordered_users,        // it does not write, and nothing is written before it
    no_later_compute_node,  // a transfer node that no compute node runs after
    image,                  // an image: no bytes of the lane's arenas
  };

  std::size_t node = 0;
  std::size_t position = 0;  // in the node's list
  bool writes = false;
  expectation before = expectation::nothing;
  std::array<std::size_t, 2> writer{none, none};  // (node, position) when `before` is not nothing
  // Whether a later listing of the wave expects this one's pattern.
  bool read_later = false;
  // The node that runs check_pattern for it: its own for a compute node; for
  // a transfer node the first compute node after it in the graph, or none.
  std::size_t checker = none;
  unchecked_reason unchecked = unchecked_reason::checked;
};

// Per listing, node by node and in each node's order. `graph` is the plan's
// compiled dependency graph. Linear in listings for a plan whose graph is
// sequential; otherwise each pair of users of one resource, and each
// transfer node's search for its checker, asks the graph whether one node
// runs after another (a walk bounded by the two plan indices).
[[nodiscard]] std::vector<listing_check> plan_listing_checks(const plan& p, const dependency_graph& graph);

// "resource/x at node/y: <why>" for an unchecked listing; "" for a checked one.
[[nodiscard]] std::string describe_unchecked(const plan& p, const listing_check& l);

}  // namespace ferrum::tools
