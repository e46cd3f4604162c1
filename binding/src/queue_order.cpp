#include "queue_order.hpp"

#include "ferrum/binding/image_access.hpp"

#include "plan_rules.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ferrum::detail {
namespace {

// One use of a resource: its node, and the position among that node's
// resources.
struct node_use {
  std::size_t node;
  std::size_t k;
};

// Whether two accesses of one resource must not run at once: either writes,
// or an image is needed in two layouts (a layout change writes it).
bool accesses_conflict(const resource_descriptor& r, resource_access a, resource_access b) noexcept {
  if (access_writes(a) || access_writes(b)) return true;
  return r.image.has_value() && layout_of(a) != layout_of(b);
}

// The nodes `j` runs after, transitively, from plan index `lowest` on
// (plan order is topological, so no path to a later node passes below it):
// marked `stamp` in `seen`.
void mark_ancestors(const dependency_graph& graph, std::size_t j, std::size_t lowest, std::uint32_t stamp,
                    std::vector<std::uint32_t>& seen, std::vector<std::size_t>& stack) {
  stack.assign(1, j);
  while (!stack.empty()) {
    const std::size_t n = stack.back();
    stack.pop_back();
    for (const std::size_t d : graph.after(n))
      if (d >= lowest && seen[d] != stamp) {
        seen[d] = stamp;
        stack.push_back(d);
      }
  }
}

error unordered_error(const plan& p, const resource_descriptor& r, node_use earlier, node_use later) {
  const plan_node& a = p.nodes[earlier.node];
  const plan_node& b = p.nodes[later.node];
  const auto who = [](const plan_node& n, std::size_t k) {
    return "node " + node_id::quote(n.id.view()) + " (queue '" + std::string(to_string(n.queue)) + "', " +
           quote_text(to_string(n.access_of(k))) + ")";
  };
  return make_error(errc::unordered_hazard,
                    (r.image ? "image " : "resource ") + resource_id::quote(r.id.view()) + " is used by " +
                        who(a, earlier.k) + " and " + who(b, later.k) +
                        " with no path of 'after' between them: the two queues may run them in either order; "
                        "list " +
                        node_id::quote(a.id.view()) + " (or a node after it) in the 'after' of " +
                        node_id::quote(b.id.view()),
                    element_path("nodes", later.node) + "/resources/" + std::to_string(later.k));
}

}  // namespace

result<void> check_queue_order(const plan& p, std::span<const std::size_t> uses, const dependency_graph& graph) {
  const std::size_t nodes = graph.size();
  if (nodes == 0 ||
      std::all_of(p.nodes.begin(), p.nodes.end(), [&](const plan_node& n) { return n.queue == p.nodes.front().queue; }))
    return {};
  // Each resource's uses in plan order (a counting sort of `uses`).
  std::vector<std::size_t> begin(p.resources.size() + 1, 0);
  for (const std::size_t r : uses) ++begin[r + 1];
  for (std::size_t r = 0; r < p.resources.size(); ++r) begin[r + 1] += begin[r];
  std::vector<node_use> by_resource(uses.size());
  {
    std::vector<std::size_t> next(begin.begin(), begin.end() - 1);
    for (std::size_t n = 0, first = 0; n < p.nodes.size(); first += p.nodes[n].resources.size(), ++n)
      for (std::size_t k = 0; k < p.nodes[n].resources.size(); ++k) by_resource[next[uses[first + k]]++] = {n, k};
  }
  // Per node, the earliest node of another queue it conflicts with (nodes
  // when none): where its walk back along `after` may stop. Found in one
  // pass over each resource's uses, from the first use so far on each
  // queue: any (against a write), a write's, and one per layout (images).
  std::vector<std::size_t> lowest(nodes, nodes);
  constexpr std::size_t layouts = static_cast<std::size_t>(image_layout::present_src) + 1;
  struct firsts {
    std::size_t any;
    std::size_t write;
    std::array<std::size_t, layouts> layout;
  };
  for (std::size_t r = 0; r < p.resources.size(); ++r) {
    std::array<firsts, queue_kind_count> first_on;
    for (firsts& f : first_on) {
      f.any = f.write = nodes;
      f.layout.fill(nodes);
    }
    const bool image = p.resources[r].image.has_value();
    for (std::size_t u = begin[r]; u < begin[r + 1]; ++u) {
      const node_use use = by_resource[u];
      const queue_kind queue = p.nodes[use.node].queue;
      const resource_access a = p.nodes[use.node].access_of(use.k);
      const std::size_t layout = static_cast<std::size_t>(layout_of(a));
      for (const queue_kind other : queue_kinds) {
        if (other == queue) continue;
        const firsts& f = first_on[index_of(other)];
        std::size_t earliest = access_writes(a) ? f.any : f.write;
        if (image)
          for (std::size_t l = 0; l < layouts; ++l)
            if (l != layout) earliest = std::min(earliest, f.layout[l]);
        lowest[use.node] = std::min(lowest[use.node], earliest);
      }
      firsts& own = first_on[index_of(queue)];
      own.any = std::min(own.any, use.node);
      if (access_writes(a)) own.write = std::min(own.write, use.node);
      own.layout[layout] = std::min(own.layout[layout], use.node);
    }
  }
  // Every such pair (i, j) needs i among j's ancestors; the first pair in
  // plan order (by j, then i) that is not is the error.
  std::vector<std::uint32_t> seen(nodes, 0);
  std::vector<std::size_t> stack;
  std::uint32_t stamp = 0;
  for (std::size_t j = 0, first = 0; j < nodes; first += p.nodes[j].resources.size(), ++j) {
    if (lowest[j] == nodes) continue;
    mark_ancestors(graph, j, lowest[j], ++stamp, seen, stack);
    const plan_node& node = p.nodes[j];
    for (std::size_t k = 0; k < node.resources.size(); ++k) {
      const std::size_t r = uses[first + k];
      for (std::size_t u = begin[r]; u < begin[r + 1] && by_resource[u].node < j; ++u) {
        const node_use earlier = by_resource[u];
        if (p.nodes[earlier.node].queue != node.queue && seen[earlier.node] != stamp &&
            accesses_conflict(p.resources[r], p.nodes[earlier.node].access_of(earlier.k), node.access_of(k)))
          return unordered_error(p, p.resources[r], earlier, {j, k});
      }
    }
  }
  return {};
}

}  // namespace ferrum::detail
