// critical_path.cpp — derive_data_dependencies and find_critical_path
// (ferrum/binding/critical_path.hpp): one sweep over the nodes in plan
// order, keeping per run of lane bytes its last writer and the readers
// since (lists that share their tails, in one pool), then the longest path
// in plan order.
#include "ferrum/binding/critical_path.hpp"

#include "byte_runs.hpp"

#include "ferrum/binding/image_access.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>

namespace ferrum {
namespace {

constexpr std::size_t no_node = std::numeric_limits<std::size_t>::max();

// Disjoint runs of bytes: begin -> (end, last writer, readers since). A
// run's readers are a list in `cells` (first the latest); runs split from
// one share it, and a list is only ever prepended to, so sharing is safe.
class dependency_runs {
 public:
  struct run {
    std::uint64_t end = 0;
    std::size_t writer = no_node;
    std::size_t readers = no_node;  // into cells
  };
  struct cell {
    std::size_t node = 0;
    std::size_t next = no_node;
  };

  // Calls f(run) for every run overlapping [begin, end).
  template <class F>
  void find(std::uint64_t begin, std::uint64_t end, F&& f) const {
    auto it = runs_.upper_bound(begin);
    if (it != runs_.begin() && std::prev(it)->second.end > begin) --it;
    for (; it != runs_.end() && it->first < end; ++it) f(it->second);
  }

  // Calls f(node) for every reader of `r`.
  template <class F>
  void readers(const run& r, F&& f) const {
    for (std::size_t c = r.readers; c != no_node; c = cells_[c].next) f(cells_[c].node);
  }

  // Node `reader` reads [begin, end).
  void read(std::uint64_t begin, std::uint64_t end, std::size_t reader) {
    detail::split_run(runs_, begin);
    detail::split_run(runs_, end);
    std::uint64_t at = begin;
    auto it = runs_.lower_bound(begin);
    while (at < end) {
      if (it == runs_.end() || it->first > at) {
        const std::uint64_t gap_end = it == runs_.end() ? end : std::min(end, it->first);
        it = runs_.emplace_hint(it, at, run{gap_end});
      }
      run& r = it->second;
      if (r.readers == no_node || cells_[r.readers].node != reader) {
        cells_.push_back({reader, r.readers});
        r.readers = cells_.size() - 1;
      }
      at = r.end;
      ++it;
    }
  }

  // Node `writer` writes [begin, end): one run, no readers.
  void write(std::uint64_t begin, std::uint64_t end, std::size_t writer) {
    detail::split_run(runs_, begin);
    detail::split_run(runs_, end);
    runs_.erase(runs_.lower_bound(begin), runs_.lower_bound(end));
    runs_.emplace(begin, run{end, writer});
  }

 private:
  std::map<std::uint64_t, run> runs_;
  std::vector<cell> cells_;
};

// Whether node n's use `u` writes: its access does, or the node changes
// the layout of the image it is.
bool use_writes(const lane_recipe& recipe, std::size_t n, const lane_use& u) noexcept {
  if (access_writes(u.access)) return true;
  if (!is_image_access(u.access)) return false;
  for (const image_transition& t : recipe.node_transitions(n))
    if (t.image < recipe.images.size() && recipe.images[t.image].domain == u.domain &&
        recipe.images[t.image].member == u.member)
      return true;
  return false;
}

}  // namespace

bool data_dependencies::has(std::size_t earlier, std::size_t later) const noexcept {
  if (later >= size()) return false;
  const auto deps = of(later);
  return std::binary_search(deps.begin(), deps.end(), earlier);
}

data_dependencies derive_data_dependencies(const lane_recipe& recipe, const dependency_graph& graph) {
  const std::size_t nodes = graph.size();
  data_dependencies deps;
  deps.begin.reserve(nodes + 1);
  dependency_runs bytes;
  // seen[i] == n: node i is already among node n's dependencies.
  std::vector<std::size_t> seen(nodes, no_node);
  std::vector<std::size_t> found;
  for (std::size_t n = 0; n < nodes; ++n) {
    found.clear();
    const auto add = [&](std::size_t i) {
      if (i == no_node || i >= n || seen[i] == n) return;
      seen[i] = n;
      found.push_back(i);
    };
    for (const std::size_t a : graph.after(n)) add(a);
    const std::span<const lane_use> uses =
        n + 1 < recipe.use_begin.size() ? recipe.node_uses(n) : std::span<const lane_use>{};
    for (const lane_use& u : uses) {
      if (u.size == 0) continue;
      const bool w = use_writes(recipe, n, u);
      bytes.find(u.offset, u.offset + u.size, [&](const dependency_runs::run& r) {
        add(r.writer);
        if (w) bytes.readers(r, add);
      });
    }
    // Its reads first: where it also writes, its write takes their place.
    for (const lane_use& u : uses)
      if (u.size != 0 && !use_writes(recipe, n, u)) bytes.read(u.offset, u.offset + u.size, n);
    for (const lane_use& u : uses)
      if (u.size != 0 && use_writes(recipe, n, u)) bytes.write(u.offset, u.offset + u.size, n);
    std::sort(found.begin(), found.end());
    deps.on.insert(deps.on.end(), found.begin(), found.end());
    deps.begin.push_back(deps.on.size());
  }
  return deps;
}

critical_path find_critical_path(const data_dependencies& deps, std::span<const std::uint64_t> durations_ns) {
  const std::size_t nodes = deps.size();
  critical_path out;
  // finish[n]: the longest path ending with node n; from[n]: the node
  // before it there (no_node: n starts it).
  std::vector<std::uint64_t> finish(nodes, 0);
  std::vector<std::size_t> from(nodes, no_node);
  std::size_t last = no_node;
  for (std::size_t n = 0; n < nodes; ++n) {
    const std::uint64_t took = n < durations_ns.size() ? durations_ns[n] : 0;
    out.serial_ns += took;
    std::uint64_t start = 0;
    for (const std::size_t d : deps.of(n))
      if (from[n] == no_node || finish[d] > start) {
        start = finish[d];
        from[n] = d;
      }
    finish[n] = start + took;
    if (last == no_node || finish[n] >= finish[last]) last = n;
  }
  if (last == no_node) return out;
  out.critical_path_ns = finish[last];
  for (std::size_t n = last; n != no_node; n = from[n]) out.path.push_back(n);
  std::reverse(out.path.begin(), out.path.end());
  out.async_bound_ns = async_bound(out.serial_ns, out.critical_path_ns);
  return out;
}

}  // namespace ferrum
