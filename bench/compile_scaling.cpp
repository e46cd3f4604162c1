// compile_scaling — cold compile time from 1k to 1M binding nodes, in memory
// and end to end from a plan file.
//
// Generates plans of N nodes, each owning one binding resource (demands and
// alignments varied) and sharing a scaled workspace resource with its
// neighbour in an interval pool, in two buckets; times `ferrum::compile`
// (best of several runs) and prints time per node, so near-linear scaling
// reads as a flat column. The baseline is the original module's algorithm for the step
// that made it quadratic — a linear search of the nodes for each binding
// descriptor's owner — timed on the same plans where it finishes in
// reasonable time.
//
// `cache` times load_compiled_program of the program saved by
// save_compiled_program (the `ferrum compile --out` file, from memory), and
// `x` is compile / cache. Up to text_limit nodes it also writes the plan as a
// ferrum.plan.v1 file and times the user's path: `load` parses and compiles
// its text in this process (parse_plan, schema_only as `ferrum compile`
// does, + compile), `cli` runs
// `ferrum compile FILE --json` (read, parse, validate, compile, print; output
// to /dev/null) as a user would.
//
//   ferrum_bench_compile                # 1k .. 1M, both shapes
//   ferrum_bench_compile 100000         # one size
//   ferrum_bench_compile 100000 mixed   # one size, one shape (binding or mixed)
#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/compiled_program_file.hpp"
#include "ferrum/binding/plan_json.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

template <class Id>
Id make_id(const std::string& text) {
  return Id::make(text).value();
}

// `mixed`: besides its binding resource, every other node starts a scaled
// workspace resource in an interval pool, and the plan has two buckets.
// Otherwise: binding resources only, one bucket.
ferrum::plan generate(std::size_t nodes, bool mixed) {
  ferrum::plan p;
  p.lanes = 3;
  p.budget_bytes = ~std::uint64_t{0};
  const std::string contract(64, 'c');
  const auto binding_pool = make_id<ferrum::pool_id>("pool/bindings");
  const auto workspace_pool = make_id<ferrum::pool_id>("pool/scratch");
  p.nodes.reserve(nodes);
  p.resources.reserve(nodes + nodes / 2);
  for (std::size_t i = 0; i < nodes; ++i) {
    const std::string n = std::to_string(i);
    ferrum::plan_node node{make_id<ferrum::node_id>("node/" + n), {}, std::nullopt};
    ferrum::resource_descriptor r;
    r.id = make_id<ferrum::resource_id>("res/" + n);
    r.pool = binding_pool;
    r.kind = ferrum::allocation_kind::binding;
    r.node = node.id;
    r.demand = ferrum::resource_demand::scaled(16 * (1 + i % 7), 16, 1);
    r.alignment = std::uint64_t{16} << (i % 3);
    r.lifetime = ferrum::allocation_lifetime::invocation;
    r.usage = ferrum::buffer_usage::binding;
    r.element = ferrum::element_type::u8;
    r.storage = {ferrum::storage_allocator::linear_arena, ferrum::storage_view::contiguous, contract};
    node.resources.push_back(r.id);
    node.binding = r.id;
    p.resources.push_back(std::move(r));
    // Every other node starts a workspace resource that lives for two nodes.
    if (!mixed) {
      // Binding resources only.
    } else if (i % 2 == 0) {
      ferrum::resource_descriptor w;
      w.id = make_id<ferrum::resource_id>("tmp/" + n);
      w.pool = workspace_pool;
      w.kind = ferrum::allocation_kind::workspace;
      w.demand = ferrum::resource_demand::scaled(0, 256, 1);
      w.alignment = 256;
      w.usage = ferrum::buffer_usage::storage;
      w.element = ferrum::element_type::f32;
      w.storage = {ferrum::storage_allocator::linear_arena, ferrum::storage_view::contiguous, contract};
      node.resources.push_back(w.id);
      p.resources.push_back(std::move(w));
    } else {
      node.resources.push_back(p.nodes.back().resources.back());
    }
    p.nodes.push_back(std::move(node));
  }
  if (mixed) p.pools.push_back({workspace_pool, ferrum::liveness_mode::interval});
  for (std::uint64_t units : {4u, 16u}) {
    ferrum::bucket_spec b{make_id<ferrum::bucket_class>("step"), {1, units, 1}, {}};
    b.budgets = {{binding_pool, 0, ~std::uint64_t{0}}};
    if (mixed) b.budgets.push_back({workspace_pool, 0, ~std::uint64_t{0}});
    p.buckets.push_back(std::move(b));
    if (!mixed) break;
  }
  return p;
}

// `p` as a ferrum.plan.v1 document (docs/interfaces.md, "Plan file").
std::string plan_text(const ferrum::plan& p) {
  using json = nlohmann::ordered_json;
  json nodes = json::array();
  for (const ferrum::plan_node& n : p.nodes) {
    json node{{"id", n.id.str()}, {"resources", json::array()}};
    for (const ferrum::resource_id& r : n.resources) node["resources"].push_back(r.str());
    if (n.binding) node["binding"] = n.binding->str();
    nodes.push_back(std::move(node));
  }
  json resources = json::array();
  for (const ferrum::resource_descriptor& r : p.resources) {
    const json demand =
        r.demand.dimension
            ? json{{"base", r.demand.base}, {"per_unit", r.demand.per_unit}, {"dimension", *r.demand.dimension}}
            : json{{"fixed", r.demand.base}};
    json resource{{"id", r.id.str()},
                  {"pool", r.pool.str()},
                  {"kind", ferrum::to_string(r.kind)},
                  {"demand", demand},
                  {"alignment", r.alignment},
                  {"lifetime", ferrum::to_string(r.lifetime)},
                  {"usage", ferrum::to_string(r.usage)},
                  {"element", ferrum::to_string(r.element)},
                  {"storage",
                   {{"allocator", ferrum::to_string(r.storage.allocator)},
                    {"view", ferrum::to_string(r.storage.view)},
                    {"contract", r.storage.digest}}}};
    if (r.node) resource["node"] = r.node->str();
    resources.push_back(std::move(resource));
  }
  json buckets = json::array();
  for (const ferrum::bucket_spec& b : p.buckets) {
    json budgets = json::array();
    for (const ferrum::workspace_budget& w : b.budgets)
      budgets.push_back({{"pool", w.pool.str()}, {"min", w.min}, {"max", w.max}});
    buckets.push_back({{"class", b.cls.str()}, {"capacity", b.dims}, {"budgets", std::move(budgets)}});
  }
  json pools = json::object();
  for (const ferrum::pool_option& o : p.pools) pools[o.pool.str()] = {{"liveness", ferrum::to_string(o.liveness)}};
  json document{{"format", "ferrum.plan.v1"},    {"nodes", std::move(nodes)}, {"resources", std::move(resources)},
                {"buckets", std::move(buckets)}, {"pools", std::move(pools)}, {"lanes", p.lanes},
                {"budget_bytes", p.budget_bytes}};
  return document.dump();
}

template <class F>
double best_seconds(int runs, F&& f) {
  double best = 1e300;
  for (int i = 0; i < runs; ++i) {
    const auto start = clock_type::now();
    f();
    best = std::min(best, std::chrono::duration<double>(clock_type::now() - start).count());
  }
  return best;
}

// The original module's owner lookup: for each binding descriptor, a linear search of
// the nodes (`nodes.iter().position(...)`), once per bucket.
std::size_t original_owner_lookup(const ferrum::plan& p) {
  std::size_t found = 0;
  for (std::size_t b = 0; b < p.buckets.size(); ++b)
    for (const ferrum::resource_descriptor& r : p.resources) {
      if (r.kind != ferrum::allocation_kind::binding) continue;
      auto it = std::find_if(p.nodes.begin(), p.nodes.end(), [&](const auto& n) { return n.id == *r.node; });
      found += static_cast<std::size_t>(it - p.nodes.begin());
    }
  return found;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes{1'000, 10'000, 100'000, 1'000'000};
  if (argc > 1) sizes = {static_cast<std::size_t>(std::strtoull(argv[1], nullptr, 10))};
  std::vector<bool> shapes{false, true};  // binding, mixed
  if (argc > 2) shapes = {std::string_view(argv[2]) == "mixed"};
  constexpr std::size_t baseline_limit = 20'000;
  constexpr std::size_t text_limit = 1'000'000;
  const std::filesystem::path plan_file = std::filesystem::temp_directory_path() / "ferrum_bench_compile_plan.json";

  for (bool mixed : shapes) {
    std::printf("%s\n", mixed ? "\nmixed: binding + interval workspace resources, 2 buckets"
                              : "binding: one binding resource per node, 1 bucket");
    std::printf("%10s %12s %12s %10s %16s %10s %10s %7s %8s %10s %10s %10s\n", "nodes", "resources", "compile ms",
                "ns/node", "orig lookup ms", "speedup", "cache ms", "x", "MB", "load ms", "cli ms", "cli ns/node");
    // The scaling reference is the first size of at least 10k (the issue's
    // 10k -> 1M): below that, fixed costs (process start, thread start) hide
    // the per-node cost.
    const std::size_t reference =
        *std::find_if(sizes.begin(), sizes.end() - 1, [](std::size_t n) { return n >= 10'000; });
    double first_per_node = 0;
    double last_per_node = 0;
    double first_cli_per_node = 0;
    double last_cli_per_node = 0;
    for (std::size_t n : sizes) {
      const ferrum::plan p = generate(n, mixed);
      const int runs = n >= 1'000'000 ? 3 : 5;
      std::size_t slots = 0;
      ferrum::result<ferrum::compiled_program> program = ferrum::compile(p);
      if (!program) {
        std::fprintf(stderr, "compile failed: %s\n", program.error().what().c_str());
        return 1;
      }
      const double compile_s = best_seconds(runs, [&] {
        program = ferrum::compile(p);
        slots = program ? program->buckets[0].binding->slots().size() : 0;
      });
      if (slots != n) {
        std::fprintf(stderr, "expected %zu slots, got %zu\n", n, slots);
        return 1;
      }
      const double per_node = compile_s * 1e9 / static_cast<double>(n);
      if (n == reference) first_per_node = per_node;
      last_per_node = per_node;
      std::printf("%10zu %12zu %12.3f %10.0f", n, p.resources.size(), compile_s * 1e3, per_node);
      if (n <= baseline_limit) {
        volatile std::size_t sink = 0;
        const double seed_s = best_seconds(runs, [&] { sink = original_owner_lookup(p); });
        (void)sink;
        std::printf(" %16.1f %9.1fx", seed_s * 1e3, seed_s / compile_s);
      } else {
        std::printf(" %16s %10s", "(quadratic)", "-");
      }
      const ferrum::result<std::vector<std::byte>> file = ferrum::save_compiled_program(*program, p);
      if (!file) {
        std::fprintf(stderr, "save failed: %s\n", file.error().what().c_str());
        return 1;
      }
      const double cache_s = best_seconds(runs, [&] {
        const auto loaded = ferrum::load_compiled_program(*file, p);
        if (!loaded || loaded->hash != program->hash) {
          std::fprintf(stderr, "the program file does not load\n");
          std::exit(1);
        }
      });
      std::printf(" %10.1f %6.1fx", cache_s * 1e3, compile_s / cache_s);
      if (n > text_limit) {
        std::printf(" %8s %10s %10s %10s\n", "-", "-", "-", "-");
        continue;
      }
      const std::string text = plan_text(p);
      std::ofstream(plan_file, std::ios::binary) << text;
      const double load_s = best_seconds(2, [&] {
        auto loaded = ferrum::parse_plan(text, ferrum::plan_checks::schema_only);
        if (!loaded || !ferrum::compile(*loaded)) {
          std::fprintf(stderr, "the plan file does not load\n");
          std::exit(1);
        }
      });
      std::printf(" %8.1f %10.1f", static_cast<double>(text.size()) / 1e6, load_s * 1e3);
#ifdef FERRUM_BENCH_CLI
      const std::string command =
          std::string(FERRUM_BENCH_CLI) + " compile " + plan_file.string() + " --json >/dev/null";
      const double cli_s = best_seconds(2, [&] {
        if (std::system(command.c_str()) != 0) {
          std::fprintf(stderr, "failed: %s\n", command.c_str());
          std::exit(1);
        }
      });
      const double cli_per_node = cli_s * 1e9 / static_cast<double>(n);
      if (n == reference) first_cli_per_node = cli_per_node;
      last_cli_per_node = cli_per_node;
      std::printf(" %10.1f %10.0f\n", cli_s * 1e3, cli_per_node);
#else
      std::printf(" %10s %10s\n", "(no tool)", "-");
#endif
    }
    std::printf("scaling: ns/node at %zu / at %zu = %.2f compile", sizes.back(), reference,
                last_per_node / first_per_node);
    if (first_cli_per_node > 0) std::printf(", %.2f cli", last_cli_per_node / first_cli_per_node);
    std::printf(" (1.0 = linear)\n");
  }
  if (std::getenv("FERRUM_BENCH_KEEP_PLAN") == nullptr) std::filesystem::remove(plan_file);
  std::printf("\nspeedup: the original module's owner search alone (a part of its compile) / ferrum's whole compile\n");
  std::printf("cache: load_compiled_program of the saved program; x: compile ms / cache ms\n");
  std::printf(
      "load: parse_plan (schema_only) + compile of the plan file's text in this process; cli: ferrum compile FILE "
      "--json\n");
  // What a change of plan between two frames can afford (async_replace):
  // the in-memory compile of mixed plans, best of 20.
  std::printf("\ntargets (mixed shape, in memory, best of 20):\n");
  for (const auto& [n, limit_ms] : {std::pair<std::size_t, double>{100, 0.1}, {1000, 0.5}}) {
    const ferrum::plan p = generate(n, true);
    const double ms = best_seconds(20, [&] { (void)ferrum::compile(p).value(); }) * 1e3;
    std::printf("  %5zu nodes: compile %.3f ms (%.0f ns/node) <= %.3f ms: %s\n", n, ms,
                ms * 1e6 / static_cast<double>(n), limit_ms, ms <= limit_ms ? "met" : "not met");
  }
  return 0;
}
