// End-to-end tests of `ferrum compile` (and the command's usage errors): each
// runs the built binary and checks its exit status, stdout and stderr against
// docs/interfaces.md, "The ferrum command".

#include "compiled_plan.hpp"
#include "culling_plans.hpp"
#include "ferrum_process.hpp"

#include "ferrum/sync_scope.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using cli_test::barrier_nodes;
using cli_test::command_result;
using cli_test::compile_in_process;
using cli_test::example_plan;
using cli_test::read_file;
using cli_test::run_ferrum;
using cli_test::split_plan_json;
using cli_test::temp_file;

const std::vector<std::string> example_plans = {"two_nodes.json", "multi_bucket.json", "interval_liveness.json",
                                                "two_queues.json"};

nlohmann::json example_plan_json(std::string_view name) { return nlohmann::json::parse(read_file(example_plan(name))); }

// Checks that `result` is a rejected plan reported as docs/interfaces.md says:
// exit 2 and one stderr line `ferrum: error: <code>: ...[ (at <path>)]`.
void check_rejected(const command_result& result, std::string_view code, std::string_view path) {
  INFO("stderr: " << result.err);
  CHECK(result.status == 2);
  REQUIRE(!result.err.empty());
  CHECK(result.err.back() == '\n');
  CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
  CHECK(result.err.rfind("ferrum: error: " + std::string(code) + ": ", 0) == 0);
  if (!path.empty()) {
    const std::string suffix = " (at " + std::string(path) + ")\n";
    CHECK(result.err.size() > suffix.size());
    CHECK(result.err.compare(result.err.size() - suffix.size(), suffix.size(), suffix) == 0);
  }
}

// Compiles `plan` (written to a temp file) with `extra` arguments.
command_result compile_plan_text(const std::string& plan, const std::vector<std::string>& extra = {}) {
  const temp_file file(plan);
  std::vector<std::string> args{"compile", file.path()};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_ferrum(args);
}

command_result compile_plan(const nlohmann::json& plan, const std::vector<std::string>& extra = {}) {
  return compile_plan_text(plan.dump(2), extra);
}

// A plan with one workspace resource and no binding resources.
nlohmann::json workspace_only_plan() { return nlohmann::json::parse(cli_test::workspace_only_plan); }

// Plans whose barriers the tests compare with compile()'s: a v1 plan without
// hazards, a v1 plan with some, a v2 plan that declares accesses, and one
// whose level order is not its plan order.
const std::vector<std::string> barrier_plans = {"two_nodes.json", "history.json", "two_queues_access.json",
                                                "frame_chains.json"};

// The table's line for the barriers of `bucket` of `c`: the first eight
// nodes by id, then how many more.
std::string expected_barriers_line(const cli_test::compiled_plan& c, const ferrum::compiled_bucket& bucket) {
  const std::vector<std::size_t> nodes = barrier_nodes(bucket);
  std::string line = "  barriers: " + std::to_string(nodes.size()) + " per wave";
  for (std::size_t i = 0; i < nodes.size() && i < 8; ++i)
    line += (i == 0 ? ", before " : ", ") + c.plan.nodes[nodes[i]].id.str();
  if (nodes.size() > 8) line += " and " + std::to_string(nodes.size() - 8) + " more";
  return line + "\n";
}

// A bucket's barrier counts on one queue, in level order and plan order.
struct lane_recipe_view {
  const ferrum::lane_recipe& lane;
  [[nodiscard]] std::size_t ordered() const {
    return static_cast<std::size_t>(
        std::count(lane.ordered_barrier_before.begin(), lane.ordered_barrier_before.end(), true));
  }
  [[nodiscard]] std::size_t plan_order() const {
    return static_cast<std::size_t>(
        std::count(lane.one_queue_barrier_before.begin(), lane.one_queue_barrier_before.end(), true));
  }
};

}  // namespace

TEST_CASE("ferrum compile: every example plan compiles and prints a table", "[cli]") {
  for (const std::string& name : example_plans) {
    INFO(name);
    const command_result result = run_ferrum({"compile", example_plan(name)});
    CHECK(result.status == 0);
    CHECK(result.err.empty());
    CHECK(result.out.rfind("plan      sha256/", 0) == 0);
    CHECK(result.out.find("\nbucket ") != std::string::npos);
  }
}

TEST_CASE("ferrum compile: the examples directory holds only plans that compile", "[cli]") {
  std::size_t plans = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(FERRUM_SOURCE_DIR) + "/examples/plans")) {
    if (entry.path().extension() != ".json") continue;
    ++plans;
    INFO(entry.path().string());
    const command_result result = run_ferrum({"compile", "--json", entry.path().string()});
    CHECK(result.status == 0);
    CHECK(result.err.empty());
  }
  CHECK(plans >= example_plans.size());
}

TEST_CASE("ferrum compile: --json prints a ferrum.compiled.v1 document in stable order", "[cli]") {
  for (const std::string& name : example_plans) {
    INFO(name);
    const command_result result = run_ferrum({"compile", example_plan(name), "--json"});
    REQUIRE(result.status == 0);
    CHECK(result.err.empty());
    CHECK(result.out.back() == '\n');
    const nlohmann::json doc = nlohmann::json::parse(result.out);
    CHECK(doc.at("format") == "ferrum.compiled.v1");
    const std::string hash = doc.at("plan_hash");
    CHECK(hash.rfind("sha256/", 0) == 0);
    CHECK(hash.size() == 7 + 64);

    const nlohmann::json& buckets = doc.at("buckets");
    REQUIRE(buckets.is_array());
    CHECK(buckets.size() == example_plan_json(name).at("buckets").size());
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      const nlohmann::json& bucket = buckets[b];
      if (b > 0) CHECK(buckets[b - 1].at("id").get<std::string>() < bucket.at("id").get<std::string>());
      const std::vector<std::uint64_t> dims = bucket.at("capacity");
      REQUIRE(dims.size() == 3);
      CHECK(bucket.at("id") == bucket.at("class").get<std::string>() + "@" + std::to_string(dims[0]) + "x" +
                                   std::to_string(dims[1]) + "x" + std::to_string(dims[2]));
      const nlohmann::json& domains = bucket.at("domains");
      REQUIRE(!domains.empty());
      for (std::size_t d = 0; d < domains.size(); ++d) {
        const nlohmann::json& domain = domains[d];
        if (d > 0) CHECK(domains[d - 1].at("pool").get<std::string>() < domain.at("pool").get<std::string>());
        CHECK((domain.at("liveness") == "conservative" || domain.at("liveness") == "interval"));
        CHECK(domain.at("physical_size_bytes").get<std::uint64_t>() <=
              domain.at("unaliased_size_bytes").get<std::uint64_t>());
        for (const nlohmann::json& p : domain.at("projections")) {
          CHECK(p.at("resource").is_string());
          CHECK(p.at("offset").get<std::uint64_t>() + p.at("capacity").get<std::uint64_t>() <=
                domain.at("physical_size_bytes").get<std::uint64_t>());
        }
      }
      const nlohmann::json& binding = bucket.at("program_binding");
      if (binding.is_null()) continue;
      CHECK(binding.at("fingerprint").get<std::string>().rfind("sha256/", 0) == 0);
      const nlohmann::json& slots = binding.at("slots");
      for (std::size_t s = 1; s < slots.size(); ++s)
        CHECK(slots[s - 1].at("node_index").get<std::size_t>() < slots[s].at("node_index").get<std::size_t>());
    }
  }
}

TEST_CASE("ferrum compile: --json of two_nodes.json holds its two slots", "[cli]") {
  const command_result result = run_ferrum({"compile", "--json", example_plan("two_nodes.json")});
  REQUIRE(result.status == 0);
  const nlohmann::json doc = nlohmann::json::parse(result.out);
  REQUIRE(doc.at("buckets").size() == 1);
  const nlohmann::json& bucket = doc.at("buckets")[0];
  const nlohmann::json& binding = bucket.at("program_binding");
  REQUIRE(binding.is_object());
  CHECK(binding.at("physical_size_bytes") == 192);

  const nlohmann::json plan = example_plan_json("two_nodes.json");
  const nlohmann::json& slots = binding.at("slots");
  REQUIRE(slots.size() == 2);
  const std::uint64_t offsets[] = {0, 64};
  const std::uint64_t capacities[] = {64, 128};
  for (std::size_t i = 0; i < 2; ++i) {
    INFO("slot " << i);
    CHECK(slots[i].at("node_index") == i);
    CHECK(slots[i].at("node") == plan.at("nodes")[i].at("id"));
    CHECK(slots[i].at("resource") == plan.at("nodes")[i].at("binding"));
    CHECK(slots[i].at("offset") == offsets[i]);
    CHECK(slots[i].at("capacity") == capacities[i]);
    CHECK(slots[i].at("alignment") == 16);
  }

  REQUIRE(bucket.at("domains").size() == 1);
  const nlohmann::json& domain = bucket.at("domains")[0];
  CHECK(domain.at("pool") == "pool/bindings");
  CHECK(domain.at("liveness") == "conservative");
  CHECK(domain.at("physical_size_bytes") == 192);
  CHECK(domain.at("unaliased_size_bytes") == 192);
}

TEST_CASE("ferrum compile: compiling the same plan twice prints byte-identical output", "[cli]") {
  for (const std::string& name : example_plans) {
    for (const char* format : {"--json", ""}) {
      INFO(name << " " << format);
      std::vector<std::string> args{"compile", example_plan(name)};
      if (*format != '\0') args.emplace_back(format);
      const command_result first = run_ferrum(args);
      const command_result second = run_ferrum(args);
      REQUIRE(first.status == 0);
      CHECK(first.out == second.out);
    }
  }
}

TEST_CASE("ferrum compile: --json is laid out as the other reports (two-space indents, one element a line)", "[cli]") {
  // The compiled document is written as it goes (RapidJSON), the other
  // reports through nlohmann's dump(2): the same layout, byte for byte.
  for (const std::string& name : example_plans) {
    INFO(name);
    const command_result result = run_ferrum({"compile", example_plan(name), "--json"});
    REQUIRE(result.status == 0);
    CHECK(result.out == nlohmann::ordered_json::parse(result.out).dump(2) + "\n");
  }
}

TEST_CASE("ferrum compile: the table shows the plan hash, fingerprint and slots of --json", "[cli]") {
  const command_result table = run_ferrum({"compile", example_plan("two_nodes.json")});
  const command_result json = run_ferrum({"compile", example_plan("two_nodes.json"), "--json"});
  REQUIRE(table.status == 0);
  REQUIRE(json.status == 0);
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  CHECK(table.out.find("plan      " + doc.at("plan_hash").get<std::string>() + "\n") != std::string::npos);
  const nlohmann::json& binding = doc.at("buckets")[0].at("program_binding");
  CHECK(table.out.find("fingerprint " + binding.at("fingerprint").get<std::string>()) != std::string::npos);
  for (const nlohmann::json& slot : binding.at("slots")) {
    INFO(slot.dump());
    CHECK(table.out.find(slot.at("node").get<std::string>() + "  ") != std::string::npos);
    CHECK(table.out.find(slot.at("resource").get<std::string>()) != std::string::npos);
  }
  CHECK(table.out.find("\nbucket " + doc.at("buckets")[0].at("id").get<std::string>() + " ") != std::string::npos);
}

TEST_CASE("ferrum compile: --json gives each bucket the barriers that compile() derives", "[cli]") {
  for (const std::string& name : barrier_plans) {
    INFO(name);
    const cli_test::compiled_plan c = compile_in_process(example_plan(name));
    const command_result result = run_ferrum({"compile", example_plan(name), "--json"});
    REQUIRE(result.status == 0);
    const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(result.out);
    const nlohmann::ordered_json& buckets = doc.at("buckets");
    REQUIRE(buckets.size() == c.program.buckets.size());
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      const ferrum::compiled_bucket& bucket = c.program.buckets[b];
      INFO(bucket.id.str());
      CHECK(buckets[b].at("id") == bucket.id.str());
      // The bucket's last members.
      std::vector<std::string> last;
      for (auto it = std::prev(buckets[b].end(), 3); it != buckets[b].end(); ++it) last.push_back(it.key());
      CHECK(last == std::vector<std::string>{"barriers", "images", "transitions"});
      const nlohmann::ordered_json& barriers = buckets[b].at("barriers");
      std::vector<std::string> keys;
      for (const auto& item : barriers.items()) keys.push_back(item.key());
      CHECK(keys == std::vector<std::string>{"per_wave", "before_nodes", "scopes", "level_order",
                                             "level_order_before_nodes", "split"});
      CHECK(barriers.at("level_order").get<std::vector<std::size_t>>() == bucket.lane.order);
      std::vector<std::size_t> ordered;
      for (std::size_t n = 0; n < bucket.lane.ordered_barrier_before.size(); ++n)
        if (bucket.lane.ordered_barrier_before[n]) ordered.push_back(n);
      CHECK(barriers.at("level_order_before_nodes").get<std::vector<std::size_t>>() == ordered);
      CHECK(barriers.at("per_wave").get<std::size_t>() == bucket.lane.barriers_per_wave());
      CHECK(barriers.at("before_nodes").get<std::vector<std::size_t>>() == barrier_nodes(bucket));
      CHECK(barriers.at("before_nodes").size() == bucket.lane.barriers_per_wave());
      // Each barrier's scope, as compile() derives it.
      const nlohmann::ordered_json& scopes = barriers.at("scopes");
      REQUIRE(scopes.size() == bucket.lane.barriers_per_wave());
      for (std::size_t i = 0; i < scopes.size(); ++i) {
        const std::size_t node = barrier_nodes(bucket)[i];
        const ferrum::barrier_scope& scope = bucket.lane.barrier_scopes[node];
        CHECK(scopes[i].at("node") == node);
        CHECK(scopes[i].at("waits_for") == ferrum::stage_mask_names(scope.before.stages));
        CHECK(scopes[i].at("flushes") == ferrum::access_mask_names(scope.before.accesses));
        CHECK(scopes[i].at("blocks") == ferrum::stage_mask_names(scope.after.stages));
        CHECK(scopes[i].at("makes_visible") == ferrum::access_mask_names(scope.after.accesses));
      }
    }
  }
  // Not all of them vacuous: history.json's nodes share resources.
  CHECK(compile_in_process(example_plan("history.json")).program.buckets[0].lane.barriers_per_wave() > 0);
}

TEST_CASE("ferrum compile: the table has a barriers line per bucket naming the nodes compile() derives", "[cli]") {
  for (const std::string& name : barrier_plans) {
    INFO(name);
    const cli_test::compiled_plan c = compile_in_process(example_plan(name));
    const command_result result = run_ferrum({"compile", example_plan(name)});
    REQUIRE(result.status == 0);
    INFO(result.out);
    std::size_t lines = 0;
    for (std::size_t at = 0; (at = result.out.find("\n  barriers: ", at)) != std::string::npos; ++at) ++lines;
    CHECK(lines == c.program.buckets.size());
    for (const ferrum::compiled_bucket& bucket : c.program.buckets) {
      // The bucket's line, after its header.
      const std::size_t header = result.out.find("\nbucket " + bucket.id.str() + " ");
      REQUIRE(header != std::string::npos);
      const std::string line = expected_barriers_line(c, bucket);
      INFO(line);
      CHECK(result.out.find("\n" + line, header) != std::string::npos);
      // The level order's line, where it is not plan order.
      const lane_recipe_view lane{bucket.lane};
      CHECK((result.out.find("\n  level order on one queue: " + std::to_string(lane.ordered()) +
                                 " barriers per wave (plan order " + std::to_string(lane.plan_order()) + "), nodes " +
                                 c.plan.nodes[bucket.lane.order.empty() ? 0 : bucket.lane.order[0]].id.str(),
                             header) != std::string::npos) == !bucket.lane.order.empty());
      // A line per barrier under it: what it waits for and what it blocks.
      for (std::size_t node : barrier_nodes(bucket)) {
        const ferrum::barrier_scope& scope = bucket.lane.barrier_scopes[node];
        CHECK(result.out.find("\n    " + c.plan.nodes[node].id.str() + ": waits for " +
                                  ferrum::scope_text(scope.before) + "; blocks " + ferrum::scope_text(scope.after) +
                                  "\n",
                              header) != std::string::npos);
      }
    }
  }
}

TEST_CASE("ferrum compile: the barriers line names at most eight nodes, then how many more", "[cli]") {
  // Twelve nodes over one workspace resource: a v1 node reads and writes
  // what it lists, so every node after the first has a hazard.
  nlohmann::json plan = workspace_only_plan();
  plan["nodes"] = nlohmann::json::array();
  for (int n = 0; n < 12; ++n)
    plan["nodes"].push_back({{"id", "node/step." + std::to_string(n)}, {"resources", {"resource/scratch"}}});
  const cli_test::temp_file file(plan.dump(2));
  const cli_test::compiled_plan c = compile_in_process(file.path());
  REQUIRE(c.program.buckets.size() == 1);
  REQUIRE(c.program.buckets[0].lane.barriers_per_wave() > 8);
  const command_result table = run_ferrum({"compile", file.path()});
  REQUIRE(table.status == 0);
  INFO(table.out);
  const std::string line = expected_barriers_line(c, c.program.buckets[0]);
  CHECK(table.out.find("\n" + line) != std::string::npos);
  CHECK(table.out.find(" and " + std::to_string(c.program.buckets[0].lane.barriers_per_wave() - 8) + " more\n") !=
        std::string::npos);
  const command_result json = run_ferrum({"compile", file.path(), "--json"});
  REQUIRE(json.status == 0);
  // The document lists them all.
  CHECK(nlohmann::json::parse(json.out)["buckets"][0]["barriers"]["before_nodes"].get<std::vector<std::size_t>>() ==
        barrier_nodes(c.program.buckets[0]));
}

TEST_CASE("ferrum compile: a plan without binding resources has a null program_binding", "[cli]") {
  const command_result result = compile_plan(workspace_only_plan(), {"--json"});
  INFO(result.err);
  REQUIRE(result.status == 0);
  const nlohmann::json doc = nlohmann::json::parse(result.out);
  REQUIRE(doc.at("buckets").size() == 1);
  CHECK(doc.at("buckets")[0].at("program_binding").is_null());
  CHECK(doc.at("buckets")[0].at("domains")[0].at("physical_size_bytes") == 1024);

  const command_result table = compile_plan(workspace_only_plan());
  REQUIRE(table.status == 0);
  CHECK(table.out.find("program binding: none") != std::string::npos);
}

TEST_CASE("ferrum compile: malformed JSON is rejected with json_syntax", "[cli]") {
  const std::string plan = read_file(example_plan("two_nodes.json"));
  check_rejected(compile_plan_text(plan.substr(0, plan.size() / 2)), "json_syntax", "");
  check_rejected(compile_plan_text("{\"format\": \"ferrum.plan.v1\",}"), "json_syntax", "");
  check_rejected(compile_plan_text(""), "json_syntax", "");
}

TEST_CASE("ferrum compile: an unknown field is rejected with unknown_field at its path", "[cli]") {
  nlohmann::json plan = example_plan_json("two_nodes.json");
  plan["resources"][0]["colour"] = "red";
  check_rejected(compile_plan(plan), "unknown_field", "/resources/0/colour");
}

TEST_CASE("ferrum compile: alignment 3 is rejected with invalid_alignment at its path", "[cli]") {
  nlohmann::json plan = example_plan_json("two_nodes.json");
  plan["resources"][1]["alignment"] = 3;
  check_rejected(compile_plan(plan), "invalid_alignment", "/resources/1/alignment");
}

TEST_CASE("ferrum compile: a dangling reference is rejected with dangling_reference at its path", "[cli]") {
  nlohmann::json plan = example_plan_json("two_nodes.json");
  plan["nodes"][1]["binding"] = "resource/missing";
  check_rejected(compile_plan(plan), "dangling_reference", "/nodes/1/binding");

  plan = example_plan_json("two_nodes.json");
  plan["nodes"][0]["resources"][0] = "resource/missing";
  check_rejected(compile_plan(plan), "dangling_reference", "/nodes/0/resources/0");
}

TEST_CASE("ferrum compile: a v2 plan's dependency cycle exits 2 naming the cycle and the edge", "[cli]") {
  nlohmann::json plan = example_plan_json("two_queues.json");
  plan["nodes"][1]["after"].push_back("node/compose");
  const command_result result = compile_plan(plan);
  check_rejected(result, "dependency_cycle", "/nodes/2/after/0");
  CHECK(result.err.find("a cycle of 3 nodes: node 'node/simulate' runs after node 'node/compose'") !=
        std::string::npos);
  CHECK(result.err.find("; to break it, remove node 'node/simulate' from the 'after' of node 'node/readback' (at "
                        "/nodes/2/after/0)\n") != std::string::npos);
}

TEST_CASE("ferrum compile: a 20,000-node cycle is one line under 1 KiB naming the edge to remove", "[cli]") {
  // node/n<i> runs after node/n<i+1>; the last after node/n0, which closes
  // the cycle. Node 0 uses the workspace-only plan's resource.
  nlohmann::json plan = workspace_only_plan();
  plan["format"] = "ferrum.plan.v2";
  plan["nodes"] = nlohmann::json::array();
  constexpr int count = 20000;
  for (int i = 0; i < count; ++i) {
    plan["nodes"].push_back(
        {{"id", "node/n" + std::to_string(i)},
         {"resources", i == 0 ? nlohmann::json::array({"resource/scratch"}) : nlohmann::json::array()},
         {"after", {"node/n" + std::to_string((i + 1) % count)}}});
  }
  for (const std::vector<std::string>& extra : {std::vector<std::string>{}, std::vector<std::string>{"--json"}}) {
    INFO((extra.empty() ? "table" : "--json"));
    const command_result result = compile_plan(plan, extra);
    check_rejected(result, "dependency_cycle", "/nodes/19999/after/0");
    CHECK(result.err.size() < 1024);
    CHECK(result.err.find("a cycle of 20000 nodes: node 'node/n0' runs after node 'node/n1' runs after") !=
          std::string::npos);
    CHECK(result.err.find("node 'node/n7' runs after ... 19991 more nodes ... runs after node 'node/n19999' runs "
                          "after node 'node/n0'; to break it, remove node 'node/n0' from the 'after' of node "
                          "'node/n19999' (at /nodes/19999/after/0)\n") != std::string::npos);
    CHECK(result.err.find("node/n8'") == std::string::npos);
    if (!extra.empty()) {
      const nlohmann::json error = nlohmann::json::parse(result.out).at("error");
      CHECK(error.at("code") == "dependency_cycle");
      CHECK(error.at("path") == "/nodes/19999/after/0");
      CHECK(error.at("message").get<std::string>().size() < 1024);
    }
  }
}

TEST_CASE("ferrum compile: a v1 plan's queue, after, access or memory exits 2 saying to use ferrum.plan.v2", "[cli]") {
  struct field_case {
    std::string field;
    std::string path;
    void (*edit)(nlohmann::json&);
  };
  const std::vector<field_case> cases = {
      {"queue", "/nodes/1/queue", [](nlohmann::json& plan) { plan["nodes"][1]["queue"] = "compute"; }},
      {"after", "/nodes/1/after",
       [](nlohmann::json& plan) { plan["nodes"][1]["after"] = {"node/program-binding-first"}; }},
      {"access", "/nodes/0/access",
       [](nlohmann::json& plan) { plan["nodes"][0]["access"] = nlohmann::json::object(); }},
      {"memory", "/pools/pool~1bindings/memory",
       [](nlohmann::json& plan) {
         plan["pools"] = {{"pool/bindings", {{"liveness", "conservative"}, {"memory", "upload"}}}};
       }},
  };
  for (const field_case& c : cases) {
    INFO(c.field);
    nlohmann::json plan = example_plan_json("two_nodes.json");
    c.edit(plan);
    const command_result result = compile_plan(plan);
    check_rejected(result, "unknown_field", c.path);
    CHECK(result.err == "ferrum: error: unknown_field: the plan has a field that the format does not define: field '" +
                            c.field + "' is not defined in ferrum.plan.v1; use ferrum.plan.v2 (at " + c.path + ")\n");
    // The same plan as v2 compiles.
    plan["format"] = "ferrum.plan.v2";
    CHECK(compile_plan(plan).status == 0);
  }
}

TEST_CASE("ferrum compile: --json on a rejected plan also prints the error object on stdout", "[cli]") {
  nlohmann::json plan = example_plan_json("two_nodes.json");
  plan["resources"][1]["alignment"] = 3;
  const command_result result = compile_plan(plan, {"--json"});
  check_rejected(result, "invalid_alignment", "/resources/1/alignment");
  const nlohmann::json doc = nlohmann::json::parse(result.out);
  REQUIRE(doc.size() == 1);
  const nlohmann::json& error = doc.at("error");
  CHECK(error.at("code") == "invalid_alignment");
  CHECK(error.at("path") == "/resources/1/alignment");
  const std::string message = error.at("message");
  CHECK(message.rfind("an alignment is not a power of two", 0) == 0);
  // The stderr line is the same error: code, message, path.
  CHECK(result.err == "ferrum: error: invalid_alignment: " + message + " (at /resources/1/alignment)\n");
}

TEST_CASE("ferrum compile: --json on malformed JSON prints an error object with an empty path", "[cli]") {
  const command_result result = compile_plan_text("{", {"--json"});
  check_rejected(result, "json_syntax", "");
  const nlohmann::json doc = nlohmann::json::parse(result.out);
  CHECK(doc.at("error").at("code") == "json_syntax");
  CHECK(doc.at("error").at("path") == "");
}

TEST_CASE("ferrum compile: a missing plan file exits 1 with io_error", "[cli]") {
  const std::string missing = std::string(FERRUM_SOURCE_DIR) + "/examples/plans/no-such-plan.json";
  const command_result result = run_ferrum({"compile", missing});
  CHECK(result.status == 1);
  CHECK(result.out.empty());
  CHECK(result.err.rfind("ferrum: error: io_error: ", 0) == 0);
  CHECK(result.err.find(missing) != std::string::npos);
  CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);

  const command_result json = run_ferrum({"compile", "--json", missing});
  CHECK(json.status == 1);
  CHECK(nlohmann::json::parse(json.out).at("error").at("code") == "io_error");
}

TEST_CASE("ferrum compile: a directory as the plan exits 1 with io_error", "[cli]") {
  const command_result result = run_ferrum({"compile", std::string(FERRUM_SOURCE_DIR) + "/examples/plans"});
  CHECK(result.status == 1);
  CHECK(result.err.rfind("ferrum: error: io_error: ", 0) == 0);
}

TEST_CASE("ferrum compile: no arguments exit 1 with a usage error", "[cli]") {
  const command_result result = run_ferrum({});
  CHECK(result.status == 1);
  CHECK(result.out.empty());
  CHECK(result.err.rfind("ferrum: error: usage_error: ", 0) == 0);
}

TEST_CASE("ferrum compile: a missing PLAN exits 1 with a usage error", "[cli]") {
  const command_result result = run_ferrum({"compile"});
  CHECK(result.status == 1);
  CHECK(result.err.rfind("ferrum: error: usage_error: ", 0) == 0);
  CHECK(result.err.find("PLAN") != std::string::npos);
}

TEST_CASE("ferrum compile: an unknown option exits 1 and names the option", "[cli]") {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--bogus"}, {"compile", "--bogus", example_plan("two_nodes.json")}, {"frobnicate"}}) {
    INFO(args.back());
    const command_result result = run_ferrum(args);
    CHECK(result.status == 1);
    CHECK(result.out.empty());
    CHECK(result.err.rfind("ferrum: error: usage_error: ", 0) == 0);
    CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
  }
  CHECK(run_ferrum({"--bogus"}).err.find("--bogus") != std::string::npos);
}

TEST_CASE("ferrum compile: --version prints the project version and exits 0", "[cli]") {
  const command_result result = run_ferrum({"--version"});
  CHECK(result.status == 0);
  CHECK(result.out.rfind("ferrum ", 0) == 0);
  CHECK(result.out.find('.') != std::string::npos);
  CHECK(result.err.empty());
}

TEST_CASE("ferrum compile: help compile describes compile and exits 0", "[cli]") {
  const command_result result = run_ferrum({"help", "compile"});
  CHECK(result.status == 0);
  CHECK(result.out.find("ferrum compile") != std::string::npos);
  // It compiles both plan formats, and says so.
  CHECK(result.out.find("Compile a ferrum.plan.v1 or ferrum.plan.v2 plan") != std::string::npos);
  CHECK(result.out.find("--out FILE") != std::string::npos);
  CHECK(result.out.find("PLAN") != std::string::npos);
  CHECK(result.out.find("--json") != std::string::npos);

  const command_result overview = run_ferrum({"help"});
  CHECK(overview.status == 0);
  CHECK(overview.out.find("compile") != std::string::npos);
}

TEST_CASE("ferrum compile: help for an unknown command exits 1", "[cli]") {
  const command_result result = run_ferrum({"help", "frobnicate"});
  CHECK(result.status == 1);
  CHECK(result.err.rfind("ferrum: error: usage_error: ", 0) == 0);
}

TEST_CASE("ferrum compile: each pool's memory class and each class's window, in --json and the table", "[cli]") {
  const command_result json_result = run_ferrum({"compile", "--json", example_plan("readback.json")});
  REQUIRE(json_result.status == 0);
  const nlohmann::json bucket = nlohmann::json::parse(json_result.out).at("buckets")[0];
  std::map<std::string, std::string> memory_of;
  for (const nlohmann::json& domain : bucket.at("domains"))
    memory_of[domain.at("pool").get<std::string>()] = domain.at("memory").get<std::string>();
  CHECK(memory_of == std::map<std::string, std::string>{
                         {"pool/bindings", "upload"}, {"pool/image", "readback"}, {"pool/state", "device"}});
  // The binding pool's 128 bytes at 0; the state's 4096 at 256, its
  // alignment; the image's 4096 after it.
  const nlohmann::json expected = nlohmann::json::parse(R"([
    {"class": "upload", "lane_offset": 0, "bytes": 128},
    {"class": "device", "lane_offset": 256, "bytes": 4096},
    {"class": "readback", "lane_offset": 4352, "bytes": 4096}])");
  CHECK(bucket.at("memory_classes") == expected);
  CHECK(bucket.at("lane_bytes") == 4352 + 4096);

  const command_result table = run_ferrum({"compile", example_plan("readback.json")});
  REQUIRE(table.status == 0);
  CHECK(table.out.find("  memory: upload 128 bytes at 0, device 4096 bytes at 256, readback 4096 bytes at 4352\n") !=
        std::string::npos);
}

TEST_CASE("ferrum compile: --json gives each bucket its images and the transitions compile() derives", "[cli]") {
  // mip_chain.json: transitions of mip levels and layers, with their range.
  const std::string name = GENERATE(as<std::string>{}, "images.json", "mip_chain.json");
  INFO(name);
  const cli_test::compiled_plan c = compile_in_process(example_plan(name));
  const command_result result = run_ferrum({"compile", example_plan(name), "--json"});
  REQUIRE(result.status == 0);
  const nlohmann::json doc = nlohmann::json::parse(result.out);
  REQUIRE(doc.at("buckets").size() == c.program.buckets.size());
  for (std::size_t b = 0; b < c.program.buckets.size(); ++b) {
    const ferrum::lane_recipe& lane = c.program.buckets[b].lane;
    const nlohmann::json& bucket = doc.at("buckets")[b];
    REQUIRE(bucket.at("images").size() == lane.images.size());
    for (std::size_t i = 0; i < lane.images.size(); ++i) {
      const nlohmann::json& image = bucket.at("images")[i];
      CHECK(image.at("resource") == lane.images[i].resource.str());
      CHECK(image.at("format") == ferrum::to_string(lane.images[i].image.format));
      CHECK(image.at("width") == lane.images[i].image.width);
      CHECK(image.at("height") == lane.images[i].image.height);
      CHECK(image.at("initial_layout") == ferrum::to_string(lane.images[i].initial));
      CHECK(image.at("imported") == false);
    }
    std::vector<std::string> listed, expected;
    for (const nlohmann::json& t : bucket.at("transitions"))
      listed.push_back(std::to_string(t.at("node").get<std::size_t>()) + " " + t.at("resource").get<std::string>() +
                       " " + t.at("range").get<std::string>() + " " + t.at("from").get<std::string>() + " " +
                       t.at("to").get<std::string>() + " " +
                       (t.at("after").is_null() ? "-" : t.at("after").get<std::string>()));
    for (std::size_t n = 0; n < c.plan.nodes.size(); ++n)
      for (const ferrum::image_transition& t : lane.node_transitions(n))
        expected.push_back(std::to_string(n) + " " + lane.images[t.image].resource.str() + " " +
                           ferrum::to_string(t.range) + " " + std::string(ferrum::to_string(t.from)) + " " +
                           std::string(ferrum::to_string(t.to)) + " " +
                           (t.after ? std::string(ferrum::to_string(*t.after)) : "-"));
    CHECK(listed == expected);
    CHECK_FALSE(expected.empty());
  }
  // A plan without images lists none.
  const nlohmann::json plain =
      nlohmann::json::parse(run_ferrum({"compile", example_plan("two_nodes.json"), "--json"}).out);
  CHECK(plain.at("buckets")[0].at("images").empty());
  CHECK(plain.at("buckets")[0].at("transitions").empty());
}

TEST_CASE("ferrum compile: deferred_frame.json, an engine's deferred frame, compiles with every image and transition",
          "[cli]") {
  const cli_test::compiled_plan c = compile_in_process(example_plan("deferred_frame.json"));
  const command_result result = run_ferrum({"compile", example_plan("deferred_frame.json"), "--json"});
  REQUIRE(result.status == 0);
  const nlohmann::json doc = nlohmann::json::parse(result.out);
  const nlohmann::json& bucket = doc.at("buckets").at(0);
  const ferrum::lane_recipe& lane = c.program.buckets[0].lane;
  REQUIRE(bucket.at("images").size() == lane.images.size());
  CHECK(bucket.at("transitions").size() == lane.transitions.size());
  // No lane makes the engine's image or the TAA history pair (the
  // scheduler's copies), and the previous names its current; the bloom
  // image is half the frame.
  for (const nlohmann::json& image : bucket.at("images")) {
    const std::string id = image.at("resource");
    CHECK(image.at("imported") == (id == "image/frame" || id == "image/taa" || id == "image/taa.previous"));
    if (id == "image/taa.previous") CHECK(image.at("history_of") == "image/taa");
    if (id == "image/bloom") CHECK((image.at("width") == 8 && image.at("height") == 4));
  }
}

TEST_CASE("ferrum compile: an imported image is listed as the engine's, starting in the layout the wave names",
          "[cli]") {
  const nlohmann::json doc = nlohmann::json::parse(run_ferrum({"compile", example_plan("present.json"), "--json"}).out);
  const nlohmann::json& bucket = doc.at("buckets")[0];
  REQUIRE(bucket.at("images").size() == 2);
  for (const nlohmann::json& image : bucket.at("images")) CHECK(image.at("imported") == true);
  // The engine's images take none of the lane's image memory.
  CHECK(bucket.at("image_bytes") == 0);
  const command_result table = run_ferrum({"compile", example_plan("present.json")});
  REQUIRE(table.status == 0);
  CHECK(table.out.find("    image/present  rgba8-unorm    16x8     1       1  invocation  the wave's (imported)\n") !=
        std::string::npos);
  CHECK(table.out.find("    node/present  image/present  whole  transfer-src  present-src   transfer-src\n") !=
        std::string::npos);
}

TEST_CASE("ferrum compile: the table lists each bucket's images and every transition", "[cli]") {
  const cli_test::compiled_plan c = compile_in_process(example_plan("images.json"));
  const command_result table = run_ferrum({"compile", example_plan("images.json")});
  REQUIRE(table.status == 0);
  const ferrum::lane_recipe& lane = c.program.buckets[0].lane;
  CHECK(table.out.find("  transitions: " + std::to_string(lane.transitions.size()) + " per wave") != std::string::npos);
  for (std::size_t n = 0; n < c.plan.nodes.size(); ++n)
    for (const ferrum::image_transition& t : lane.node_transitions(n)) {
      const std::string& node = c.plan.nodes[n].id.str();
      const std::string& image = lane.images[t.image].resource.str();
      // One row per transition: the node, the image, from, to.
      const std::size_t row = table.out.find("    " + node + " ");
      REQUIRE(row != std::string::npos);
      bool found = false;
      for (std::size_t at = row; at != std::string::npos && !found;
           at = table.out.find("\n    " + node + " ", at + 1)) {
        const std::string line = table.out.substr(at, table.out.find('\n', at + 1) - at);
        found = line.find(image) != std::string::npos &&
                line.find(std::string(ferrum::to_string(t.from))) != std::string::npos &&
                line.find(std::string(ferrum::to_string(t.to))) != std::string::npos;
      }
      CHECK(found);
    }
}

TEST_CASE("ferrum compile: images a fraction of the bucket's show it, and image memory aliased against unaliased",
          "[cli]") {
  // frame_chains.json: a bloom chain and an SSAO chain of bucket/2, /4 and /8
  // images, neither chain after the other (docs/plan-format.md, "Images").
  const cli_test::compiled_plan c = compile_in_process(example_plan("frame_chains.json"));
  const command_result result = run_ferrum({"compile", example_plan("frame_chains.json"), "--json"});
  REQUIRE(result.status == 0);
  const nlohmann::json doc = nlohmann::json::parse(result.out);
  REQUIRE(doc.at("buckets").size() == 2);
  for (std::size_t b = 0; b < 2; ++b) {
    const ferrum::compiled_bucket& bucket = c.program.buckets[b];
    const nlohmann::json& listed = doc.at("buckets")[b];
    // Per bucket, the image bytes a lane holds, and without aliasing, the sum
    // of every image's bytes.
    CHECK(listed.at("image_bytes") == bucket.image_window.size);
    CHECK(listed.at("unaliased_image_bytes") == bucket.unaliased_image_bytes);
    std::uint64_t sum = 0;
    for (const ferrum::projection& x : bucket.capacity_layouts[0].projections) sum += x.capacity;
    CHECK(listed.at("unaliased_image_bytes") == sum);
    CHECK(listed.at("image_bytes").get<std::uint64_t>() < sum);
    for (std::size_t i = 0; i < bucket.lane.images.size(); ++i) {
      const ferrum::lane_image& image = bucket.lane.images[i];
      const auto& r = *std::find_if(c.plan.resources.begin(), c.plan.resources.end(),
                                    [&](const ferrum::resource_descriptor& x) { return x.id == image.resource; });
      CHECK(listed.at("images")[i].at("extent") == ferrum::extent_text(*r.image));
    }
  }
  const nlohmann::json& half = doc.at("buckets")[1].at("images")[3];
  CHECK(half.at("resource") == "image/bloom.half");
  CHECK(half.at("extent") == "bucket/2");
  CHECK(half.at("width") == 167);  // 333 / 2, rounded up
  CHECK(half.at("height") == 94);
  CHECK(doc.at("buckets")[0].at("image_bytes") == 842240);
  CHECK(doc.at("buckets")[0].at("unaliased_image_bytes") == 1195200);

  const command_result table = run_ferrum({"compile", example_plan("frame_chains.json")});
  REQUIRE(table.status == 0);
  CHECK(table.out.find("  images: 842240 bytes of texels (1195200 unaliased)") != std::string::npos);
  CHECK(table.out.find("    image/bloom.quarter  rgba16-float   80x45 (bucket/4)     2       1  invocation") !=
        std::string::npos);
  CHECK(table.out.find("    image/scene.color    rgba16-float            320x180     1") != std::string::npos);
}

TEST_CASE("ferrum compile: taa_history.json shows its history pool, each lifetime and the previous's current",
          "[cli][history]") {
  const command_result table = run_ferrum({"compile", example_plan("taa_history.json")});
  REQUIRE(table.status == 0);
  CHECK(table.out.find("  pool/history  history  conservative") != std::string::npos);
  CHECK(table.out.find("    image/taa           rgba16-float  320x180     1       1  history               the "
                       "wave's (history)") != std::string::npos);
  CHECK(table.out.find("    image/taa.previous  rgba16-float  320x180     1       1  history of image/taa  the "
                       "wave's (history)") != std::string::npos);
  const command_result json = run_ferrum({"compile", example_plan("taa_history.json"), "--json"});
  REQUIRE(json.status == 0);
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  const nlohmann::json& images = doc.at("buckets")[0].at("images");
  CHECK(images[0].at("lifetime") == "history");
  CHECK_FALSE(images[0].contains("history_of"));
  CHECK(images[1].at("history_of") == "image/taa");
}

namespace {

// culling_plans::cull_chain, edited by `edit`, as text.
std::string culling_chain(const std::function<void(nlohmann::json&)>& edit = {}) {
  nlohmann::json doc = culling_plans::cull_chain();
  if (edit) edit(doc);
  return doc.dump();
}

}  // namespace

TEST_CASE("ferrum compile: the culled nodes and why, in the table and in --json", "[cli][culling]") {
  const std::string culled_line =
      "culled    3 nodes \u2014 node/a (writes resource/x, which nothing live reads), node/b (writes resource/y, "
      "which nothing live reads), node/c (writes resource/z, which nothing live reads)\n";
  const command_result table = compile_plan_text(culling_chain());
  REQUIRE(table.status == 0);
  CHECK(table.out.find("bytes\n" + culled_line + "\nbucket ") != std::string::npos);
  const command_result json = compile_plan_text(culling_chain(), {"--json"});
  REQUIRE(json.status == 0);
  const nlohmann::json culled = nlohmann::json::parse(json.out).at("culled");
  REQUIRE(culled.size() == 3);
  CHECK(culled[1].at("node") == "node/b");
  CHECK(culled[1].at("index") == 1);
  CHECK(culled[1].at("reason") == "writes resource/y, which nothing live reads");
  CHECK(culled[1].at("writes") == nlohmann::json{"resource/y"});

  // resource/z kept: c live, b and a, whose writes c and b read: no line, an
  // empty array.
  const auto kept = [](nlohmann::json& doc) { doc["resources"][2]["kept"] = true; };
  const command_result none = compile_plan_text(culling_chain(kept));
  REQUIRE(none.status == 0);
  CHECK(none.out.find("culled") == std::string::npos);
  CHECK(nlohmann::json::parse(compile_plan_text(culling_chain(kept), {"--json"}).out).at("culled").empty());
  // Culling turned off: the table says so.
  const command_result off = compile_plan_text(culling_chain([](nlohmann::json& doc) { doc["cull"] = false; }));
  REQUIRE(off.status == 0);
  CHECK(off.out.find("culled    none (the plan sets \"cull\": false)\n") != std::string::npos);
  // `kept` must be a boolean.
  check_rejected(compile_plan_text(culling_chain([](nlohmann::json& doc) { doc["resources"][0]["kept"] = 1; })),
                 "wrong_type", "/resources/0/kept");
}

TEST_CASE("ferrum compile: split barriers on one queue get a line per event and a JSON member", "[cli][split]") {
  const std::string text = split_plan_json(2);
  const command_result table = compile_plan_text(text);
  INFO(table.out << table.err);
  REQUIRE(table.status == 0);
  CHECK(table.out.find("\n  barriers: 1 per wave, before node/3\n") != std::string::npos);
  CHECK(table.out.find("\n  split barriers on one queue: 0 barriers and 1 events per wave\n") != std::string::npos);
  const std::string scope = "compute-shader|transfer storage-write|transfer-write";
  CHECK(table.out.find("\n    event after node/0, waited for before node/3: waits for " + scope +
                       "; blocks compute-shader|transfer storage-read|transfer-read\n") != std::string::npos);
  const command_result json = compile_plan_text(text, {"--json"});
  REQUIRE(json.status == 0);
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(json.out);
  const nlohmann::ordered_json& split = doc["buckets"][0]["barriers"]["split"];
  CHECK(split.at("per_wave") == 0);
  CHECK(split.at("events_per_wave") == 1);
  CHECK(split.at("before_nodes").empty());
  REQUIRE(split.at("events").size() == 1);
  const nlohmann::ordered_json& event = split.at("events")[0];
  CHECK(event.at("set_after") == 0);
  CHECK(event.at("waited_before") == nlohmann::json::array({3}));
  CHECK(event.at("waits_for") == "compute-shader|transfer");
  CHECK(event.at("flushes") == "storage-write|transfer-write");
  CHECK(event.at("blocks") == "compute-shader|transfer");
  CHECK(event.at("makes_visible") == "storage-read|transfer-read");
  // One node closer: a barrier, no event line.
  const command_result adjacent = compile_plan_text(split_plan_json(0));
  REQUIRE(adjacent.status == 0);
  CHECK(adjacent.out.find("split barriers") == std::string::npos);
}
