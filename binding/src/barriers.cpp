// barriers.cpp — derive_barriers (ferrum/binding/barriers.hpp): one sweep
// over the nodes in plan order, keeping the bytes touched since the last
// barrier as unions of ranges.
#include "ferrum/binding/barriers.hpp"

#include "cross_wave.hpp"

#include "ferrum/binding/image_access.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <map>
#include <set>
#include <span>
#include <utility>

namespace ferrum {
namespace {

// A union of half-open byte ranges, kept disjoint: begin -> end.
class byte_set {
 public:
  [[nodiscard]] bool overlaps(std::uint64_t begin, std::uint64_t end) const {
    auto next = ranges_.upper_bound(begin);
    if (next != ranges_.end() && next->first < end) return true;
    return next != ranges_.begin() && std::prev(next)->second > begin;
  }

  void add(std::uint64_t begin, std::uint64_t end) {
    auto it = ranges_.upper_bound(begin);
    if (it != ranges_.begin() && std::prev(it)->second >= begin) {
      --it;
      begin = it->first;
    }
    while (it != ranges_.end() && it->first <= end) {
      end = std::max(end, it->second);
      it = ranges_.erase(it);
    }
    ranges_.emplace(begin, end);
  }

  void clear() noexcept { ranges_.clear(); }

 private:
  std::map<std::uint64_t, std::uint64_t> ranges_;
};

// The accesses of some nodes: what a later use conflicts with.
struct touched {
  byte_set reads;
  byte_set writes;

  [[nodiscard]] bool conflicts(const lane_use& u) const {
    const std::uint64_t end = u.offset + u.size;
    if (writes.overlaps(u.offset, end)) return true;
    return access_writes(u.access) && reads.overlaps(u.offset, end);
  }
  void add(const lane_use& u) {
    const std::uint64_t end = u.offset + u.size;
    if (access_reads(u.access)) reads.add(u.offset, end);
    if (access_writes(u.access)) writes.add(u.offset, end);
  }
  void clear() noexcept {
    reads.clear();
    writes.clear();
  }
};

}  // namespace

std::vector<bool> derive_barriers(const lane_recipe& recipe, const dependency_graph& graph, barrier_queues queues,
                                  std::span<const std::size_t> order) {
  const std::size_t nodes = std::min(graph.size(), recipe.use_begin.empty() ? 0 : recipe.use_begin.size() - 1);
  std::vector<bool> before(graph.size(), false);
  // Per kind: what its nodes touched since the last barrier before a node
  // of that kind (same_kind: a queue of its own), and since the last
  // barrier of any kind (any_kind: one queue for all).
  std::array<touched, 2> same_kind;
  std::array<touched, 2> any_kind;
  // Resources the waves before used (cross_wave.hpp): a wave's first use of
  // one the plan writes opens with a barrier.
  const detail::cross_wave_uses cross = detail::cross_wave_of(recipe, graph);
  std::set<std::pair<std::size_t, std::size_t>> used;
  for (std::size_t at = 0; at < nodes; ++at) {
    const std::size_t n = order.empty() ? at : order[at];
    // On one queue every node counts as one kind.
    const auto kind = static_cast<std::size_t>(queues == barrier_queues::any && graph.queue(n) == queue_kind::transfer);
    const std::size_t other = 1 - kind;
    const auto uses = recipe.node_uses(n);
    // Layout transitions are made by the barrier a node opens with.
    bool hazard = false;
    recipe.for_each_transition(n, !order.empty(), [&](std::size_t, const image_transition&) { hazard = true; });
    for (const lane_use& u : uses)
      if (const auto* shared = cross.find(u); shared != nullptr && used.insert({u.domain, u.member}).second)
        hazard = hazard || shared->written;
    for (const lane_use& u : uses)
      if (u.size != 0 && (same_kind[kind].conflicts(u) || any_kind[other].conflicts(u))) hazard = true;
    if (hazard) {
      before[n] = true;
      same_kind[kind].clear();
      any_kind[kind].clear();
      any_kind[other].clear();
    }
    for (const lane_use& u : uses) {
      if (u.size == 0) continue;
      same_kind[kind].add(u);
      any_kind[kind].add(u);
    }
  }
  return before;
}

}  // namespace ferrum
