// ferrum/binding/dependency_graph.hpp — the order among a plan's nodes: per
// node the queue it runs on and the nodes it runs after.
//
// Compiled once on the cold path (into compiled_program::dependencies; the
// plan hash covers what it is made from). In a v1 plan every node runs after
// the one before it on the compute queue; in a v2 plan the graph is what the
// nodes' `queue` and `after` say. Plan order is always a topological order:
// every node's dependencies have lower plan indices.
//
//   auto graph = ferrum::compile_dependency_graph(plan);
//   for (std::size_t d : graph->after(3)) wait_for(d);
//   run_on(graph->queue(3));
#pragma once

#include "ferrum/binding/plan.hpp"
#include "ferrum/queue_kind.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace ferrum {

class dependency_graph {
 public:
  dependency_graph() = default;

  // The number of nodes.
  [[nodiscard]] std::size_t size() const noexcept { return queues_.size(); }

  // The queue node `n` runs on.
  [[nodiscard]] queue_kind queue(std::size_t n) const noexcept { return queues_[n]; }

  // The plan indices of the nodes node `n` runs after, ascending, each below n.
  [[nodiscard]] std::span<const std::size_t> after(std::size_t n) const noexcept {
    return std::span(after_).subspan(after_begin_[n], after_begin_[n + 1] - after_begin_[n]);
  }

  // Whether every node runs after the one before it (a v1 plan, or a v2 plan
  // that says the same): node order is then execution order.
  [[nodiscard]] bool sequential() const noexcept { return sequential_; }

  // Whether any node runs on the transfer queue.
  [[nodiscard]] bool uses_transfer() const noexcept { return uses(queue_kind::transfer); }
  // Whether any node runs on a queue of `kind`.
  [[nodiscard]] bool uses(queue_kind kind) const noexcept;

  // The number of leading nodes (plan indices 0..k-1) that are all done before
  // node `n` starts: they are all among its transitive dependencies. A lower
  // bound where that set is not a prefix of its own dependencies' prefixes and
  // dependencies; n itself in a sequential graph. Liveness uses it
  // (docs/design.md, "Lane memory").
  [[nodiscard]] std::size_t done_before(std::size_t n) const noexcept { return done_before_[n]; }

  friend bool operator==(const dependency_graph&, const dependency_graph&) = default;

 private:
  friend class dependency_graph_builder;

  std::vector<queue_kind> queues_;
  std::vector<std::size_t> after_begin_{0};
  std::vector<std::size_t> after_;
  std::vector<std::size_t> done_before_;
  bool sequential_ = true;
};

// Checks a plan's dependencies and compiles its graph. Errors (with the JSON
// path of the node's field): unknown_field (`queue` or `after` in a v1 plan),
// unknown_queue, dangling_dependency, duplicate_dependency, dependency_cycle
// (its detail names the nodes of the cycle), dependency_not_earlier. Node ids
// are not checked here (validate_plan does): with a duplicated id, a
// dependency names its first node.
[[nodiscard]] result<dependency_graph> compile_dependency_graph(const plan& p);

}  // namespace ferrum
