#include "listing_checks.hpp"

#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace ferrum::tools {
namespace {

// Whether one node runs after another through the graph's dependencies.
class graph_order {
 public:
  explicit graph_order(const dependency_graph& graph) : graph_(graph), seen_(graph.size(), 0) {}

  // Whether node `later` runs after node `earlier`: `earlier` is among its
  // transitive dependencies.
  bool runs_after(std::size_t later, std::size_t earlier) {
    if (earlier >= later) return false;
    // done_before: every node below it is a transitive dependency (a lower
    // bound), which answers a sequential graph at once.
    if (earlier < graph_.done_before(later)) return true;
    // Otherwise a walk back from `later`, never below `earlier` (plan order
    // is topological: nothing below it leads back up to it).
    ++generation_;
    stack_.assign(1, later);
    while (!stack_.empty()) {
      const std::size_t at = stack_.back();
      stack_.pop_back();
      for (const std::size_t d : graph_.after(at)) {
        if (d == earlier || earlier < graph_.done_before(d)) return true;
        if (d < earlier || seen_[d] == generation_) continue;
        seen_[d] = generation_;
        stack_.push_back(d);
      }
    }
    return false;
  }

  bool ordered(std::size_t a, std::size_t b) { return a < b ? runs_after(b, a) : runs_after(a, b); }

 private:
  const dependency_graph& graph_;
  std::vector<std::uint64_t> seen_;  // the walk that last reached each node
  std::uint64_t generation_ = 0;
  std::vector<std::size_t> stack_;
};

}  // namespace

std::vector<listing_check> plan_listing_checks(const plan& p, const dependency_graph& graph) {
  std::vector<listing_check> listings;
  // Each resource's listings (indices into `listings`), in plan order.
  std::unordered_map<std::string_view, std::vector<std::size_t>> users;
  std::vector<std::size_t> first_of_node;
  std::unordered_set<std::string_view> images;
  for (const resource_descriptor& r : p.resources)
    if (r.image) images.insert(r.id.view());
  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    first_of_node.push_back(listings.size());
    for (std::size_t position = 0; position < p.nodes[n].resources.size(); ++position) {
      listing_check l;
      l.node = n;
      l.position = position;
      // An image has no bytes in the lane's arenas to write patterns into.
      if (images.contains(p.nodes[n].resources[position].view()))
        l.unchecked = listing_check::unchecked_reason::image;
      else
        users[p.nodes[n].resources[position].view()].push_back(listings.size());
      listings.push_back(l);
    }
  }
  first_of_node.push_back(listings.size());
  std::unordered_set<std::string_view> persistent;
  for (const resource_descriptor& r : p.resources)
    if (r.lifetime == allocation_lifetime::persistent) persistent.insert(r.id.view());

  graph_order order(graph);
  for (const auto& [id, of] : users) {
    // Who writes: the users ordered against every other user.
    for (std::size_t i = 0; i < of.size(); ++i) {
      bool writes = true;
      for (std::size_t j = 0; j < of.size() && writes && !graph.sequential(); ++j)
        writes = i == j || order.ordered(listings[of[i]].node, listings[of[j]].node);
      listings[of[i]].writes = writes;
    }
    std::size_t last_writer = listing_check::none;
    for (const std::size_t at : of)
      if (listings[at].writes) last_writer = at;
    // What each user finds: the latest writer before it in this wave, or
    // the previous wave's last for a persistent resource.
    std::size_t writer = listing_check::none;
    for (const std::size_t at : of) {
      listing_check& l = listings[at];
      if (writer != listing_check::none) {
        l.before = listing_check::expectation::this_wave;
        l.writer = {listings[writer].node, listings[writer].position};
        listings[writer].read_later = true;
      } else if (persistent.contains(id) && last_writer != listing_check::none) {
        l.before = listing_check::expectation::previous_wave;
        l.writer = {listings[last_writer].node, listings[last_writer].position};
      }
      if (l.writes) writer = at;
      if (!l.writes && l.before == listing_check::expectation::nothing)
        l.unchecked = listing_check::unchecked_reason::unordered_users;
    }
  }

  // Who checks each node's listings: a compute (or async-compute) node
  // itself; for a transfer node, the first such node that runs after it.
  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    std::size_t checker = n;
    if (graph.queue(n) == queue_kind::transfer) {
      checker = listing_check::none;
      for (std::size_t later = n + 1; later < p.nodes.size() && checker == listing_check::none; ++later)
        if (computes(graph.queue(later)) && order.runs_after(later, n)) checker = later;
    }
    for (std::size_t at = first_of_node[n]; at < first_of_node[n + 1]; ++at) {
      listing_check& l = listings[at];
      l.checker = checker;
      if (checker == listing_check::none && l.unchecked == listing_check::unchecked_reason::checked)
        l.unchecked = listing_check::unchecked_reason::no_later_compute_node;
    }
  }
  return listings;
}

std::string describe_unchecked(const plan& p, const listing_check& l) {
  const std::string where = p.nodes[l.node].resources[l.position].str() + " at " + p.nodes[l.node].id.str() + ": ";
  switch (l.unchecked) {
    case listing_check::unchecked_reason::checked:
      return "";
    case listing_check::unchecked_reason::unordered_users:
      return where + "not ordered against every other user, and no user before it writes it";
    case listing_check::unchecked_reason::no_later_compute_node:
      return where + "a transfer node that no compute node runs after";
    case listing_check::unchecked_reason::image:
      return where + "an image, whose texels are not lane bytes (the image tests check them)";
  }
  return "";
}

}  // namespace ferrum::tools
