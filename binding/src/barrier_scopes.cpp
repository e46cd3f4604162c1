// barrier_scopes.cpp — derive_barrier_scopes (ferrum/binding/barriers.hpp):
// one sweep over the nodes in plan order, keeping per run of lane bytes
// the scope of its last write and of the reads since, and which nodes made
// them; each hazard widens the scope of the last barrier that stands
// between its two nodes.
#include "ferrum/binding/access_scope.hpp"
#include "ferrum/binding/barriers.hpp"
#include "ferrum/binding/image_access.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <map>

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
// since (their scope, the last of their nodes).
struct byte_state {
  sync_scope written;
  std::size_t writer = none;
  sync_scope read;
  std::size_t reader = none;
};

// Disjoint runs of bytes: begin -> (end, state). Bytes no use touched have
// no run.
class byte_states {
 public:
  // Calls f(state&) for every run inside [begin, end), making runs for the
  // gaps and splitting runs at begin and end first.
  template <class F>
  void visit(std::uint64_t begin, std::uint64_t end, F&& f) {
    split(begin);
    split(end);
    std::uint64_t at = begin;
    auto it = runs_.lower_bound(begin);
    while (at < end) {
      if (it == runs_.end() || it->first > at) {
        const std::uint64_t gap_end = it == runs_.end() ? end : std::min(end, it->first);
        it = runs_.emplace_hint(it, at, run{gap_end, {}});
      }
      f(it->second.state);
      at = it->second.end;
      ++it;
    }
  }

 private:
  struct run {
    std::uint64_t end = 0;
    byte_state state;
  };
  // Splits the run holding `at` (if any) into two at `at`.
  void split(std::uint64_t at) {
    auto it = runs_.upper_bound(at);
    if (it == runs_.begin()) return;
    --it;
    if (it->first == at || it->second.end <= at) return;
    run tail = it->second;
    it->second.end = at;
    runs_.emplace_hint(std::next(it), at, tail);
  }
  std::map<std::uint64_t, run> runs_;
};

}  // namespace

std::vector<barrier_scope> derive_barrier_scopes(const lane_recipe& recipe, const dependency_graph& graph,
                                                 const std::vector<bool>& before, barrier_queues queues) {
  const std::size_t nodes = std::min(graph.size(), before.size());
  std::vector<barrier_scope> scopes(before.size());
  // The last barrier so far on each kind's queue, and on any.
  std::array<std::size_t, 2> last_of_kind{none, none};
  std::size_t last_any = none;
  byte_states bytes;
  for (std::size_t n = 0; n < nodes && n + 1 < recipe.use_begin.size(); ++n) {
    const auto kind = static_cast<std::size_t>(queues == barrier_queues::any && graph.queue(n) == queue_kind::transfer);
    if (before[n]) last_of_kind[kind] = last_any = n;
    const auto uses = recipe.node_uses(n);
    const node_stages where = stages_of(uses, graph.queue(n));
    // The barrier that stands between node `earlier` and this one: the last
    // on this node's queue after it, else (a node of the other queue,
    // ordered by a semaphore on a device with both) the last on any.
    const auto between = [&](std::size_t earlier) -> barrier_scope* {
      if (last_of_kind[kind] != none && last_of_kind[kind] > earlier) return &scopes[last_of_kind[kind]];
      if (last_any != none && last_any > earlier) return &scopes[last_any];
      return nullptr;
    };
    for (const lane_use& u : uses) {
      if (u.size == 0) continue;
      const sync_scope s = access_scope(u.access, where);
      const bool reads = access_reads(u.access);
      const bool writes = access_writes(u.access);
      bytes.visit(u.offset, u.offset + u.size, [&](byte_state& b) {
        // Read after write, write after write: wait for the write and make
        // it visible. Write after read: wait for the reads.
        if (b.writer != none && b.writer != n) {
          if (barrier_scope* barrier = between(b.writer); barrier != nullptr) {
            barrier->before.stages |= b.written.stages;
            barrier->before.accesses |= b.written.accesses & accesses::writes;
            barrier->after |= s;
          }
        }
        if (writes && b.reader != none && b.reader != n) {
          if (barrier_scope* barrier = between(b.reader); barrier != nullptr) {
            barrier->before.stages |= b.read.stages;
            barrier->after |= s;
          }
        }
        if (writes) {
          b.written = b.writer == n ? (b.written |= s) : s;
          b.writer = n;
          b.read = {};
          b.reader = none;
        }
        if (reads && !writes) {
          b.read |= s;
          b.reader = n;
        }
      });
    }
    // A layout change waits for nothing of this wave the hazards above do
    // not name (the device adds its layouts' own stages): the barrier blocks
    // the node's use of the image.
    if (before[n])
      for (const image_transition& t : recipe.node_transitions(n)) scopes[n].after |= access_scope(t.access, where);
  }
  return scopes;
}

}  // namespace ferrum
