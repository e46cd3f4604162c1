// node_order.cpp — level_order (ferrum/binding/node_order.hpp): one sweep in
// plan order keeping, per run of lane bytes and per image, the level of its
// last write and the highest level of its reads since.
#include "ferrum/binding/node_order.hpp"

#include "byte_runs.hpp"

#include "ferrum/binding/image_access.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

namespace ferrum {
namespace {

// Levels are kept one up, so that 0 means none.
struct level_state {
  std::size_t written = 0;
  std::size_t read = 0;
};

}  // namespace

std::vector<std::size_t> level_order(const lane_recipe& recipe, const dependency_graph& graph,
                                     std::vector<std::size_t>* levels, std::vector<std::size_t>* level_begin) {
  const std::size_t nodes = std::min(graph.size(), recipe.use_begin.empty() ? 0 : recipe.use_begin.size() - 1);
  std::vector<std::size_t> level(nodes, 0);
  detail::byte_runs<level_state> bytes;
  // Per image (domain, member): its index in recipe.images, what touched
  // it, and the highest level of its uses (one up).
  std::map<std::pair<std::size_t, std::size_t>, std::size_t> image_of;
  for (std::size_t i = 0; i < recipe.images.size(); ++i)
    image_of[{recipe.images[i].domain, recipe.images[i].member}] = i;
  std::vector<level_state> image_state(recipe.images.size());
  std::vector<std::size_t> image_used(recipe.images.size(), 0);
  // Images a lane may place in memory another of their pool used: by
  // their intervals in plan order. Per pool (domain), the highest level of
  // the uses of its images whose interval ended (one up); and those images
  // by the end of their interval.
  std::map<std::size_t, std::size_t> ended;
  std::vector<std::size_t> by_end;
  for (std::size_t i = 0; i < recipe.images.size(); ++i)
    if (recipe.images[i].aliasable) by_end.push_back(i);
  std::sort(by_end.begin(), by_end.end(),
            [&](std::size_t a, std::size_t b) { return recipe.images[a].live.last < recipe.images[b].live.last; });
  auto next_end = by_end.begin();
  // What one use of node n conflicts with, and what it leaves.
  const auto follow = [](std::size_t& at, const level_state& s, bool writes) {
    if (s.written != 0) at = std::max(at, s.written);
    if (writes && s.read != 0) at = std::max(at, s.read);
  };
  const auto leave = [](level_state& s, std::size_t at, bool writes) {
    if (writes)
      s = {at + 1, 0};
    else
      s.read = std::max(s.read, at + 1);
  };
  for (std::size_t n = 0; n < nodes; ++n) {
    for (; next_end != by_end.end() && recipe.images[*next_end].live.last < n; ++next_end) {
      std::size_t& e = ended[recipe.images[*next_end].domain];
      e = std::max(e, image_used[*next_end]);
    }
    std::size_t at = 0;
    for (std::size_t a : graph.after(n)) at = std::max(at, level[a] + 1);
    const auto uses = recipe.node_uses(n);
    const auto transitions = recipe.node_transitions(n);
    // Whether use u writes, for ordering: a layout change writes too.
    const auto writes = [&](const lane_use& u, std::size_t image) {
      return access_writes(u.access) || std::any_of(transitions.begin(), transitions.end(),
                                                    [&](const image_transition& t) { return t.image == image; });
    };
    for (int pass = 0; pass < 2; ++pass) {
      for (const lane_use& u : uses) {
        const auto image = image_of.find({u.domain, u.member});
        const bool w = writes(u, image == image_of.end() ? recipe.images.size() : image->second);
        if (image != image_of.end()) {
          const std::size_t i = image->second;
          if (pass == 0) {
            follow(at, image_state[i], w);
            if (const auto e = ended.find(u.domain); recipe.images[i].aliasable && e != ended.end())
              at = std::max(at, e->second);
          } else {
            leave(image_state[i], at, w);
            image_used[i] = std::max(image_used[i], at + 1);
          }
        }
        if (u.size == 0) continue;
        bytes.visit(u.offset, u.offset + u.size,
                    [&](level_state& s) { pass == 0 ? follow(at, s, w) : leave(s, at, w); });
      }
    }
    level[n] = at;
  }
  if (levels != nullptr) *levels = level;
  if (graph.uses_transfer()) return {};
  std::vector<std::size_t> order(nodes);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return level[a] < level[b]; });
  if (std::is_sorted(order.begin(), order.end())) return {};
  if (level_begin != nullptr) {
    level_begin->clear();
    for (std::size_t at = 0; at < order.size(); ++at)
      if (at == 0 || level[order[at]] != level[order[at - 1]]) level_begin->push_back(at);
    level_begin->push_back(order.size());
  }
  return order;
}

}  // namespace ferrum
