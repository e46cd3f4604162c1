// barrier_order — what the barriers' scopes and the level order buy, on the
// cold path: per frame, the barriers a wave on one queue records in plan
// order and in level order (ferrum/binding/node_order.hpp), the stages they
// wait for and block (ferrum/sync_scope.hpp) against today's barriers over
// every stage a list uses, the lane memory each order takes, and the compile
// time the reordering adds. No device: the figures are the compiler's.
//
// Frames: generated ferrum.plan.v2 frames of P passes the way engines write
// them — a G-buffer pass drawing a color and a depth image; then chains of
// effects (C = max(2, P / 8) of them, alternately compute passes that sample
// the image before and storage-write their own, and raster passes that
// sample it and draw into their own), listed chain after chain as a frame
// is usually written; a compose pass sampling every chain's last image and
// the scene into the frame's persistent output (a pool of its own). Every other image is an
// invocation image of one pool at half the bucket's extent: an interval
// pool ("aliased": images whose intervals in plan order do not overlap may
// share memory, which the level order then keeps apart in time, so chains
// listed one after another stay in that order) or a conservative one
// ("unaliased": no sharing, the chains free to run side by side, for the
// memory of every image at once); `after` says who produces what. Besides them: the main job's plan
// (examples/frame_loop/frame_loop.json) and examples/plans/deferred_frame.json.
//
// Columns: barriers per wave in plan order and in level order (one a level:
// its first node makes the level's layout changes); the stages
// they wait for, summed over a wave's barriers (a stage counted once per
// barrier that waits for it), derived against every stage the lists use
// (what each barrier waited for before scopes: a graphics list's nine, a
// compute list's three); the lane's buffer bytes and image bytes, the same
// in either order (the level order keeps every conflicting pair, aliasing
// included: an unaliased frame's gain is paid by its pool's choice); compile, the median time of ferrum::compile;
// reorder, the part of it the level order takes (level_order and the barriers and scopes of that order), and its share.
//
// A second table: split barriers (scheduler_options::split_barriers) in the
// order a wave on one queue submits (level order where it differs from the
// plan's): the barriers per wave without and with them, the events, and the
// needless drains — summed over a wave's barriers, the nodes a barrier
// waits for (their stages meet its `before`) that run after the last node
// its own node's uses conflict with (the same lane bytes, one writing),
// since the barrier before it. A wait drains none past its producer: its
// event is set right after it. The frames above sample what the pass
// before wrote, a layout change that stays in a barrier; "far pairs" is a
// frame of buffers: four chains of compute passes listed step by step, each
// pass reading what its chain's previous one wrote four passes before.
//
//   ferrum_bench_barrier_order [repeats]        # default 21
#include "ferrum/binding/access_scope.hpp"
#include "ferrum/binding/barriers.hpp"
#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/image_access.hpp"
#include "ferrum/binding/node_order.hpp"
#include "ferrum/binding/plan_json.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

// A generated frame of `passes` passes (see above), as plan text.
std::string frame_text(std::size_t passes, bool aliased) {
  using nlohmann::json;
  json resources = json::array();
  json nodes = json::array();
  const auto image = [&](const std::string& id, const char* format, const char* extent, const char* lifetime) {
    const bool kept = std::string(lifetime) == "persistent";
    resources.push_back({{"id", id},
                         {"pool", kept ? "pool/kept" : "pool/targets"},
                         {"kind", "workspace"},
                         {"lifetime", lifetime},
                         {"image", {{"format", format}, {"extent", extent}}}});
  };
  image("image/scene", "rgba16-float", "bucket", "invocation");
  image("image/depth", "d32-float", "bucket", "invocation");
  image("image/out", "rgba16-float", "bucket", "persistent");
  nodes.push_back({{"id", "node/gbuffer"},
                   {"resources", {"image/scene", "image/depth"}},
                   {"access", {{"image/scene", "color-attachment"}, {"image/depth", "depth-attachment"}}}});
  const std::size_t chains = std::max<std::size_t>(2, passes / 8);
  const std::size_t effect_passes = passes > 2 ? passes - 2 : chains;
  json compose_resources = {"image/scene"};
  json compose_access = {{"image/scene", "sampled"}};
  json compose_after = json::array();
  for (std::size_t c = 0; c < chains; ++c) {
    const std::size_t length = effect_passes / chains + (c < effect_passes % chains ? 1 : 0);
    std::string input = "image/scene";
    std::string producer = "node/gbuffer";
    for (std::size_t k = 0; k < length; ++k) {
      const std::string name = std::to_string(c) + "." + std::to_string(k);
      const std::string output = "image/effect" + name;
      image(output, "rgba16-float", "bucket/2", "invocation");
      const bool raster = c % 2 == 1;
      nodes.push_back({{"id", "node/effect" + name},
                       {"resources", {input, output}},
                       {"after", {producer}},
                       {"access", {{input, "sampled"}, {output, raster ? "color-attachment" : "storage-write"}}}});
      input = output;
      producer = "node/effect" + name;
    }
    compose_resources.push_back(input);
    compose_access[input] = "sampled";
    compose_after.push_back(producer);
  }
  compose_resources.push_back("image/out");
  compose_access["image/out"] = "storage-write";
  nodes.push_back(
      {{"id", "node/compose"}, {"resources", compose_resources}, {"after", compose_after}, {"access", compose_access}});
  const json plan = {{"format", "ferrum.plan.v2"},
                     {"resources", resources},
                     {"nodes", nodes},
                     {"buckets",
                      {{{"class", "frame"},
                        {"capacity", {1920, 1080, 1}},
                        {"budgets",
                         {{{"pool", "pool/targets"}, {"min", 0}, {"max", std::uint64_t{1} << 34}},
                          {{"pool", "pool/kept"}, {"min", 0}, {"max", std::uint64_t{1} << 30}}}}}}},
                     {"pools", {{"pool/targets", {{"liveness", aliased ? "interval" : "conservative"}}}}},
                     {"lanes", 2},
                     {"budget_bytes", std::uint64_t{1} << 36}};
  return plan.dump();
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::size_t count(const std::vector<bool>& v) { return static_cast<std::size_t>(std::count(v.begin(), v.end(), true)); }

// The stages a set of barriers waits for, summed.
std::size_t waited(const std::vector<bool>& before, const std::vector<ferrum::barrier_scope>& scopes) {
  std::size_t total = 0;
  for (std::size_t n = 0; n < before.size(); ++n)
    if (before[n]) total += static_cast<std::size_t>(std::popcount(scopes[n].before.stages));
  return total;
}

// Whether a node of the plan draws: its lists are graphics lists.
bool draws(const ferrum::plan& p) {
  for (const ferrum::plan_node& n : p.nodes)
    for (std::size_t k = 0; k < n.resources.size(); ++k) {
      const ferrum::resource_access a = n.access_of(k);
      if (a == ferrum::resource_access::color_attachment || a == ferrum::resource_access::depth_attachment ||
          a == ferrum::resource_access::depth_read || a == ferrum::resource_access::vertex ||
          a == ferrum::resource_access::index)
        return true;
    }
  return false;
}

void row(const std::string& name, const std::string& text, int repeats) {
  auto parsed = ferrum::parse_plan(text);
  if (!parsed) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), parsed.error().what().c_str());
    std::exit(1);
  }
  const ferrum::plan& p = *parsed;
  std::vector<double> compile_us;
  std::vector<double> reorder_us;
  ferrum::compiled_program program;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = clock_type::now();
    auto compiled = ferrum::compile(p);
    const auto t1 = clock_type::now();
    if (!compiled) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), compiled.error().what().c_str());
      std::exit(1);
    }
    program = std::move(*compiled);
    // The reordering's own part, per bucket, as compile runs it.
    const auto t2 = clock_type::now();
    std::size_t sink = 0;
    for (const ferrum::compiled_bucket& b : program.buckets) {
      const std::vector<std::size_t> order = ferrum::level_order(b.lane, program.dependencies);
      if (order.empty()) continue;
      const auto before = ferrum::derive_barriers(b.lane, program.dependencies, ferrum::barrier_queues::one, order);
      sink += ferrum::derive_barrier_scopes(b.lane, program.dependencies, before, ferrum::barrier_queues::one, order)
                  .size();
    }
    const auto t3 = clock_type::now();
    if (sink == std::size_t(-1)) std::puts("");
    compile_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    reorder_us.push_back(std::chrono::duration<double, std::micro>(t3 - t2).count());
  }
  const ferrum::compiled_bucket& b = program.buckets.front();
  const ferrum::lane_recipe& lane = b.lane;
  const bool reordered = !lane.order.empty();
  const std::vector<bool>& ordered = reordered ? lane.ordered_barrier_before : lane.one_queue_barrier_before;
  const std::vector<ferrum::barrier_scope>& ordered_scopes =
      reordered ? lane.ordered_barrier_scopes : lane.one_queue_barrier_scopes;
  const std::size_t list_stages = draws(p) ? 9 : 3;
  const double c = median(compile_us);
  const double o = median(reorder_us);
  std::printf("%16s | %6zu | %7zu %7zu | %7zu %7zu %8zu | %10llu %10llu | %9.1f %8.1f %5.1f%%\n", name.c_str(),
              p.nodes.size(), count(lane.one_queue_barrier_before), count(ordered),
              waited(lane.one_queue_barrier_before, lane.one_queue_barrier_scopes), waited(ordered, ordered_scopes),
              count(lane.one_queue_barrier_before) * list_stages, static_cast<unsigned long long>(b.lane_bytes()),
              static_cast<unsigned long long>(b.image_window.size), c, o, 100.0 * o / c);
}

// The needless drains of a wave's barriers (see above), in submission
// order `order` (empty: plan order): `before` with their `scopes`.
std::size_t needless_drains(const ferrum::compiled_program& program, const ferrum::lane_recipe& lane,
                            std::span<const std::size_t> order, const std::vector<bool>& before,
                            const std::vector<ferrum::barrier_scope>& scopes) {
  const std::size_t nodes = lane.use_begin.size() - 1;
  const auto node_at = [&](std::size_t at) { return order.empty() ? at : order[at]; };
  std::vector<ferrum::stage_mask> stages(nodes, 0);
  for (std::size_t n = 0; n < nodes; ++n) {
    const auto uses = lane.node_uses(n);
    const ferrum::node_stages where = ferrum::stages_of(uses, program.dependencies.queue(n));
    for (const ferrum::lane_use& u : uses) stages[n] |= ferrum::access_scope(u.access, where).stages;
  }
  const auto conflict = [&](std::size_t m, std::size_t n) {
    for (const ferrum::lane_use& a : lane.node_uses(m))
      for (const ferrum::lane_use& b : lane.node_uses(n))
        if (a.size != 0 && b.size != 0 && a.offset < b.offset + b.size && b.offset < a.offset + a.size &&
            (ferrum::access_writes(a.access) || ferrum::access_writes(b.access)))
          return true;
    return false;
  };
  std::size_t total = 0;
  std::size_t last = 0;
  for (std::size_t at = 0; at < nodes; ++at) {
    const std::size_t n = node_at(at);
    if (!before[n]) continue;
    std::size_t needed = last;
    for (std::size_t q = at; q-- > last;)
      if (conflict(node_at(q), n)) {
        needed = q + 1;
        break;
      }
    for (std::size_t q = needed; q < at; ++q) total += (stages[node_at(q)] & scopes[n].before.stages) != 0 ? 1 : 0;
    last = at;
  }
  return total;
}

// Four chains of `steps` compute passes over buffers, listed step by step.
std::string far_pairs_text(std::size_t steps = 8) {
  using nlohmann::json;
  constexpr std::size_t chains = 4;
  json resources = json::array();
  json nodes = json::array();
  for (std::size_t k = 0; k < steps; ++k)
    for (std::size_t c = 0; c < chains; ++c) {
      const std::string name = std::to_string(c) + "." + std::to_string(k);
      resources.push_back(
          {{"id", "buffer/" + name},
           {"pool", "pool/buffers"},
           {"kind", "workspace"},
           {"demand", {{"fixed", 65536}}},
           {"alignment", 256},
           {"lifetime", "invocation"},
           {"usage", "storage"},
           {"element", "f32"},
           {"storage", {{"allocator", "linear-arena"}, {"view", "contiguous"}, {"contract", std::string(64, 'a')}}}});
      if (k + 1 == steps) resources.back()["kept"] = true;  // the chains' results: nothing culled
      json node = {
          {"id", "node/" + name}, {"resources", {"buffer/" + name}}, {"access", {{"buffer/" + name, "write"}}}};
      if (k > 0) {
        const std::string input = "buffer/" + std::to_string(c) + "." + std::to_string(k - 1);
        node["resources"].push_back(input);
        node["access"][input] = "read";
        node["after"] = {"node/" + std::to_string(c) + "." + std::to_string(k - 1)};
      }
      nodes.push_back(node);
    }
  const json plan = {{"format", "ferrum.plan.v2"},
                     {"resources", resources},
                     {"nodes", nodes},
                     {"buckets",
                      {{{"class", "frame"},
                        {"capacity", {1, 1, 1}},
                        {"budgets", {{{"pool", "pool/buffers"}, {"min", 0}, {"max", std::uint64_t{1} << 30}}}}}}},
                     {"lanes", 1},
                     {"budget_bytes", std::uint64_t{1} << 32}};
  return plan.dump();
}

void split_row(const std::string& name, const std::string& text) {
  auto parsed = ferrum::parse_plan(text);
  auto compiled = parsed ? ferrum::compile(*parsed) : ferrum::result<ferrum::compiled_program>(parsed.error());
  if (!compiled) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), compiled.error().what().c_str());
    std::exit(1);
  }
  const ferrum::compiled_program& program = *compiled;
  const ferrum::lane_recipe& lane = program.buckets.front().lane;
  const bool reordered = !lane.order.empty();
  const std::span<const std::size_t> order =
      reordered ? std::span<const std::size_t>(lane.order) : std::span<const std::size_t>();
  const std::vector<bool>& before = reordered ? lane.ordered_barrier_before : lane.one_queue_barrier_before;
  const std::vector<ferrum::barrier_scope>& scopes =
      reordered ? lane.ordered_barrier_scopes : lane.one_queue_barrier_scopes;
  const ferrum::split_barriers& split = reordered ? lane.ordered_split : lane.one_queue_split;
  std::printf("%16s | %6zu | %8zu %8zu %7zu | %8zu %8zu\n", name.c_str(), parsed->nodes.size(), count(before),
              split.barriers_per_wave(), split.events.size(), needless_drains(program, lane, order, before, scopes),
              needless_drains(program, lane, order, split.barrier_before, split.barrier_scopes));
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 21;
  if (repeats < 1) {
    std::fprintf(stderr, "usage: ferrum_bench_barrier_order [repeats >= 1]\n");
    return 2;
  }
  std::printf("%16s | %6s | %15s | %24s | %21s | %25s\n", "frame", "passes", "barriers/wave", "stages waited for",
              "lane bytes", "compile");
  std::printf("%16s | %6s | %7s %7s | %7s %7s %8s | %10s %10s | %9s %8s %6s\n", "", "", "plan", "levels", "plan",
              "levels", "all-stg", "buffers", "images", "us", "reorder", "share");
  for (bool aliased : {true, false})
    for (std::size_t passes : {10, 25, 50, 100, 200})
      row((aliased ? "aliased " : "unaliased ") + std::to_string(passes), frame_text(passes, aliased), repeats);
  row("main job", file_text(FERRUM_SOURCE_DIR "/examples/frame_loop/frame_loop.json"), repeats);
  row("deferred_frame", file_text(FERRUM_SOURCE_DIR "/examples/plans/deferred_frame.json"), repeats);
  std::printf("\nsplit barriers, on one queue in the order it submits\n");
  std::printf("%16s | %6s | %8s %8s %7s | %17s\n", "frame", "passes", "barriers", "split", "events", "needless drains");
  std::printf("%16s | %6s | %8s %8s %7s | %8s %8s\n", "", "", "", "", "", "barriers", "split");
  for (bool aliased : {true, false})
    for (std::size_t passes : {10, 25, 50, 100, 200})
      split_row((aliased ? "aliased " : "unaliased ") + std::to_string(passes), frame_text(passes, aliased));
  split_row("main job", file_text(FERRUM_SOURCE_DIR "/examples/frame_loop/frame_loop.json"));
  split_row("deferred_frame", file_text(FERRUM_SOURCE_DIR "/examples/plans/deferred_frame.json"));
  split_row("far pairs", far_pairs_text());
  return 0;
}
