#include "compiled_table.hpp"

#include "text_table.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace ferrum::tools {
namespace {

using std::to_string;

void write_pools(std::ostream& out, const compiled_program& program, const compiled_bucket& bucket) {
  text_table table({{"pool", align::left},
                    {"memory", align::left},
                    {"liveness", align::left},
                    {"at", align::right},
                    {"physical", align::right},
                    {"unaliased", align::right},
                    {"resource", align::left},
                    {"offset", align::right},
                    {"capacity", align::right}});
  for (std::size_t d = 0; d < bucket.capacity_layouts.size(); ++d) {
    const capacity_layout& domain = bucket.capacity_layouts[d];
    // A history pool is placed as an imported one, but it is the scheduler's.
    const std::string_view memory =
        program.domains[d].history ? std::string_view("history") : ferrum::to_string(program.domains[d].memory);
    // The pool's own cells on its first row only, so its projections read as
    // a group under it. `at`: where its arena lies in the lane.
    const std::vector<std::string> pool_cells{domain.pool.str(),
                                              std::string(memory),
                                              std::string(ferrum::to_string(domain.liveness)),
                                              to_string(bucket.pool_offsets[d]),
                                              to_string(domain.physical_size_bytes),
                                              to_string(domain.unaliased_size_bytes)};
    if (domain.projections.empty()) table.add_row(pool_cells);
    for (std::size_t i = 0; i < domain.projections.size(); ++i) {
      const projection& p = domain.projections[i];
      std::vector<std::string> row = i == 0 ? pool_cells : std::vector<std::string>(pool_cells.size());
      row.insert(row.end(), {p.resource.str(), to_string(p.offset), to_string(p.capacity)});
      table.add_row(std::move(row));
    }
  }
  table.write(out, 2);
}

void write_binding(std::ostream& out, const compiled_bucket& bucket) {
  if (!bucket.binding) {
    out << "  program binding: none\n";
    return;
  }
  const program_binding_layout& binding = *bucket.binding;
  out << "  program binding: " << binding.physical_size_bytes() << " bytes, fingerprint " << binding.fingerprint().str()
      << '\n';
  text_table table({{"index", align::right},
                    {"node", align::left},
                    {"resource", align::left},
                    {"offset", align::right},
                    {"capacity", align::right},
                    {"alignment", align::right}});
  for (const binding_slot& s : binding.slots())
    table.add_row({to_string(s.node_index), s.node.str(), s.resource.str(), to_string(s.offset), to_string(s.capacity),
                   to_string(s.alignment)});
  table.write(out, 4);
}

// A lane's memory per class: each window's bytes and where it lies.
void write_classes(std::ostream& out, const compiled_bucket& bucket) {
  out << "  memory:";
  const char* separator = " ";
  for (memory_class c : window_order)
    if (const memory_window& w = bucket.window(c); w.size != 0) {
      out << separator << ferrum::to_string(c) << ' ' << w.size << " bytes at " << w.begin;
      separator = ", ";
    }
  if (*separator == ' ') out << " none";
  out << '\n';
}

// The level order a wave on one queue submits the nodes in, where it is
// not plan order: the first nodes, and its barriers against plan order's.
void write_level_order(std::ostream& out, const compiled_bucket& bucket, const plan& p) {
  constexpr std::size_t shown = 8;
  const lane_recipe& lane = bucket.lane;
  if (lane.order.empty()) return;
  const auto count = [](const std::vector<bool>& v) { return std::count(v.begin(), v.end(), true); };
  out << "  level order on one queue: " << count(lane.ordered_barrier_before) << " barriers per wave (plan order "
      << count(lane.one_queue_barrier_before) << "), nodes ";
  for (std::size_t k = 0; k < lane.order.size() && k < shown && lane.order[k] < p.nodes.size(); ++k)
    out << (k == 0 ? "" : ", ") << p.nodes[lane.order[k]].id.str();
  if (lane.order.size() > shown) out << " and " << lane.order.size() - shown << " more";
  out << '\n';
}

// Split barriers on one queue (scheduler_options::split_barriers, in the
// order a wave on one queue submits: level order where there is one): the
// barriers and events per wave, and a line per event — who sets it, who
// waits for it, its scope.
void write_split_barriers(std::ostream& out, const compiled_bucket& bucket, const plan& p) {
  constexpr std::size_t shown = 8;
  const lane_recipe& lane = bucket.lane;
  const split_barriers& split = lane.order.empty() ? lane.one_queue_split : lane.ordered_split;
  if (split.events.empty()) return;
  out << "  split barriers on one queue: " << split.barriers_per_wave() << " barriers and " << split.events.size()
      << " events per wave\n";
  std::vector<std::vector<std::size_t>> waiters(split.events.size());
  for (std::size_t n = 0; n + 1 < split.wait_begin.size(); ++n)
    for (std::size_t e : split.node_waits(n)) waiters[e].push_back(n);
  for (std::size_t e = 0; e < split.events.size() && e < shown; ++e) {
    const barrier_event& ev = split.events[e];
    if (ev.producer >= p.nodes.size()) continue;
    out << "    event after " << p.nodes[ev.producer].id.str() << ", waited for before ";
    for (std::size_t k = 0; k < waiters[e].size() && waiters[e][k] < p.nodes.size(); ++k)
      out << (k == 0 ? "" : ", ") << p.nodes[waiters[e][k]].id.str();
    out << ": waits for " << scope_text(ev.scope.before) << "; blocks " << scope_text(ev.scope.after) << '\n';
  }
  if (split.events.size() > shown) out << "    and " << split.events.size() - shown << " more events\n";
}

// How many barriers a wave records between its nodes, and before which:
// the first few nodes by id, so that a big plan's line stays short.
void write_barriers(std::ostream& out, const compiled_bucket& bucket, const plan& p) {
  constexpr std::size_t shown = 8;
  const std::vector<bool>& before = bucket.lane.barrier_before;
  out << "  barriers: " << bucket.lane.barriers_per_wave() << " per wave";
  std::size_t listed = 0;
  for (std::size_t n = 0; n < before.size() && n < p.nodes.size() && listed < shown; ++n) {
    if (!before[n]) continue;
    out << (listed == 0 ? ", before " : ", ") << p.nodes[n].id.str();
    ++listed;
  }
  if (bucket.lane.barriers_per_wave() > listed) out << " and " << bucket.lane.barriers_per_wave() - listed << " more";
  out << '\n';
  // What each of those waits for and what it blocks.
  listed = 0;
  for (std::size_t n = 0; n < before.size() && n < p.nodes.size() && listed < shown; ++n) {
    if (!before[n] || n >= bucket.lane.barrier_scopes.size()) continue;
    const barrier_scope& b = bucket.lane.barrier_scopes[n];
    out << "    " << p.nodes[n].id.str() << ": waits for " << scope_text(b.before) << "; blocks " << scope_text(b.after)
        << '\n';
    ++listed;
  }
  write_level_order(out, bucket, p);
  write_split_barriers(out, bucket, p);
}

// The lane's images and the layout transitions each node's barrier makes.
void write_images(std::ostream& out, const compiled_bucket& bucket, const plan& p) {
  const lane_recipe& lane = bucket.lane;
  if (lane.images.empty()) return;
  out << "  images: " << bucket.image_window.size << " bytes of texels (" << bucket.unaliased_image_bytes
      << " unaliased); a lane places them in memory of their own, by its device's sizes\n";
  text_table images({{"image", align::left},
                     {"format", align::left},
                     {"extent", align::right},
                     {"mips", align::right},
                     {"layers", align::right},
                     {"lifetime", align::left},
                     {"starts in", align::left}});
  for (std::size_t k = 0; k < lane.images.size(); ++k) {
    const lane_image& i = lane.images[k];
    const lane_image* of = lane.current_of(k);
    images.add_row({i.resource.str(), std::string(ferrum::to_string(i.image.format)), i.extent_in_bucket(),
                    to_string(i.image.mips), to_string(i.image.layers),
                    of != nullptr ? "history of " + of->resource.str() : std::string(ferrum::to_string(i.lifetime)),
                    i.history != history_role::none ? std::string("the wave's (history)")
                    : i.imported                    ? std::string("the wave's (imported)")
                                                    : std::string(ferrum::to_string(i.initial))});
  }
  images.write(out, 4);
  out << "  transitions: " << lane.transitions.size() << " per wave, each in the barrier its node opens with\n";
  text_table transitions({{"node", align::left},
                          {"image", align::left},
                          {"range", align::left},
                          {"from", align::left},
                          {"to", align::left},
                          {"after", align::left}});
  for (std::size_t n = 0; n < p.nodes.size(); ++n)
    for (const image_transition& t : lane.node_transitions(n))
      transitions.add_row({p.nodes[n].id.str(), lane.images[t.image].resource.str(), ferrum::to_string(t.range),
                           std::string(ferrum::to_string(t.from)), std::string(ferrum::to_string(t.to)),
                           t.after ? std::string(ferrum::to_string(*t.after)) : std::string("-")});
  transitions.write(out, 4);
}

// The nodes compile culled (compiled_program::culling), each with why; a
// line only where some are, or where the plan turned culling off.
void write_culled(std::ostream& out, const compiled_program& program, const plan& p) {
  if (!p.cull) {
    out << "culled    none (the plan sets \"cull\": false)\n";
    return;
  }
  if (program.culled_nodes == 0) return;
  out << "culled    " << program.culled_nodes << (program.culled_nodes == 1 ? " node" : " nodes") << " \u2014 ";
  const char* separator = "";
  for (std::size_t n = 0; n < program.culling.size() && n < p.nodes.size(); ++n) {
    if (!program.culling[n].culled) continue;
    out << separator << p.nodes[n].id.view() << " (" << program.culling[n].text() << ')';
    separator = ", ";
  }
  out << '\n';
}

}  // namespace

void write_compiled_table(std::ostream& out, const compiled_program& program, const plan& p) {
  out << "plan      " << program.hash.str() << '\n'
      << "lanes     " << program.lanes << '\n'
      << "admitted  " << program.admitted_bytes << " of " << program.budget_bytes << " bytes\n";
  write_culled(out, program, p);
  for (const compiled_bucket& bucket : program.buckets) {
    const bucket_capacity& dims = bucket.spec.dims;
    out << "\nbucket " << bucket.id.str() << " (class " << bucket.spec.cls.str() << ", capacity " << dims[0] << 'x'
        << dims[1] << 'x' << dims[2] << ", " << bucket.lane_bytes() << " bytes per lane, "
        << bucket.unaliased_lane_size_bytes << " unaliased)\n";
    write_pools(out, program, bucket);
    write_classes(out, bucket);
    write_binding(out, bucket);
    write_barriers(out, bucket, p);
    write_images(out, bucket, p);
  }
}

}  // namespace ferrum::tools
