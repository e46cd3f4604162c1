#include "plan_picture.hpp"

#include <algorithm>
#include <numeric>

namespace ferrum::tools {
namespace {

// Every pair of resources whose bytes overlap, by a sweep in offset order:
// O(r log r) plus the pairs. Empty resources overlap nothing.
std::vector<picture_alias> overlapping(const std::vector<picture_resource>& resources) {
  std::vector<std::size_t> by_offset(resources.size());
  std::iota(by_offset.begin(), by_offset.end(), std::size_t{0});
  std::stable_sort(by_offset.begin(), by_offset.end(),
                   [&](std::size_t a, std::size_t b) { return resources[a].offset < resources[b].offset; });
  std::vector<picture_alias> aliases;
  for (std::size_t i = 0; i < by_offset.size(); ++i) {
    const picture_resource& a = resources[by_offset[i]];
    if (a.size == 0) continue;
    for (std::size_t j = i + 1; j < by_offset.size() && resources[by_offset[j]].offset < a.offset + a.size; ++j) {
      if (resources[by_offset[j]].size == 0) continue;
      aliases.push_back({std::min(by_offset[i], by_offset[j]), std::max(by_offset[i], by_offset[j])});
    }
  }
  std::sort(aliases.begin(), aliases.end(), [](const picture_alias& x, const picture_alias& y) {
    return x.first != y.first ? x.first < y.first : x.second < y.second;
  });
  return aliases;
}

bucket_picture make_bucket_picture(const compiled_program& program, const compiled_bucket& bucket, const plan& p) {
  bucket_picture picture;
  picture.id = bucket.id.str();
  picture.barrier_before = bucket.lane.barrier_before;
  // Domain d's members are resources[domain_begin[d] ..], as a lane_use's
  // (domain, member) names them.
  std::vector<std::size_t> domain_begin;
  for (std::size_t d = 0; d < program.domains.size(); ++d) {
    domain_begin.push_back(picture.resources.size());
    const std::vector<projection>& projections = bucket.capacity_layouts[d].projections;
    for (std::size_t m = 0; m < projections.size(); ++m) {
      picture_resource r;
      r.id = projections[m].resource.str();
      r.pool = program.domains[d].pool.str();
      r.memory = program.domains[d].memory;
      r.lifetime = p.resources[program.domains[d].members[m]].lifetime;
      r.offset = bucket.pool_offsets[d] + projections[m].offset;
      r.size = projections[m].capacity;
      picture.resources.push_back(std::move(r));
    }
  }
  for (std::size_t n = 0; n + 1 < bucket.lane.use_begin.size(); ++n)
    for (const lane_use& use : bucket.lane.node_uses(n))
      picture.resources[domain_begin[use.domain] + use.member].uses.push_back({n, use.access});
  const std::vector<lane_image>& images = bucket.lane.images;
  for (const lane_image& i : images)
    picture.resources[domain_begin[i.domain] + i.member].image =
        std::string(ferrum::to_string(i.image.format)) + " " + i.extent_in_bucket();
  picture.transitions.resize(p.nodes.size());
  for (std::size_t n = 0; n < p.nodes.size(); ++n)
    for (const image_transition& t : bucket.lane.node_transitions(n))
      picture.transitions[n].push_back(
          {domain_begin[images[t.image].domain] + images[t.image].member, t.from, t.to, t.range});
  picture.aliases = overlapping(picture.resources);
  return picture;
}

}  // namespace

plan_picture make_plan_picture(const compiled_program& program, const plan& p) {
  plan_picture picture;
  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    picture.nodes.push_back({p.nodes[n].id.str(), program.dependencies.queue(n)});
    for (const std::size_t before : program.dependencies.after(n)) picture.dependencies.push_back({before, n});
  }
  for (const compiled_bucket& bucket : program.buckets)
    picture.buckets.push_back(make_bucket_picture(program, bucket, p));
  return picture;
}

}  // namespace ferrum::tools
