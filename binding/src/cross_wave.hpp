// cross_wave.hpp (private) — the resources one wave's nodes share with the
// waves before it on other lanes: the engine's imported buffers and images,
// and history images and buffers (docs/design.md, "Barriers"). The
// scheduler orders such waves with semaphore waits; the barrier before a
// wave's first use of one also waits for every use the plan makes of it (what
// the wave before did), so that each wave's own commands order it too, on a
// device or a validation layer that sees only barriers.
#pragma once

#include "ferrum/binding/access_scope.hpp"
#include "ferrum/binding/dependency_graph.hpp"
#include "ferrum/binding/image_access.hpp"
#include "ferrum/binding/lane_recipe.hpp"

#include <cstddef>
#include <map>
#include <utility>

namespace ferrum::detail {

struct cross_wave_uses {
  // Per resource (domain, member): every use the plan makes of it, and
  // whether one writes.
  struct resource {
    sync_scope uses;
    bool written = false;
  };
  std::map<std::pair<std::size_t, std::size_t>, resource> resources;

  [[nodiscard]] const resource* find(const lane_use& u) const {
    const auto it = resources.find({u.domain, u.member});
    return it == resources.end() ? nullptr : &it->second;
  }
};

[[nodiscard]] inline cross_wave_uses cross_wave_of(const lane_recipe& recipe, const dependency_graph& graph) {
  cross_wave_uses out;
  for (const lane_import& i : recipe.imports) out.resources[{i.domain, i.member}];
  for (const lane_image& i : recipe.images)
    if (i.imported) out.resources[{i.domain, i.member}];
  if (out.resources.empty()) return out;
  const std::size_t nodes = std::min(graph.size(), recipe.use_begin.empty() ? 0 : recipe.use_begin.size() - 1);
  for (std::size_t n = 0; n < nodes; ++n) {
    const auto uses = recipe.node_uses(n);
    const node_stages where = stages_of(uses, graph.queue(n));
    for (const lane_use& u : uses) {
      const auto it = out.resources.find({u.domain, u.member});
      if (it == out.resources.end()) continue;
      it->second.uses |= access_scope(u.access, where);
      it->second.written = it->second.written || access_writes(u.access);
    }
  }
  return out;
}

}  // namespace ferrum::detail
