// lane_recipes.cpp — every bucket's lane recipe (ferrum/binding/lane_recipe.hpp).
#include "lane_recipes.hpp"

#include "ferrum/binding/barriers.hpp"
#include "ferrum/binding/image_access.hpp"
#include "ferrum/binding/node_order.hpp"

#include "culling.hpp"
#include "image_transitions.hpp"

#include <algorithm>
#include <utility>

namespace ferrum::detail {
namespace {

// record_backing_slices(p, bucket, claim, capacity) for the domain `domain`,
// read straight from it: a compiled capacity layout's projections are the
// domain's members in order, and the members are in resource id order
// (derive_pool_domains; the program file's checked order), so member m's
// descriptor is p.resources[members[m]] and the slices come out in id order
// with no sort of, or search in, all the plan's resources (that was most of
// a small plan's recipe). Layouts that are not so go to
// record_backing_slices, which decides them as ever.
result<std::vector<backing_slice>> binding_backing(const plan& p, const bucket_id& bucket, const pool_domain& domain,
                                                   const claim_identity& claim, const capacity_layout& capacity) {
  const std::vector<projection>& projections = capacity.projections;
  const std::vector<std::size_t>& members = domain.members;
  if (projections.size() != members.size()) return record_backing_slices(p, bucket, claim, capacity);
  std::vector<backing_slice> slices;
  slices.reserve(projections.size());
  for (std::size_t m = 0; m < projections.size(); ++m) {
    const projection& proj = projections[m];
    // Strictly ascending ids: the order record_backing_slices sorts into.
    if (members[m] >= p.resources.size() || p.resources[members[m]].id != proj.resource ||
        (m > 0 && !(projections[m - 1].resource < proj.resource)))
      return record_backing_slices(p, bucket, claim, capacity);
    const resource_descriptor& r = p.resources[members[m]];
    slices.push_back({proj.resource, claim.digest(), bucket, proj.offset, proj.capacity, capacity.physical_size_bytes,
                      proj.alignment, r.usage, r.element});
  }
  return slices;
}

// Node `node`'s k-th use (resource r) reaches this part: {} for a whole
// image or a buffer, else its range with counts resolved.
subresource_range resolved_range(const plan& p, const plan_node& node, std::size_t k, std::size_t r) {
  const subresource_range declared = node.range_of(k);
  const std::optional<image_desc>& image = p.resources[r].image;
  if (declared.whole() || !image) return {};
  const subresource_range range = resolve(declared, image->mips, image->layers);
  return range == resolve({}, image->mips, image->layers) ? subresource_range{} : range;
}

// A buffer's bytes in a bucket of `dims` before its alignment rounds them
// up (resolve_demand, which compile ran first: no overflow).
std::uint64_t unaligned_bytes(const resource_descriptor& r, const bucket_capacity& dims) noexcept {
  return r.demand.base + (r.demand.dimension ? r.demand.per_unit * dims[*r.demand.dimension] : 0);
}

// The history pairs (lane_recipe::histories) of a recipe whose images and
// imports are made: each previous's current by its id, the pairs in their
// currents' program order.
std::vector<history_pair> history_pairs(const plan& p, const plan_index& index, const compiled_program& program,
                                        const lane_recipe& recipe) {
  struct found {
    std::size_t image = lane_recipe::no_domain;
    std::size_t import = lane_recipe::no_domain;
  };
  std::vector<found> of(p.resources.size());
  for (std::size_t i = 0; i < recipe.images.size(); ++i)
    if (recipe.images[i].history != history_role::none)
      of[program.domains[recipe.images[i].domain].members[recipe.images[i].member]].image = i;
  for (std::size_t i = 0; i < recipe.imports.size(); ++i)
    if (recipe.imports[i].history != history_role::none)
      of[program.domains[recipe.imports[i].domain].members[recipe.imports[i].member]].import = i;
  std::vector<std::pair<std::pair<std::size_t, std::size_t>, history_pair>> pairs;  // by the current's place
  for (std::size_t r = 0; r < p.resources.size(); ++r) {
    if (!p.resources[r].history_of) continue;
    const std::optional<std::size_t> c = index.resource(p.resources[r].history_of->view());
    if (!c) continue;  // check_history refused it
    const bool image = p.resources[r].image.has_value();
    const std::size_t current = image ? of[*c].image : of[*c].import;
    const std::size_t previous = image ? of[r].image : of[r].import;
    if (current == lane_recipe::no_domain || previous == lane_recipe::no_domain) continue;
    const auto place = image ? std::pair(recipe.images[current].domain, recipe.images[current].member)
                             : std::pair(recipe.imports[current].domain, recipe.imports[current].member);
    pairs.push_back({place, {image, current, previous}});
  }
  std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<history_pair> out;
  out.reserve(pairs.size());
  for (const auto& pair : pairs) out.push_back(pair.second);
  return out;
}

// Drops the images no node uses (`accesses` none: those only culled nodes
// used) that a lane would make for nothing — invocation ones of pools a lane
// makes — and renumbers the transitions' images.
void drop_unused_images(image_plan& images) {
  std::vector<std::size_t> renumbered(images.images.size());
  std::size_t kept = 0;
  for (std::size_t i = 0; i < images.images.size(); ++i) {
    const lane_image& image = images.images[i];
    renumbered[i] = kept;
    if (image.accesses == 0 && !image.imported && image.lifetime == allocation_lifetime::invocation) continue;
    images.images[kept] = image;
    images.resources[kept] = images.resources[i];
    ++kept;
  }
  images.images.resize(kept);
  images.resources.resize(kept);
  for (image_transition& t : images.transitions) t.image = renumbered[t.image];
}

// Moves the culled nodes out of the levels to a last level of their own:
// nothing is submitted for them, and a level's first node, which makes the
// level's layout changes, is then a live one. They use only their binding
// resources (make_lane_recipes), which no other node touches.
void move_culled_last(lane_recipe& recipe, const compiled_program& program) {
  std::vector<std::size_t> order;
  std::vector<std::size_t> begin{0};
  order.reserve(recipe.order.size());
  for (std::size_t l = 0; l + 1 < recipe.level_begin.size(); ++l) {
    for (std::size_t k = recipe.level_begin[l]; k < recipe.level_begin[l + 1]; ++k) {
      const std::size_t n = recipe.order[k];
      if (program.culled(n)) continue;
      recipe.level[n] = begin.size() - 1;
      order.push_back(n);
    }
    if (order.size() != begin.back()) begin.push_back(order.size());
  }
  for (std::size_t n : recipe.order)
    if (program.culled(n)) {
      recipe.level[n] = begin.size() - 1;
      order.push_back(n);
    }
  if (order.size() != begin.back()) begin.push_back(order.size());
  recipe.order = std::move(order);
  recipe.level_begin = std::move(begin);
}

result<void> make_recipes(compiled_program& program, const plan& p, const plan_index& index) {
  // Every node's resources (plan indices), nodes side by side.
  std::vector<std::size_t> uses;
  std::vector<resource_access> accesses;
  std::vector<subresource_range> ranges;  // resolved; {} for a whole image or a buffer
  std::vector<std::size_t> use_begin{0};
  use_begin.reserve(p.nodes.size() + 1);
  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    const auto listed = index.uses(n);
    uses.insert(uses.end(), listed.begin(), listed.end());
    for (std::size_t k = 0; k < listed.size(); ++k) {
      accesses.push_back(p.nodes[n].access_of(k));
      ranges.push_back(resolved_range(p, p.nodes[n], k, listed[k]));
    }
    use_begin.push_back(uses.size());
  }
  // Per plan resource: its domain and its place among the members.
  std::vector<std::pair<std::size_t, std::size_t>> place(p.resources.size());
  for (std::size_t d = 0; d < program.domains.size(); ++d)
    for (std::size_t m = 0; m < program.domains[d].members.size(); ++m) place[program.domains[d].members[m]] = {d, m};

  image_plan images = derive_image_transitions(p, index, program.domains, program.wave_layouts);
  if (program.culled_nodes != 0) drop_unused_images(images);

  for (compiled_bucket& bucket : program.buckets) {
    lane_recipe& recipe = bucket.lane;
    if (auto placed = place_images(recipe, images, p, bucket.spec.dims); !placed) return placed.error();
    recipe.use_begin = use_begin;
    recipe.uses.clear();
    recipe.uses.reserve(uses.size());
    for (std::size_t u = 0; u < uses.size(); ++u) {
      const std::size_t r = uses[u];
      const auto [d, m] = place[r];
      const projection& proj = bucket.capacity_layouts[d].projections[m];
      recipe.uses.push_back({d, m, p.resources[r].kind, p.resources[r].lifetime, bucket.pool_offsets[d] + proj.offset,
                             proj.capacity, accesses[u], ranges[u]});
    }
    recipe.imports.clear();
    for (std::size_t d = 0; d < program.domains.size(); ++d) {
      if (program.domains[d].memory != memory_class::imported || program.domains[d].images) continue;
      const std::vector<projection>& projections = bucket.capacity_layouts[d].projections;
      for (std::size_t m = 0; m < projections.size(); ++m) {
        const resource_descriptor& r = p.resources[program.domains[d].members[m]];
        lane_import& i = recipe.imports.emplace_back(
            lane_import{projections[m].resource, d, m, unaligned_bytes(r, bucket.spec.dims)});
        if (program.domains[d].history) i.history = r.history_of ? history_role::previous : history_role::current;
      }
    }
    for (std::size_t n = 0; n < p.nodes.size(); ++n)
      for (std::size_t u = use_begin[n]; u < use_begin[n + 1]; ++u) {
        const lane_use& use = recipe.uses[u];
        if (program.domains[use.domain].memory != memory_class::imported || program.domains[use.domain].images)
          continue;
        for (lane_import& i : recipe.imports) {
          if (i.domain != use.domain || i.member != use.member) continue;
          i.written = i.written || access_writes(use.access);
          (p.nodes[n].queue == queue_kind::transfer ? i.transfer_accesses : i.accesses) |=
              1u << static_cast<unsigned>(use.access);
        }
      }
    recipe.histories = history_pairs(p, index, program, recipe);
    recipe.barrier_before = derive_barriers(recipe, program.dependencies);
    recipe.one_queue_barrier_before = program.dependencies.uses_transfer()
                                          ? derive_barriers(recipe, program.dependencies, barrier_queues::one)
                                          : recipe.barrier_before;
    recipe.barrier_scopes = derive_barrier_scopes(recipe, program.dependencies, recipe.barrier_before);
    recipe.one_queue_barrier_scopes =
        program.dependencies.uses_transfer()
            ? derive_barrier_scopes(recipe, program.dependencies, recipe.one_queue_barrier_before, barrier_queues::one)
            : recipe.barrier_scopes;
    recipe.order = level_order(recipe, program.dependencies, &recipe.level, &recipe.level_begin);
    if (program.culled_nodes != 0 && !recipe.order.empty()) move_culled_last(recipe, program);
    recipe.ordered_barrier_before.clear();
    recipe.ordered_barrier_scopes.clear();
    if (recipe.order.empty()) {
      recipe.level.clear();
      recipe.level_begin.clear();
    } else {
      recipe.ordered_barrier_before = derive_barriers(recipe, program.dependencies, barrier_queues::one, recipe.order);
      recipe.ordered_barrier_scopes = derive_barrier_scopes(recipe, program.dependencies, recipe.ordered_barrier_before,
                                                            barrier_queues::one, recipe.order);
    }
    recipe.one_queue_split = derive_split_barriers(recipe, program.dependencies, recipe.one_queue_barrier_before);
    recipe.ordered_split = recipe.order.empty() ? split_barriers{}
                                                : derive_split_barriers(recipe, program.dependencies,
                                                                        recipe.ordered_barrier_before, recipe.order);
    if (!bucket.binding) continue;
    // The binding domain is the pool whose claim the layout covers.
    const auto domain = std::find_if(program.wave_layouts.begin(), program.wave_layouts.end(),
                                     [&](const wave_domain_layout& w) { return w.claim == bucket.binding->claim(); });
    if (domain == program.wave_layouts.end()) continue;  // the lane pool refuses it: missing_domain_layout
    recipe.binding_domain = static_cast<std::size_t>(domain - program.wave_layouts.begin());
    const capacity_layout& capacity = bucket.capacity_layouts[recipe.binding_domain];
    auto backing = recipe.binding_domain < program.domains.size()
                       ? binding_backing(p, bucket.id, program.domains[recipe.binding_domain], domain->claim, capacity)
                       : record_backing_slices(p, bucket.id, domain->claim, capacity);
    if (!backing) return backing.error();
    recipe.backing = std::move(*backing);
  }
  return {};
}

}  // namespace

result<void> make_lane_recipes(compiled_program& program, const plan& p, const plan_index& index) {
  if (program.culling.size() != p.nodes.size()) program.culling = derive_culling(p, index, program.domains);
  program.culled_nodes = static_cast<std::size_t>(
      std::count_if(program.culling.begin(), program.culling.end(), [](const cull_reason& c) { return c.culled; }));
  program.first_live_node = static_cast<std::size_t>(
      std::find_if(program.culling.begin(), program.culling.end(), [](const cull_reason& c) { return !c.culled; }) -
      program.culling.begin());
  const auto last_live =
      std::find_if(program.culling.rbegin(), program.culling.rend(), [](const cull_reason& c) { return !c.culled; });
  program.last_live_node = last_live == program.culling.rend()
                               ? program.culling.size()
                               : static_cast<std::size_t>(program.culling.rend() - last_live) - 1;
  if (program.culled_nodes == 0) return make_recipes(program, p, index);
  // The recipes are made as if the culled nodes used nothing but their
  // binding resources.
  const plan live = without_culled_uses(p, index, program.culling);
  return make_recipes(program, live, plan_index(live));
}

}  // namespace ferrum::detail
