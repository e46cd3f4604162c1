#include "ferrum/binding/dependency_graph.hpp"

#include "dependency_graph_build.hpp"
#include "plan_index.hpp"
#include "plan_rules.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

namespace ferrum {

class dependency_graph_builder {
 public:
  dependency_graph_builder(const plan& p, const detail::node_lookup& lookup) : plan_(p), lookup_(lookup) {}

  result<dependency_graph> build() {
    const std::size_t n = plan_.nodes.size();
    graph_.queues_.reserve(n);
    graph_.after_begin_.reserve(n + 1);
    auto added = plan_.format == plan_format::v1 ? add_sequential() : add_declared();
    if (!added) return added.error();
    if (has_later_dependency_) {
      if (auto acyclic = check_acyclic(); !acyclic) return acyclic.error();
      return later_dependency_error();
    }
    count_done_before();
    return std::move(graph_);
  }

 private:
  static std::string at(std::size_t node, std::string_view field) {
    return "/nodes/" + std::to_string(node) + "/" + std::string(field);
  }
  std::string quoted(std::size_t node) const { return node_id::quote(plan_.nodes[node].id.view()); }

  // v1: each node after the one before, on the compute queue; the format
  // has neither field.
  result<void> add_sequential() {
    for (std::size_t i = 0; i < plan_.nodes.size(); ++i) {
      const plan_node& node = plan_.nodes[i];
      if (node.queue != queue_kind::compute) return detail::v2_field_in_v1("queue", at(i, "queue"));
      if (!node.after.empty()) return detail::v2_field_in_v1("after", at(i, "after"));
      graph_.queues_.push_back(queue_kind::compute);
      if (i > 0) graph_.after_.push_back(i - 1);
      graph_.after_begin_.push_back(graph_.after_.size());
    }
    return {};
  }

  result<void> add_declared() {
    for (std::size_t i = 0; i < plan_.nodes.size(); ++i) {
      const plan_node& node = plan_.nodes[i];
      if (index_of(node.queue) >= queue_kind_count)
        return make_error(errc::unknown_queue,
                          "node " + quoted(i) + " names queue " + std::to_string(index_of(node.queue)), at(i, "queue"));
      graph_.queues_.push_back(node.queue);
      const std::size_t begin = graph_.after_.size();
      for (std::size_t j = 0; j < node.after.size(); ++j) {
        const std::optional<std::size_t> d = lookup_(node.after[j].view());
        if (!d)
          return make_error(errc::dangling_dependency,
                            "node " + quoted(i) + " runs after unknown node " + node_id::quote(node.after[j].view()),
                            at(i, "after/" + std::to_string(j)));
        if (*d == i)
          return make_error(errc::dependency_cycle, "a cycle: node " + quoted(i) + " runs after itself",
                            at(i, "after/" + std::to_string(j)));
        graph_.after_.push_back(*d);
        if (*d > i) has_later_dependency_ = true;
      }
      // Ascending, and a repeat is adjacent once sorted; it is reported at
      // its second position in the node's list.
      const auto first = graph_.after_.begin() + static_cast<std::ptrdiff_t>(begin);
      std::sort(first, graph_.after_.end());
      if (const auto repeat = std::adjacent_find(first, graph_.after_.end()); repeat != graph_.after_.end()) {
        std::size_t seen = 0;
        std::size_t j = 0;
        while (lookup_(node.after[j].view()) != *repeat || ++seen < 2) ++j;
        return make_error(errc::duplicate_dependency,
                          "node " + quoted(i) + " lists node " + quoted(*repeat) + " twice in 'after'",
                          at(i, "after/" + std::to_string(j)));
      }
      graph_.after_begin_.push_back(graph_.after_.size());
    }
    return {};
  }

  // A depth-first search along "runs after" from every node in plan order; a
  // dependency met again while still on the path closes a cycle, reported
  // from that node round to itself (cycle_error).
  result<void> check_acyclic() const {
    enum : std::uint8_t { unvisited, on_path, finished };
    const std::size_t n = graph_.size();
    std::vector<std::uint8_t> state(n, unvisited);
    struct frame {
      std::size_t node;
      std::size_t next;  // the next of its dependencies to follow
    };
    std::vector<frame> path;
    for (std::size_t root = 0; root < n; ++root) {
      if (state[root] != unvisited) continue;
      path.push_back({root, 0});
      state[root] = on_path;
      while (!path.empty()) {
        frame& top = path.back();
        const auto deps = graph_.after(top.node);
        if (top.next == deps.size()) {
          state[top.node] = finished;
          path.pop_back();
          continue;
        }
        const std::size_t d = deps[top.next++];
        if (state[d] == unvisited) {
          state[d] = on_path;
          path.push_back({d, 0});
        } else if (state[d] == on_path) {
          return cycle_error(path, d);
        }
      }
    }
    return {};
  }

  // The most nodes a cycle's detail names before it skips to the last one:
  // a cycle of 20,000 nodes stays one short line.
  static constexpr std::size_t cycle_prefix = 8;

  // The cycle from `closing` (on the path) round to itself along the path;
  // the edge that closes it, the last node's dependency on `closing`, is
  // the error's path and the one the detail says to remove, e.g. "a cycle
  // of 3 nodes: node 'a' runs after node 'c' runs after node 'b' runs after
  // node 'a'; to break it, remove node 'a' from the 'after' of node 'b'".
  template <class Path>
  error cycle_error(const Path& path, std::size_t closing) const {
    const auto start = std::find_if(path.begin(), path.end(), [&](const auto& f) { return f.node == closing; });
    const auto length = static_cast<std::size_t>(path.end() - start);
    const std::size_t last = path.back().node;
    std::string cycle = "a cycle of " + std::to_string(length) + " nodes: ";
    const auto runs_after = [&](std::size_t k) {
      cycle += "node " + quoted(start[static_cast<std::ptrdiff_t>(k)].node) + " runs after ";
    };
    const std::size_t shown = length > cycle_prefix + 1 ? cycle_prefix : length;
    for (std::size_t k = 0; k < shown; ++k) runs_after(k);
    if (shown < length) {
      const std::size_t skipped = length - shown - 1;
      cycle += "... " + std::to_string(skipped) + (skipped == 1 ? " more node" : " more nodes") + " ... runs after ";
      runs_after(length - 1);
    }
    cycle += "node " + quoted(closing) + "; to break it, remove node " + quoted(closing) +
             " from the 'after' of node " + quoted(last);
    return make_error(errc::dependency_cycle, std::move(cycle), at(last, "after/" + after_position(last, closing)));
  }

  // The position of dependency `d` in node `n`'s own list (the plan's order).
  std::string after_position(std::size_t n, std::size_t d) const {
    const std::vector<node_id>& after = plan_.nodes[n].after;
    std::size_t j = 0;
    while (j + 1 < after.size() && lookup_(after[j].view()) != d) ++j;
    return std::to_string(j);
  }

  error later_dependency_error() const {
    for (std::size_t i = 0; i < graph_.size(); ++i)
      for (std::size_t d : graph_.after(i))
        if (d > i)
          return make_error(errc::dependency_not_earlier,
                            "node " + quoted(i) + " (node " + std::to_string(i) + ") runs after node " + quoted(d) +
                                " (node " + std::to_string(d) + "), which is listed later; list it first",
                            at(i, "after/" + after_position(i, d)));
    return make_error(errc::dependency_not_earlier, "a dependency on a later node");
  }

  // done_before(n): the union of each dependency d's leading nodes
  // [0, done_before(d)) and of the dependencies themselves, as a prefix:
  // start from the longest of those prefixes and extend it through the
  // dependencies that continue it (ascending, so one pass).
  void count_done_before() {
    const std::size_t n = graph_.size();
    graph_.done_before_.resize(n);
    bool sequential = true;
    for (std::size_t i = 0; i < n; ++i) {
      const auto deps = graph_.after(i);
      std::size_t done = 0;
      for (std::size_t d : deps) done = std::max(done, graph_.done_before_[d]);
      for (std::size_t d : deps)
        if (d == done) ++done;
      graph_.done_before_[i] = done;
      sequential = sequential && done == i && (i == 0 || (deps.size() == 1 && deps[0] == i - 1));
    }
    graph_.sequential_ = sequential;
  }

  const plan& plan_;
  const detail::node_lookup& lookup_;
  dependency_graph graph_;
  bool has_later_dependency_ = false;
};

bool dependency_graph::uses(queue_kind kind) const noexcept {
  return std::find(queues_.begin(), queues_.end(), kind) != queues_.end();
}

result<dependency_graph> compile_dependency_graph(const plan& p) {
  const detail::plan_index index(p);
  return detail::compile_dependency_graph(p, [&index](std::string_view id) { return index.node(id); });
}

namespace detail {

result<dependency_graph> compile_dependency_graph(const plan& p, const node_lookup& lookup) {
  return dependency_graph_builder(p, lookup).build();
}

void extend_for_dependencies(std::vector<live_interval>& intervals, const dependency_graph& graph, const plan& p,
                             std::span<const std::size_t> uses) {
  const std::size_t n = graph.size();
  if (graph.sequential() || n == 0) return;
  // On one queue kind plan order is an order every device keeps.
  bool one_kind = true;
  for (std::size_t k = 1; k < n; ++k) one_kind = one_kind && graph.queue(k) == graph.queue(0);
  if (one_kind) return;
  constexpr std::size_t none = plan_index::none;
  // last[r][K]: resource r's last user on queue kind K.
  using kind_lasts = std::array<std::size_t, queue_kind_count>;
  kind_lasts no_users;
  no_users.fill(none);
  std::vector<kind_lasts> last(intervals.size(), no_users);
  for (std::size_t node = 0, k = 0; node < n && node < p.nodes.size(); ++node)
    for (std::size_t end = k + p.nodes[node].resources.size(); k < end && k < uses.size(); ++k)
      if (uses[k] < last.size()) last[uses[k]][index_of(graph.queue(node))] = node;
  // ready[K][k]: the fewest leading nodes done before any node of kind K
  // from k on (n + 1 where none is); it never decreases with k.
  std::array<std::vector<std::size_t>, queue_kind_count> ready;
  for (auto& r : ready) r.assign(n + 1, n + 1);
  for (std::size_t k = n; k-- > 0;)
    for (std::size_t kind = 0; kind < queue_kind_count; ++kind)
      ready[kind][k] =
          kind == index_of(graph.queue(k)) ? std::min(ready[kind][k + 1], graph.done_before(k)) : ready[kind][k + 1];
  for (std::size_t r = 0; r < intervals.size(); ++r) {
    live_interval& interval = intervals[r];
    std::size_t first_free = interval.last + 1;
    // A node of kind K frees the bytes once every user on another kind is
    // among the leading nodes done before it.
    for (std::size_t kind = 0; kind < queue_kind_count; ++kind) {
      std::size_t other = none;
      for (std::size_t o = 0; o < queue_kind_count; ++o)
        if (o != kind && last[r][o] != none) other = other == none ? last[r][o] : std::max(other, last[r][o]);
      if (other == none) continue;
      const auto free_from = std::partition_point(ready[kind].begin() + static_cast<std::ptrdiff_t>(interval.last) + 1,
                                                  ready[kind].end(), [&](std::size_t d) { return d <= other; });
      first_free = std::max(first_free, static_cast<std::size_t>(free_from - ready[kind].begin()));
    }
    interval.last = std::min<std::size_t>(n - 1, first_free - 1);
  }
}

}  // namespace detail
}  // namespace ferrum
