#include "run_report.hpp"

#include "ferrum/binding/critical_path.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ferrum::tools {
namespace {

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string fault_line(const char* kind, const fault_tally& t) {
  return std::string(kind) + " " + std::to_string(t.surfaced) + "/" + std::to_string(t.injected);
}

// The first eight barriers of a bucket's wave, each with what it waits for
// and what it blocks; then how many more.
void write_barrier_lines(std::ostream& out, const bucket_memory& m) {
  constexpr std::size_t shown = 8;
  for (std::size_t i = 0; i < m.barriers.size() && i < shown; ++i)
    out << "    barrier before " << m.barriers[i].node << ": waits for " << scope_text(m.barriers[i].scope.before)
        << "; blocks " << scope_text(m.barriers[i].scope.after) << '\n';
  if (m.barriers.size() > shown) out << "    and " << m.barriers.size() - shown << " more barriers\n";
}

}  // namespace

bucket_memory bucket_memory_of(const plan& p, const compiled_program& program, const compiled_bucket& bucket,
                               std::size_t resources_checked_per_wave, std::size_t resources_unchecked_per_wave) {
  bucket_memory m{bucket.id.str(),
                  bucket.lane_bytes(),
                  bucket.unaliased_lane_size_bytes,
                  {},
                  bucket.windows,
                  resources_checked_per_wave,
                  resources_unchecked_per_wave,
                  bucket.lane.barriers_per_wave(),
                  0,
                  0,
                  {}};
  for (std::size_t d = 0; d < bucket.capacity_layouts.size(); ++d) {
    const capacity_layout& layout = bucket.capacity_layouts[d];
    m.pools.push_back({program.domains[d].pool.str(), std::string(to_string(program.domains[d].memory)),
                       std::string(to_string(layout.liveness)), bucket.pool_offsets[d], layout.physical_size_bytes,
                       layout.unaliased_size_bytes, program.domains[d].images});
  }
  const lane_recipe& lane = bucket.lane;
  const split_barriers& split = lane.order.empty() ? lane.one_queue_split : lane.ordered_split;
  m.split_events_per_wave = split.events.size();
  m.split_barriers_per_wave = split.barriers_per_wave();
  for (std::size_t n = 0; n < lane.barrier_before.size() && n < lane.barrier_scopes.size() && n < p.nodes.size(); ++n)
    if (lane.barrier_before[n]) m.barriers.push_back({p.nodes[n].id.str(), lane.barrier_scopes[n]});
  return m;
}

bucket_gpu_path gpu_path_of(const compiled_program& program, const compiled_bucket& bucket, const plan& p,
                            const run_tally::node_gpu_times& times) {
  std::vector<std::uint64_t> mean_ns(times.node_ns.size(), 0);
  if (times.waves != 0)
    for (std::size_t n = 0; n < mean_ns.size(); ++n) mean_ns[n] = (times.node_ns[n] + times.waves / 2) / times.waves;
  const critical_path cp = find_critical_path(derive_data_dependencies(bucket.lane, program.dependencies), mean_ns);
  const auto us = [](std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; };
  bucket_gpu_path out{bucket.id.str(),         times.waves, us(cp.serial_ns),
                      us(cp.critical_path_ns), {},          us(cp.async_bound_ns)};
  for (const std::size_t n : cp.path) out.critical_path.push_back(n < p.nodes.size() ? p.nodes[n].id.str() : "");
  return out;
}

double percentile(std::vector<double>& samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(samples.size())));
  return samples[std::clamp<std::size_t>(rank, 1, samples.size()) - 1];
}

nlohmann::ordered_json run_json(const run_summary& s) {
  const run_tally& t = s.tally;
  nlohmann::ordered_json waves;
  waves["requested"] = s.requested;
  waves["completed"] = t.completed;
  waves["failed"] = t.failed;
  waves["cancelled"] = t.cancelled;
  nlohmann::ordered_json lanes;
  lanes["per_bucket"] = s.lanes_per_bucket;
  lanes["max_in_flight"] = s.max_in_flight;
  lanes["quarantined"] = s.quarantined;
  nlohmann::ordered_json latency;
  latency["wave_p50"] = s.latency.wave_p50;
  latency["wave_p99"] = s.latency.wave_p99;
  latency["fence_wake_p50"] = s.latency.fence_wake_p50;
  latency["fence_wake_p99"] = s.latency.fence_wake_p99;
  nlohmann::ordered_json faults;
  faults["injected"] = t.injected();
  faults["surfaced"] = t.surfaced();

  nlohmann::ordered_json document;
  document["format"] = run_format;
  document["device"] = s.device_kind;
  document["discrete_layout"] = s.discrete_layout;
  document["plan_hash"] = s.plan_hash;
  document["waves"] = std::move(waves);
  document["lanes"] = std::move(lanes);
  document["latency_us"] = std::move(latency);
  if (s.latency.gpu_measured) {
    nlohmann::ordered_json paths = nlohmann::ordered_json::array();
    for (const bucket_gpu_path& g : s.gpu_paths)
      paths.push_back({{"bucket", g.bucket},
                       {"waves", g.waves},
                       {"serial_us", g.serial_us},
                       {"critical_path_us", g.critical_path_us},
                       {"critical_path", g.critical_path},
                       {"async_bound_us", g.async_bound_us}});
    document["gpu_us"] = {{"p50", s.latency.gpu_p50}, {"p99", s.latency.gpu_p99}, {"buckets", std::move(paths)}};
  }
  document["allocations_per_wave"] = s.allocations_per_wave;
  document["violations"] = s.violations;
  document["image_layout_errors"] = s.image_layout_errors;
  nlohmann::ordered_json memory = nlohmann::ordered_json::array();
  for (const bucket_memory& m : s.memory) {
    nlohmann::ordered_json pools = nlohmann::ordered_json::array();
    for (const pool_memory& p : m.pools) {
      nlohmann::ordered_json pool;
      pool["pool"] = p.pool;
      pool["memory"] = p.memory;
      pool["liveness"] = p.liveness;
      pool["offset"] = p.offset;
      pool["bytes"] = p.bytes;
      pool["unaliased_bytes"] = p.unaliased_bytes;
      pool["images"] = p.images;
      pools.push_back(std::move(pool));
    }
    nlohmann::ordered_json bucket;
    bucket["bucket"] = m.bucket;
    bucket["lane_bytes"] = m.lane_bytes;
    bucket["unaliased_lane_bytes"] = m.unaliased_lane_bytes;
    bucket["pools"] = std::move(pools);
    nlohmann::ordered_json classes = nlohmann::ordered_json::array();
    for (memory_class c : window_order)
      if (const memory_window& w = m.classes[index_of(c)]; w.size != 0)
        classes.push_back({{"class", to_string(c)}, {"lane_offset", w.begin}, {"bytes", w.size}});
    bucket["memory_classes"] = std::move(classes);
    bucket["image_bytes"] = m.image_bytes;
    bucket["unaliased_image_bytes"] = m.unaliased_image_bytes;
    bucket["resources_checked_per_wave"] = m.resources_checked_per_wave;
    if (s.v2) bucket["resources_unchecked_per_wave"] = m.resources_unchecked_per_wave;
    bucket["barriers_per_wave"] = m.barriers_per_wave;
    bucket["split_barriers"] = {{"events_per_wave", m.split_events_per_wave},
                                {"barriers_per_wave", m.split_barriers_per_wave}};
    nlohmann::ordered_json barriers = nlohmann::ordered_json::array();
    for (const bucket_memory::barrier_line& b : m.barriers)
      barriers.push_back({{"node", b.node},
                          {"waits_for", stage_mask_names(b.scope.before.stages)},
                          {"flushes", access_mask_names(b.scope.before.accesses)},
                          {"blocks", stage_mask_names(b.scope.after.stages)},
                          {"makes_visible", access_mask_names(b.scope.after.accesses)}});
    bucket["barriers"] = std::move(barriers);
    bucket["lanes_made"] = m.lanes_made;
    bucket["made_bytes"] = m.made_bytes;
    memory.push_back(std::move(bucket));
  }
  document["memory"] = std::move(memory);
  if (s.v2) {
    nlohmann::ordered_json queues = nlohmann::ordered_json::array();
    for (const queue_use& q : s.queues) {
      nlohmann::ordered_json queue;
      queue["queue"] = q.queue;
      queue["kinds"] = q.kinds;
      queue["nodes"] = q.nodes;
      queue["submissions"] = q.submissions;
      queues.push_back(std::move(queue));
    }
    document["queues"] = std::move(queues);
  }
  if (!s.devices.empty()) {
    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    for (std::size_t d = 0; d < s.devices.size(); ++d) {
      const device_use& u = s.devices[d];
      nlohmann::ordered_json device;
      device["device"] = d;
      device["name"] = u.name;
      device["completed"] = u.waves.completed;
      device["failed"] = u.waves.failed;
      device["cancelled"] = u.waves.cancelled;
      device["submissions"] = u.submissions;
      device["lost"] = u.lost;
      device["quarantined"] = u.quarantined;
      devices.push_back(std::move(device));
    }
    document["devices"] = std::move(devices);
  }
  document["faults"] = std::move(faults);
  if (!s.trace_path.empty() || !s.timeline_path.empty()) {
    nlohmann::ordered_json trace;
    trace["chrome"] = s.trace_path.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(s.trace_path);
    trace["timeline"] = s.timeline_path.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(s.timeline_path);
    trace["spans"] = s.trace_spans;
    trace["dropped"] = s.trace_dropped;
    document["trace"] = std::move(trace);
  }
  return document;
}

void write_run_summary(std::ostream& out, const run_summary& s) {
  const run_tally& t = s.tally;
  out << "ferrum run: " << s.plan_path << " on " << s.device_kind << " (" << s.device_name
      << (s.discrete_layout ? "; discrete layout" : "") << ")\n";
  out << "  plan         " << s.plan_hash << '\n';
  out << "  settings     " << s.threads << " threads, seed " << s.seed << ", fence timeout " << s.fence_timeout_ms
      << " ms\n";
  out << "  waves        " << s.requested << " requested: " << t.completed << " completed, " << t.failed << " failed, "
      << t.cancelled << " cancelled in " << fixed(s.seconds, 2) << " s\n";
  out << "  lanes        " << s.lanes_per_bucket << " per bucket x " << s.buckets << " buckets; at most "
      << s.max_in_flight << " in flight; " << s.quarantined << " quarantined at the end\n";
  for (const bucket_memory& m : s.memory) {
    out << "  memory       " << m.bucket << ": " << m.lane_bytes << " bytes per lane (";
    const char* separator = "";
    for (const pool_memory& p : m.pools) {
      // An imported pool's bytes are the engine's buffers, an image pool's
      // its images' texels: neither is the lane's buffer.
      out << separator << p.pool << ' ' << p.bytes
          << (p.images ? " texels" : (p.memory == "imported" ? " imported" : ""));
      separator = ", ";
    }
    out << "; " << m.unaliased_lane_bytes << " unaliased), " << m.resources_checked_per_wave
        << " resources checked per wave";
    if (s.v2) out << ", " << m.resources_unchecked_per_wave << " unchecked";
    out << ", " << m.barriers_per_wave << " barriers per wave";
    // Where splitting them makes events (--split-barriers, on one queue).
    if (m.split_events_per_wave != 0)
      out << "; split on one queue " << m.split_barriers_per_wave << " barriers and " << m.split_events_per_wave
          << " events per wave";
    if (m.unaliased_image_bytes != 0)
      out << "; images " << m.image_bytes << " bytes of image memory per lane (" << m.unaliased_image_bytes
          << " unaliased)";
    out << "; " << m.lanes_made << " lanes made, " << m.made_bytes << " bytes; by class";
    separator = " ";
    for (memory_class c : window_order)
      if (const memory_window& w = m.classes[index_of(c)]; w.size != 0) {
        out << separator << to_string(c) << ' ' << w.size;
        separator = ", ";
      }
    out << '\n';
    write_barrier_lines(out, m);
  }
  if (s.v2) {
    out << "  queues      ";
    const char* separator = " ";
    for (const queue_use& q : s.queues) {
      out << separator;
      for (std::size_t k = 0; k < q.kinds.size(); ++k) out << (k == 0 ? "" : "+") << q.kinds[k];
      out << ": " << q.nodes << " nodes per wave, " << q.submissions << " submissions";
      separator = "; ";
    }
    out << '\n';
  }
  for (std::size_t d = 0; d < s.devices.size(); ++d) {
    const device_use& u = s.devices[d];
    out << "  device " << d << (d < 10 ? "     " : "    ") << u.waves.completed << " completed, " << u.waves.failed
        << " failed, " << u.waves.cancelled << " cancelled; " << u.submissions << " submissions; " << u.quarantined
        << " lanes quarantined" << (u.lost ? "; lost" : "") << '\n';
  }
  // Listings never checked, and why (checking_encoder.hpp): a few examples.
  constexpr std::size_t unchecked_shown = 3;
  for (std::size_t i = 0; i < s.unchecked.size() && i < unchecked_shown; ++i)
    out << (i == 0 ? "  unchecked    " : "               ") << s.unchecked[i] << '\n';
  if (s.unchecked.size() > unchecked_shown)
    out << "               and " << s.unchecked.size() - unchecked_shown << " more\n";
  out << "  wave         p50 " << fixed(s.latency.wave_p50, 1) << " us, p99 " << fixed(s.latency.wave_p99, 1)
      << " us (start to release, completed waves)\n";
  if (s.latency.fence_wake_measured) {
    out << "  fence wake   p50 " << fixed(s.latency.fence_wake_p50, 1) << " us, p99 "
        << fixed(s.latency.fence_wake_p99, 1) << " us (device done to wave resumed)\n";
  } else {
    out << "  fence wake   not measured on this device (0 in the JSON report)\n";
  }
  if (s.latency.gpu_measured)
    out << "  gpu          p50 " << fixed(s.latency.gpu_p50, 1) << " us, p99 " << fixed(s.latency.gpu_p99, 1)
        << " us (first node's begin to last node's end on the GPU, completed waves)\n";
  for (const bucket_gpu_path& g : s.gpu_paths) {
    out << "  gpu path     " << g.bucket << ": critical path " << fixed(g.critical_path_us, 1) << " us of "
        << fixed(g.serial_us, 1) << " us serial (nodes ";
    for (std::size_t k = 0; k < g.critical_path.size(); ++k) out << (k == 0 ? "" : " -> ") << g.critical_path[k];
    const double percent = g.serial_us > 0 ? 100.0 * g.async_bound_us / g.serial_us : 0.0;
    out << "); a second queue could save at most " << fixed(g.async_bound_us, 1) << " us (" << fixed(percent, 0)
        << "%)\n";
  }
  out << "  allocations  " << fixed(s.allocations_per_wave, 2) << " per wave (steady state, last " << s.steady_waves
      << " waves)\n";
  out << "  violations   " << s.violations << '\n';
  if (s.image_layout_errors != 0)
    out << "  layouts      " << s.image_layout_errors
        << " commands met an image in another layout, first: " << s.first_image_layout_error << '\n';
  out << "  faults       " << t.injected() << " injected, " << t.surfaced() << " surfaced ("
      << fault_line("delay", t.delay) << ", " << fault_line("hang", t.hang) << ", " << fault_line("lost", t.lost)
      << ", " << fault_line("encoder", t.encoder) << ", " << fault_line("cancel", t.cancel) << ")\n";
  if (!t.outcomes.empty()) {
    out << "  not completed";
    const char* separator = " ";
    for (const auto& [name, count] : t.outcomes) {
      out << separator << name << ' ' << count;
      separator = ", ";
    }
    out << (t.unexplained == 0 ? " (each explained by an injected fault)\n" : "\n");
  }
  if (t.unexplained != 0) {
    out << "  unexplained  " << t.unexplained << '\n';
    for (const std::string& line : t.unexplained_examples) out << "    " << line << '\n';
  }
  if (!s.trace_path.empty() || !s.timeline_path.empty()) {
    out << "  trace        " << s.trace_spans << " spans";
    if (s.trace_dropped != 0) out << " (the oldest " << s.trace_dropped << " dropped)";
    if (!s.trace_path.empty()) out << " -> " << s.trace_path;
    if (!s.timeline_path.empty()) out << (s.trace_path.empty() ? " -> " : ", ") << s.timeline_path;
    out << '\n';
  }
}

std::string run_failure(const run_summary& s) {
  const run_tally& t = s.tally;
  std::string why;
  const auto add = [&why](const std::string& part) { why += (why.empty() ? "" : "; ") + part; };
  if (s.violations != 0) add(std::to_string(s.violations) + " violations");
  if (s.image_layout_errors != 0)
    add(std::to_string(s.image_layout_errors) + " commands met an image in another layout (" +
        s.first_image_layout_error + ")");
  if (!t.all_surfaced())
    add("faults surfaced " + std::to_string(t.surfaced()) + " of " + std::to_string(t.injected()) + " injected (" +
        fault_line("delay", t.delay) + ", " + fault_line("hang", t.hang) + ", " + fault_line("lost", t.lost) + ", " +
        fault_line("encoder", t.encoder) + ", " + fault_line("cancel", t.cancel) + ")");
  if (t.unexplained != 0) {
    std::string part = std::to_string(t.unexplained) + " waves failed for a reason no injected fault explains";
    if (!t.unexplained_examples.empty()) part += ", first " + t.unexplained_examples.front();
    add(part);
  }
  return why;
}

}  // namespace ferrum::tools
