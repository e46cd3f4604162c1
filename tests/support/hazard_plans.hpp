// hazard_plans.hpp — generated v2 plans whose nodes read and write shared
// and aliased lane bytes: the plans the derived barriers
// (ferrum/binding/barriers.hpp) are checked on, by brute force here and by
// data and synchronization validation with hazard_encoder.hpp.
//
//   std::mt19937_64 rng(1);
//   const ferrum::plan p = hazard_plans::generate(rng, {});
//   const auto program = ferrum::test::compile_ok(p);
//   CHECK(hazard_plans::unseparated_hazards(program.buckets[0]).empty());
//
// Every node owns a 16-byte binding slot (its first resource). Nodes depend
// on random earlier ones; an interval pool's resources (which the compiler
// aliases where the graph allows) and a conservative pool's (shared by
// several nodes, never aliased) are used by a few nodes each, read, written
// or both — the first user in plan order writes.
#pragma once

#include "plan_builder.hpp"

#include "ferrum/binding/access_scope.hpp"
#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/image_access.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace hazard_plans {

struct shape {
  std::size_t nodes = 10;
  std::size_t interval_resources = 10;  // pool/w, liveness interval
  std::size_t shared_resources = 3;     // pool/shared, conservative
  std::uint32_t lanes = 2;
  std::size_t after_one_in = 3;  // each earlier node is `after` with this odds (0: none)
};

inline ferrum::resource_access random_access(std::mt19937_64& rng) {
  constexpr std::array accesses{ferrum::resource_access::read, ferrum::resource_access::write,
                                ferrum::resource_access::read_write};
  return accesses[rng() % accesses.size()];
}

inline ferrum::plan generate(std::mt19937_64& rng, shape s) {
  ferrum::test::plan_builder builder;
  for (std::size_t n = 0; n < s.nodes; ++n)
    builder.binding_node("node/" + std::to_string(n), "resource/slot." + std::to_string(n), 16);
  std::uniform_int_distribution<std::uint64_t> words(1, 64);
  // An interval resource's users are a run of one to three nodes (short
  // lives, so that resources share bytes); a shared one's are two or three
  // anywhere.
  const auto add = [&](const std::string& name, const std::string& pool, bool run) {
    builder.resource(ferrum::test::workspace_resource(name, pool, ferrum::resource_demand::fixed(4 * words(rng)), 16));
    const std::size_t users = std::min<std::size_t>(run ? 1 + rng() % 3 : 2 + rng() % 2, s.nodes);
    const std::size_t first = rng() % s.nodes;
    std::set<std::size_t> nodes;
    while (nodes.size() < users) nodes.insert(run ? (first + nodes.size()) % s.nodes : rng() % s.nodes);
    for (std::size_t n : nodes) builder.use(n, name);
  };
  for (std::size_t r = 0; r < s.interval_resources; ++r) add("resource/w." + std::to_string(r), "pool/w", true);
  for (std::size_t r = 0; r < s.shared_resources; ++r)
    add("resource/shared." + std::to_string(r), "pool/shared", false);
  ferrum::plan p = builder.interval("pool/w")
                       .bucket("step", {1, 1, 1},
                               {{"pool/bindings", 0, 1 << 20}, {"pool/shared", 0, 1 << 20}, {"pool/w", 0, 1 << 20}})
                       .lanes(s.lanes)
                       .budget(std::uint64_t{1} << 30)
                       .build();
  p.format = ferrum::plan_format::v2;
  p.cull = false;  // every node's hazards, whether anything reads what it writes or not
  std::set<std::string> written;
  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    ferrum::plan_node& node = p.nodes[n];
    for (std::size_t d = 0; d < n; ++d)
      if (s.after_one_in != 0 && rng() % s.after_one_in == 0) node.after.push_back(p.nodes[d].id);
    // The slot stays read-write; a resource's first user writes it.
    node.access.push_back(ferrum::resource_access::read_write);
    for (std::size_t k = 1; k < node.resources.size(); ++k) {
      const bool first = written.insert(node.resources[k].str()).second;
      node.access.push_back(first ? ferrum::resource_access::write : random_access(rng));
    }
  }
  return p;
}

// `count` independent chains of `length` nodes, listed chain after chain
// (a plan whose level order differs from its own): node k of a chain
// reads what node k - 1 wrote (resources of the conservative pool/shared)
// and writes its own.
inline ferrum::plan chains(std::size_t count, std::size_t length) {
  ferrum::test::plan_builder builder;
  const auto name = [](std::size_t c, std::size_t k) {
    return "resource/chain" + std::to_string(c) + "." + std::to_string(k);
  };
  for (std::size_t c = 0; c < count; ++c)
    for (std::size_t k = 0; k < length; ++k) {
      const std::size_t n = c * length + k;
      builder.binding_node("node/" + std::to_string(n), "resource/slot." + std::to_string(n), 16);
      builder.resource(
          ferrum::test::workspace_resource(name(c, k), "pool/shared", ferrum::resource_demand::fixed(256), 16));
      if (k > 0) builder.use(n, name(c, k - 1));
      builder.use(n, name(c, k));
    }
  ferrum::plan p = builder.bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 1 << 20}, {"pool/shared", 0, 1 << 20}})
                       .budget(std::uint64_t{1} << 30)
                       .build();
  p.format = ferrum::plan_format::v2;
  p.cull = false;  // the chains' last writes are read by nothing
  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    p.nodes[n].access = {ferrum::resource_access::read_write};
    if (n % length != 0) p.nodes[n].access.push_back(ferrum::resource_access::read);
    p.nodes[n].access.push_back(ferrum::resource_access::write);
  }
  return p;
}

// Two nodes on resources of pool/own (and their slots). Independent: each
// writes one of its own, neither runs after the other, no hazard.
// Otherwise node 1 runs after node 0 and reads what it wrote.
inline ferrum::plan pair(bool independent) {
  std::mt19937_64 rng(0);
  ferrum::plan p = generate(rng, {.nodes = 2, .interval_resources = 0, .shared_resources = 0});
  p.pools.clear();
  p.buckets[0].budgets = {{ferrum::test::id<ferrum::pool_id>("pool/bindings"), 0, 1 << 20},
                          {ferrum::test::id<ferrum::pool_id>("pool/own"), 0, 1 << 20}};
  for (std::size_t n = 0; n < 2; ++n) {
    const std::string name = "resource/own." + std::to_string(independent ? n : 0);
    if (independent || n == 0)
      p.resources.push_back(
          ferrum::test::workspace_resource(name, "pool/own", ferrum::resource_demand::fixed(256), 16));
    p.nodes[n].resources.push_back(ferrum::test::id<ferrum::resource_id>(name));
    const bool reads = !independent && n == 1;
    p.nodes[n].access = {ferrum::resource_access::read_write,
                         reads ? ferrum::resource_access::read : ferrum::resource_access::write};
    p.nodes[n].after.clear();
    if (reads) p.nodes[n].after.push_back(p.nodes[0].id);
  }
  return p;
}

// A node that writes resource/own.0, `gap` nodes that write their own, and
// one that runs after the first and reads what it wrote: a consumer `gap`
// + 1 nodes after its producer (split barriers: an event between them).
inline ferrum::plan far_pair(std::size_t gap) {
  std::mt19937_64 rng(0);
  ferrum::plan p = generate(rng, {.nodes = gap + 2, .interval_resources = 0, .shared_resources = 0});
  p.pools.clear();
  p.buckets[0].budgets = {{ferrum::test::id<ferrum::pool_id>("pool/bindings"), 0, 1 << 20},
                          {ferrum::test::id<ferrum::pool_id>("pool/own"), 0, 1 << 20}};
  for (std::size_t n = 0; n < gap + 2; ++n) {
    const bool reads = n == gap + 1;
    const std::string name = "resource/own." + std::to_string(reads ? 0 : n);
    if (!reads)
      p.resources.push_back(
          ferrum::test::workspace_resource(name, "pool/own", ferrum::resource_demand::fixed(256), 16));
    p.nodes[n].resources.push_back(ferrum::test::id<ferrum::resource_id>(name));
    p.nodes[n].access = {ferrum::resource_access::read_write,
                         reads ? ferrum::resource_access::read : ferrum::resource_access::write};
    p.nodes[n].after.clear();
    if (reads) p.nodes[n].after.push_back(p.nodes[0].id);
  }
  return p;
}

// Pairs of nodes (earlier, later) of `bucket` whose uses conflict (overlapping
// lane bytes, one writing) with no barrier before a node in (earlier, later]:
// the brute-force form of what derive_barriers promises on one queue.
inline std::vector<std::array<std::size_t, 2>> unseparated_hazards(const ferrum::compiled_bucket& bucket) {
  const ferrum::lane_recipe& r = bucket.lane;
  const std::size_t nodes = r.use_begin.size() - 1;
  const auto conflict = [](const ferrum::lane_use& a, const ferrum::lane_use& b) {
    const bool overlap = a.offset < b.offset + b.size && b.offset < a.offset + a.size;
    return overlap && (a.access != ferrum::resource_access::read || b.access != ferrum::resource_access::read);
  };
  std::vector<std::array<std::size_t, 2>> out;
  for (std::size_t j = 0; j < nodes; ++j)
    for (std::size_t i = 0; i < j; ++i) {
      bool hazard = false;
      for (const ferrum::lane_use& a : r.node_uses(i))
        for (const ferrum::lane_use& b : r.node_uses(j)) hazard = hazard || conflict(a, b);
      bool separated = false;
      for (std::size_t k = i + 1; k <= j; ++k) separated = separated || r.barrier_before[k];
      if (hazard && !separated) out.push_back({i, j});
    }
  return out;
}

// Pairs of nodes (earlier, later in `order`: the nodes as submitted, empty
// for plan order) of a recipe of compute nodes on one queue, whose uses
// conflict and whose stages no chain of the barriers `before` with their
// `scopes` — and, with `split`, of its events, each set after its producer
// and waited for before each of its waiters (split->barrier_before and
// barrier_scopes then replace `before` and `scopes`) — orders: the
// brute-force form of what derive_barrier_scopes and derive_split_barriers
// promise. A sync (a barrier, or a wait) orders the earlier use's stage s
// when s meets its `before` and the use is in its first scope (before the
// barrier; before the event's set, for a wait), or when the `after` of a
// sync in its first scope that orders it does (Vulkan's execution
// dependency chain); the later use's every stage must be in the `after` of
// one that does. A write's accesses must be in the `before` of a sync in
// between, and the later use's in the `after` of one.
inline std::vector<std::array<std::size_t, 2>> unscoped_hazards(const ferrum::lane_recipe& r,
                                                                std::span<const std::size_t> order,
                                                                const std::vector<bool>& before,
                                                                const std::vector<ferrum::barrier_scope>& scopes,
                                                                const ferrum::split_barriers* split = nullptr) {
  const std::size_t nodes = r.use_begin.size() - 1;
  const auto node_at = [&](std::size_t at) { return order.empty() ? at : order[at]; };
  const auto scope_of = [&](std::size_t n, const ferrum::lane_use& u) {
    return ferrum::access_scope(u.access, ferrum::stages_of(r.node_uses(n), ferrum::queue_kind::compute));
  };
  const auto conflict = [](const ferrum::lane_use& a, const ferrum::lane_use& b) {
    const bool overlap = a.offset < b.offset + b.size && b.offset < a.offset + a.size;
    return overlap && (ferrum::access_writes(a.access) || ferrum::access_writes(b.access));
  };
  // The syncs in submission order: at the start of the node at position
  // k, its waits, then its barrier. `commands`: the positions below it are
  // in its first scope; `syncs`: so are the syncs below this index.
  struct sync {
    std::size_t at;
    std::size_t commands;
    std::size_t syncs;
    ferrum::barrier_scope scope;
  };
  std::vector<std::size_t> position(nodes);
  for (std::size_t k = 0; k < nodes; ++k) position[node_at(k)] = k;
  std::vector<sync> syncs;
  std::vector<std::size_t> syncs_before(nodes + 1, 0);  // syncs at positions below k
  for (std::size_t k = 0; k < nodes; ++k) {
    syncs_before[k] = syncs.size();
    const std::size_t n = node_at(k);
    if (split != nullptr)
      for (std::size_t e : split->node_waits(n)) {
        const std::size_t set_at = position[split->events[e].producer];
        syncs.push_back({k, set_at + 1, 0, split->events[e].scope});
      }
    const std::vector<bool>& opens = split != nullptr ? split->barrier_before : before;
    const std::vector<ferrum::barrier_scope>& scoped = split != nullptr ? split->barrier_scopes : scopes;
    if (opens[n]) syncs.push_back({k, k, syncs.size(), scoped[n]});
  }
  syncs_before[nodes] = syncs.size();
  // A wait's first scope holds the syncs at or before its set's node.
  for (sync& s : syncs)
    if (s.commands != s.at) s.syncs = syncs_before[s.commands];
  // Positions i < j.
  const auto ordered = [&](std::size_t i, const ferrum::sync_scope& first, std::size_t j,
                           const ferrum::sync_scope& second) {
    const ferrum::access_mask written = first.accesses & ferrum::accesses::writes;
    bool flushed = written == 0;
    bool seen = false;
    // chained[x]: the `after` of the syncs below x that order the use.
    std::vector<ferrum::stage_mask> chained(syncs.size() + 1);
    for (std::uint32_t bit = 0; bit < ferrum::stages::count; ++bit) {
      const ferrum::stage_mask s = 1U << bit;
      if ((first.stages & s) == 0) continue;
      ferrum::stage_mask after = 0;
      const std::size_t from = syncs_before[i + 1];
      chained[from] = 0;
      for (std::size_t x = from; x < syncs_before[j + 1]; ++x) {
        const sync& b = syncs[x];
        chained[x + 1] = chained[x];
        const bool orders = (i < b.commands && (b.scope.before.stages & s) != 0) ||
                            (b.syncs > from && (b.scope.before.stages & chained[b.syncs]) != 0);
        if (!orders) continue;
        chained[x + 1] |= b.scope.after.stages;
        after |= b.scope.after.stages;
        flushed = flushed || (b.scope.before.accesses & written) == written;
        seen = seen || (b.scope.after.accesses & second.accesses) == second.accesses;
      }
      if ((second.stages & ~after) != 0) return false;
    }
    return flushed && (seen || second.accesses == 0);
  };
  std::vector<std::array<std::size_t, 2>> out;
  for (std::size_t j = 0; j < nodes; ++j)
    for (std::size_t i = 0; i < j; ++i) {
      bool fine = true;
      for (const ferrum::lane_use& a : r.node_uses(node_at(i)))
        for (const ferrum::lane_use& b : r.node_uses(node_at(j)))
          if (a.size != 0 && b.size != 0 && conflict(a, b) &&
              !ordered(i, scope_of(node_at(i), a), j, scope_of(node_at(j), b)))
            fine = false;
      if (!fine) out.push_back({node_at(i), node_at(j)});
    }
  return out;
}
// In plan order, with the bucket's barriers.
inline std::vector<std::array<std::size_t, 2>> unscoped_hazards(const ferrum::compiled_bucket& bucket) {
  return unscoped_hazards(bucket.lane, {}, bucket.lane.barrier_before, bucket.lane.barrier_scopes);
}

}  // namespace hazard_plans
