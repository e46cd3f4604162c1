#include "ferrum/binding/compiled_program.hpp"

#include "ferrum/binding/admission.hpp"
#include "ferrum/binding/demand.hpp"

#include "culling.hpp"
#include "dependency_graph_build.hpp"
#include "lane_placement.hpp"
#include "lane_recipes.hpp"
#include "plan_index.hpp"
#include "second_thread.hpp"
#include "sha256_writer.hpp"

#include <algorithm>
#include <optional>

namespace ferrum {

const compiled_bucket* compiled_program::find(const bucket_id& id) const noexcept {
  auto it = std::lower_bound(buckets.begin(), buckets.end(), id,
                             [](const compiled_bucket& b, const bucket_id& key) { return b.id < key; });
  return it != buckets.end() && it->id == id ? &*it : nullptr;
}

result<compiled_program> compile(const plan& p) {
  const detail::sha256_scope sha256;  // every digest of this compile on this thread
  const detail::plan_index index(p);
  dependency_graph dependencies;
  if (auto valid = detail::validate_plan(p, index, &dependencies); !valid) return valid.error();
  // The plan hash reads the whole plan and nothing needs it until the program
  // binding layouts: on a big plan, compute it on a second thread meanwhile
  // (the plan and the index are not modified); on a small one, inline there.
  // (About 100 ns per node and 150 per resource, mostly SHA-256.)
  auto hash_task = detail::beside(detail::worth_a_thread(100 * p.nodes.size() + 150 * p.resources.size()),
                                  [&p, &index] { return detail::hash_plan(p, index); });
  auto domains = detail::derive_pool_domains(p, index);
  if (!domains) return domains.error();
  // Culled nodes first: the buffers only they use take no bytes.
  std::vector<cull_reason> culling = detail::derive_culling(p, index, *domains);
  const std::vector<bool> unused = detail::unused_resources(p, index, culling, *domains);

  // Live intervals matter to interval pools only.
  std::vector<live_interval> intervals;
  if (std::any_of(domains->begin(), domains->end(),
                  [](const auto& d) { return d.liveness == liveness_mode::interval; })) {
    intervals = detail::live_intervals(p, index);
    detail::extend_for_dependencies(intervals, dependencies, p, index.all_uses());
  }
  std::vector<std::optional<wave_domain_layout>> layouts;
  layouts.reserve(domains->size());
  for (const pool_domain& domain : *domains) {
    auto layout = compile_wave_domain_layout(p, domain, intervals);
    if (!layout) return layout.error();
    layouts.emplace_back(std::move(*layout));
  }

  // Buckets in id order; validate_plan made sure the ids are well-formed and
  // that every bucket has exactly one budget per pool.
  std::vector<std::pair<bucket_id, std::size_t>> buckets;
  for (std::size_t b = 0; b < p.buckets.size(); ++b) buckets.emplace_back(p.buckets[b].id().value(), b);
  std::sort(buckets.begin(), buckets.end());

  bucket_capacity_layouts capacities;
  const std::vector<std::size_t> order = detail::placement_order(p, *domains);
  std::vector<detail::lane_placement> placements;  // parallel to `buckets`
  std::vector<std::uint64_t> lane_bytes;
  for (const auto& [id, b] : buckets) {
    std::vector<std::pair<pool_id, std::size_t>> budgets;
    for (std::size_t j = 0; j < p.buckets[b].budgets.size(); ++j) budgets.emplace_back(p.buckets[b].budgets[j].pool, j);
    std::sort(budgets.begin(), budgets.end());
    std::vector<std::optional<capacity_layout>>& per_domain = capacities[id];
    for (std::size_t d = 0; d < domains->size(); ++d) {
      // Pools and budgets are both in pool id order and match one to one.
      auto layout = compile_capacity_layout(p, b, (*domains)[d], *layouts[d], budgets[d].second, unused);
      if (!layout) return layout.error();
      per_domain.emplace_back(std::move(*layout));
    }
    auto placement = detail::place_pools(id, *domains, per_domain, order);
    if (!placement) return placement.error();
    // A lane's buffer and its images' texels (compiled_bucket::admitted_lane_bytes).
    lane_bytes.push_back(placement->size + placement->images.size);
    placements.push_back(std::move(*placement));
  }
  auto admitted = check_admission(p.lanes, p.budget_bytes, lane_bytes);
  if (!admitted) return admitted.error();

  const result<plan_hash> hash = hash_task.get();
  if (!hash) return hash.error();
  auto bindings = detail::compile_program_binding_layouts(p, *hash, *domains, layouts, capacities, index);
  if (!bindings) return bindings.error();

  compiled_program program;
  program.hash = *hash;
  program.node_count = p.nodes.size();
  program.dependencies = std::move(dependencies);
  program.lanes = p.lanes;
  program.budget_bytes = p.budget_bytes;
  program.admitted_bytes = *admitted;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const auto& [id, b] = buckets[i];
    compiled_bucket bucket{id,
                           p.buckets[b],
                           {},
                           nullptr,
                           std::move(placements[i].offsets),
                           placements[i].size,
                           placements[i].unaliased_size,
                           {},
                           placements[i].windows,
                           placements[i].images,
                           placements[i].unaliased_image_bytes};
    for (auto& layout : capacities[id]) bucket.capacity_layouts.push_back(std::move(*layout));
    if (auto binding = bindings->find(id); binding != bindings->end())
      bucket.binding = std::make_shared<const program_binding_layout>(std::move(binding->second));
    program.buckets.push_back(std::move(bucket));
  }
  for (auto& layout : layouts) program.wave_layouts.push_back(std::move(*layout));
  program.domains = std::move(*domains);
  program.culling = std::move(culling);
  if (auto recipes = detail::make_lane_recipes(program, p, index); !recipes) return recipes.error();
  return program;
}

}  // namespace ferrum
