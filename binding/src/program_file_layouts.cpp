// The buckets' stages of rebuild_program (program_file_check.hpp): each
// bucket's spec and budgets, capacity layouts and placement, as compile makes
// them (compile_capacity_layout, place_pools), and the program binding
// layouts (compile_program_binding_layouts).
#include "program_file_check.hpp"

#include "conservative_packing.hpp"
#include "culling.hpp"
#include "huge_pages.hpp"
#include "lane_placement.hpp"
#include "plan_rules.hpp"
#include "program_binding_checks.hpp"

#include <algorithm>
#include <map>

namespace ferrum::detail {
namespace {

interval_events events_of(const pool_domain& domain, const std::vector<live_interval>& intervals, std::size_t nodes) {
  interval_events e;
  e.start_begin.assign(nodes + 1, 0);
  e.end_begin.assign(nodes + 1, 0);
  for (std::size_t r : domain.members) {
    ++e.start_begin[intervals[r].first + 1];
    ++e.end_begin[intervals[r].last + 1];
  }
  for (std::size_t n = 0; n < nodes; ++n) {
    e.start_begin[n + 1] += e.start_begin[n];
    e.end_begin[n + 1] += e.end_begin[n];
  }
  e.starts.resize(domain.members.size());
  e.ends.resize(domain.members.size());
  std::vector<std::size_t> s(e.start_begin.begin(), e.start_begin.end() - 1);
  std::vector<std::size_t> t(e.end_begin.begin(), e.end_begin.end() - 1);
  for (std::size_t m = 0; m < domain.members.size(); ++m) {
    e.starts[s[intervals[domain.members[m]].first]++] = m;
    e.ends[t[intervals[domain.members[m]].last]++] = m;
  }
  return e;
}

// Bucket entry i names a plan bucket once, in id order after `previous`;
// the bucket's id and dimensions.
result<bucket_id> check_bucket_entry(const file_plan& f, std::size_t i, std::vector<bool>& bucket_seen,
                                     const compiled_bucket* previous) {
  const std::size_t b = f.t.buckets[i].plan_bucket;
  if (b >= f.p.buckets.size() || bucket_seen[b])
    return inconsistent("bucket entry " + std::to_string(i) + " names plan bucket " + std::to_string(b) +
                        " (out of range or twice)");
  bucket_seen[b] = true;
  auto id = bucket_id_of(f.p.buckets[b], b);
  if (!id) return id.error();
  if (previous != nullptr && !(previous->id < *id))
    return inconsistent("bucket entry " + std::to_string(i) + " (" + id->str() + ") is not in id order");
  if (auto ok = check_capacity_dims(f.p.buckets[b], b); !ok) return ok.error();
  return id;
}

// Plan bucket b's budgets: one per domain (pool id order), each naming a used
// pool once; the index of each domain's budget.
result<std::vector<std::size_t>> budgets_by_domain(const file_plan& f, std::size_t b, const bucket_id& id) {
  const bucket_spec& spec = f.p.buckets[b];
  std::vector<std::size_t> budget_of(f.domains.size(), no_index);
  for (std::size_t j = 0; j < spec.budgets.size(); ++j) {
    const workspace_budget& budget = spec.budgets[j];
    auto d = std::lower_bound(f.domains.begin(), f.domains.end(), budget.pool,
                              [](const pool_domain& a, const pool_id& pool) { return a.pool < pool; });
    const bool used = d != f.domains.end() && d->pool == budget.pool;
    if (auto ok = check_budget(budget, b, j, used); !ok) return ok.error();
    std::size_t& slot = budget_of[static_cast<std::size_t>(d - f.domains.begin())];
    if (slot != no_index) return duplicate_budget(id, budget, b, j);
    slot = j;
  }
  for (std::size_t d = 0; d < f.domains.size(); ++d)
    if (budget_of[d] == no_index) return missing_budget(id, f.domains[d].pool, b);
  return budget_of;
}

// For a binding domain whose offsets are not the conservative packing: the
// original module's cover checks over the slots sorted by offset (their
// codes), else program_inconsistent (a valid cover, but not compile's).
error binding_cover_error(const plan& p, const pool_domain& domain, const capacity_layout& layout,
                          const std::string& bucket) {
  std::vector<binding_placement> by_offset;
  by_offset.reserve(domain.members.size());
  for (std::size_t m = 0; m < domain.members.size(); ++m) {
    const projection& s = layout.projections[m];
    by_offset.push_back({s.offset, s.capacity, s.alignment, no_index, m});
  }
  sort_by_offset(by_offset, p, domain);
  if (auto covered = check_binding_cover(by_offset, layout.physical_size_bytes, bucket, p, domain); !covered)
    return covered.error();
  return inconsistent("bucket " + bucket + ", pool " + quote_text(domain.pool.view()) +
                      ": the slots are not in compile's order (decreasing alignment, then resource id)");
}

// No two members of an interval pool whose live intervals overlap share a
// byte: a sweep over the nodes, keeping the live members' ranges (pairwise
// disjoint) by offset.
result<void> check_interval_aliasing(const pool_domain& domain, const capacity_layout& layout, const interval_events& e,
                                     std::size_t nodes, const std::string& bucket) {
  std::map<std::uint64_t, std::size_t> live;  // offset -> member
  const auto end_of = [&](std::size_t m) { return layout.projections[m].offset + layout.projections[m].capacity; };
  for (std::size_t n = 0; n < nodes; ++n) {
    for (std::size_t i = e.start_begin[n]; i < e.start_begin[n + 1]; ++i) {
      const std::size_t m = e.starts[i];
      const projection& proj = layout.projections[m];
      auto next = live.lower_bound(proj.offset);
      std::size_t clash = no_index;
      if (next != live.end() && next->first < end_of(m)) clash = next->second;
      if (clash == no_index && next != live.begin() && end_of(std::prev(next)->second) > proj.offset)
        clash = std::prev(next)->second;
      if (clash != no_index)
        return inconsistent("bucket " + bucket + ", pool " + quote_text(domain.pool.view()) + ": resources " +
                            quote_text(layout.projections[clash].resource.view()) + " and " +
                            quote_text(proj.resource.view()) + " share bytes while both are live (node " +
                            std::to_string(n) + ")");
      live.emplace_hint(next, proj.offset, m);
    }
    for (std::size_t i = e.end_begin[n]; i < e.end_begin[n + 1]; ++i) live.erase(layout.projections[e.ends[i]].offset);
  }
  return {};
}

// Domain d's layout in bucket `record`, of plan bucket `spec`: the file's
// offsets (from projection `first` on), capacities recomputed.
result<capacity_layout> file_projections(const file_plan& f, const program_tables::bucket_record& record, std::size_t d,
                                         const bucket_spec& spec, const std::string& where, std::size_t first) {
  const pool_domain& domain = f.domains[d];
  const program_tables::domain_record& sizes = record.domains[d];
  capacity_layout layout{domain.pool, domain.liveness, {}, sizes.physical_size_bytes, sizes.unaliased_size_bytes};
  reserve_huge(layout.projections, domain.members.size());
  for (std::size_t m = 0; m < domain.members.size(); ++m) {
    const std::size_t r = domain.members[m];
    const resource_descriptor& res = f.p.resources[r];
    const auto& stored = record.projections[first + m];
    auto bytes = resource_capacity(res, r, spec.dims);
    if (!bytes) return bytes.error();
    if (r < f.unused.size() && f.unused[r]) *bytes = 0;  // only culled nodes use it
    if (stored.capacity != *bytes)
      return inconsistent(where + ", resource " + quote_text(res.id.view()) + ": capacity " +
                          std::to_string(stored.capacity) + ", its demand is " + std::to_string(*bytes));
    const auto end = checked_add(stored.offset, stored.capacity);
    if (stored.offset % res.alignment != 0 || !end || *end > sizes.physical_size_bytes)
      return inconsistent(where + ", resource " + quote_text(res.id.view()) + ": offset " +
                          std::to_string(stored.offset) + " is misaligned or past the arena's " +
                          std::to_string(sizes.physical_size_bytes) + " bytes");
    layout.projections.push_back({res.id, stored.offset, stored.capacity, res.alignment});
  }
  return layout;
}

// Domain d's layout is compile's: the conservative packing for a
// conservative pool (its unaliased size for every pool), no live members
// sharing bytes in an interval pool.
result<void> check_packing(const file_plan& f, std::size_t d, const capacity_layout& layout, const bucket_id& id,
                           const std::string& where) {
  const pool_domain& domain = f.domains[d];
  bool matches = true;
  const auto packed =
      pack_in_order(layout.projections, f.packing[d], domain.members,
                    [&](std::size_t m, std::uint64_t at) { matches = matches && layout.projections[m].offset == at; });
  if (!packed) return packed.error();
  if (domain.liveness == liveness_mode::interval) {
    if (layout.unaliased_size_bytes != *packed || layout.physical_size_bytes > *packed)
      return inconsistent(where + ": physical size " + std::to_string(layout.physical_size_bytes) + ", unaliased " +
                          std::to_string(layout.unaliased_size_bytes) + "; the conservative packing ends at " +
                          std::to_string(*packed));
    return check_interval_aliasing(domain, layout, f.events[d], f.p.nodes.size(), id.str());
  }
  if (!matches && d == f.binding_domain) return binding_cover_error(f.p, domain, layout, id.str());
  if (!matches) return inconsistent(where + ": the offsets are not compile's packing (decreasing alignment, then id)");
  if (layout.physical_size_bytes != *packed || layout.unaliased_size_bytes != *packed)
    return d == f.binding_domain
               ? inexact_cover(id.str(), *packed, layout.physical_size_bytes)
               : inconsistent(where + ": physical size " + std::to_string(layout.physical_size_bytes) + ", unaliased " +
                              std::to_string(layout.unaliased_size_bytes) + "; the packing ends at " +
                              std::to_string(*packed));
  return {};
}

// Capacity layouts (compile_capacity_layout): every domain's, in the file's
// record of plan bucket b, checked and within its budget.
result<std::vector<std::optional<capacity_layout>>> check_capacity_layouts(const file_plan& f,
                                                                           const program_tables::bucket_record& record,
                                                                           std::size_t b, const bucket_id& id) {
  auto budget_of = budgets_by_domain(f, b, id);
  if (!budget_of) return budget_of.error();
  const bucket_spec& spec = f.p.buckets[b];
  std::vector<std::optional<capacity_layout>> layouts;
  std::size_t first = 0;
  for (std::size_t d = 0; d < f.domains.size(); ++d) {
    const pool_domain& domain = f.domains[d];
    const std::string where = "bucket " + id.str() + ", pool " + quote_text(domain.pool.view());
    auto layout = file_projections(f, record, d, spec, where, first);
    if (!layout) return layout.error();
    first += domain.members.size();
    if (auto ok = check_packing(f, d, *layout, id, where); !ok) return ok.error();
    const std::size_t j = (*budget_of)[d];
    if (auto ok = check_budget_fit(domain.pool, layout->physical_size_bytes, spec.budgets[j], b, j); !ok)
      return ok.error();
    layouts.emplace_back(std::move(*layout));
  }
  return layouts;
}

// The placement of the pools in a lane (place_pools), as the file records it.
result<lane_placement> check_placement(const file_plan& f, const program_tables::bucket_record& record,
                                       const bucket_id& id,
                                       const std::vector<std::optional<capacity_layout>>& layouts) {
  auto placement = place_pools(id, f.domains, layouts, f.placement);
  if (!placement) return placement.error();
  for (std::size_t d = 0; d < f.domains.size(); ++d)
    if (record.domains[d].lane_offset != placement->offsets[d])
      return inconsistent("bucket " + id.str() + ", pool " + quote_text(f.domains[d].pool.view()) + ": lane offset " +
                          std::to_string(record.domains[d].lane_offset) + ", placed at " +
                          std::to_string(placement->offsets[d]));
  if (record.lane_bytes != placement->size || record.unaliased_lane_bytes != placement->unaliased_size)
    return inconsistent("bucket " + id.str() + ": lane bytes " + std::to_string(record.lane_bytes) + " (" +
                        std::to_string(record.unaliased_lane_bytes) + " unaliased), placed: " +
                        std::to_string(placement->size) + " (" + std::to_string(placement->unaliased_size) + ")");
  return placement;
}

}  // namespace

void prepare_layout_checks(file_plan& f) {
  const std::size_t domain_count = f.domains.size();
  f.events.resize(domain_count);
  for (std::size_t d = 0; d < domain_count; ++d)
    if (f.domains[d].liveness == liveness_mode::interval)
      f.events[d] = events_of(f.domains[d], f.intervals, f.p.nodes.size());
  // Alignment classes in one pass in plan order (check_resources): reading
  // descriptors in id order costs a cache miss each.
  f.packing.resize(domain_count);
  for (std::size_t d = 0; d < domain_count; ++d) {
    const std::vector<std::size_t>& members = f.domains[d].members;
    f.packing[d] = conservative_order(members.size(), [&](std::size_t m) { return f.alignment_classes[members[m]]; });
  }
  f.placement = placement_order(f.p, f.domains);
  if (f.p.format == plan_format::v2 && f.p.cull) {
    const plan_index index(f.p);
    f.unused = unused_resources(f.p, index, derive_culling(f.p, index, f.domains), f.domains);
  }
}

result<compiled_bucket> check_bucket(const file_plan& f, std::size_t i, std::vector<bool>& bucket_seen,
                                     const compiled_bucket* previous) {
  const program_tables::bucket_record& record = f.t.buckets[i];
  auto id = check_bucket_entry(f, i, bucket_seen, previous);
  if (!id) return id.error();
  const bucket_spec& spec = f.p.buckets[record.plan_bucket];
  auto layouts = check_capacity_layouts(f, record, record.plan_bucket, *id);
  if (!layouts) return layouts.error();
  auto placement = check_placement(f, record, *id, *layouts);
  if (!placement) return placement.error();

  compiled_bucket bucket{*id,
                         spec,
                         {},
                         nullptr,
                         std::move(placement->offsets),
                         placement->size,
                         placement->unaliased_size,
                         {},
                         placement->windows,
                         placement->images,
                         placement->unaliased_image_bytes};
  for (auto& layout : *layouts) bucket.capacity_layouts.push_back(std::move(*layout));
  if ((record.has_binding != 0) != (f.binding_domain != no_index) || record.has_binding > 1)
    return inconsistent(
        "bucket " + id->str() + ": binding flag " + std::to_string(record.has_binding) +
        (f.binding_domain != no_index ? ", the plan has binding resources" : ", the plan has no binding resources"));
  return bucket;
}

result<void> check_binding_layouts(const file_plan& f, const plan_hash& hash, compiled_program& program) {
  if (f.binding_domain == no_index) return {};
  const pool_domain& domain = f.domains[f.binding_domain];
  const wave_domain_layout& wave = *f.wave_layouts[f.binding_domain];
  if (auto ok = check_binding_wave_layout(domain, wave); !ok) return ok.error();
  for (std::size_t i = 0; i < program.buckets.size(); ++i) {
    compiled_bucket& bucket = program.buckets[i];
    const capacity_layout& layout = bucket.capacity_layouts[f.binding_domain];
    if (auto ok = check_binding_capacity_layout(bucket.id, domain, layout); !ok) return ok.error();
    // One slot per binding node, in node order, its bytes those of its
    // resource's projection. A node's binding is a binding resource
    // (check_uses), so a member of the binding domain.
    std::vector<binding_slot> slots;
    reserve_huge(slots, domain.members.size());
    for (std::size_t n = 0; n < f.p.nodes.size(); ++n) {
      const std::size_t r = f.bound_of[n];
      if (r == no_index) continue;
      const projection& proj = layout.projections[f.member_at[r]];
      slots.push_back({n, f.p.nodes[n].id, proj.resource, proj.offset, proj.capacity, proj.alignment});
    }
    auto digest = binding_fingerprint(bucket.id, wave.claim, layout.physical_size_bytes, slots);
    if (!digest) return digest.error();
    if (*digest != f.t.buckets[i].fingerprint)
      return inconsistent("bucket " + bucket.id.str() + ": the file's fingerprint " + f.t.buckets[i].fingerprint.str() +
                          " is not the layout's, " + digest->str());
    bucket.binding = std::make_shared<const program_binding_layout>(bucket.id, wave.claim, layout.physical_size_bytes,
                                                                    std::move(slots), *digest, hash);
  }
  return {};
}

}  // namespace ferrum::detail
