// End-to-end tests of `ferrum run`: each runs the built binary and checks its
// exit status, its ferrum.run.v1 report and its errors against
// docs/interfaces.md ("The ferrum command", "ferrum.run.v1"). Wave counts
// stay small: the suite also runs under the sanitizers.
#include "compiled_plan.hpp"
#include "ferrum_process.hpp"
#include "run_report_checks.hpp"
#include "sanitized.hpp"

#include "ferrum/gpu/null_device.hpp"

#include "ferrum/sync_scope.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

using cli_test::check_healthy;
using cli_test::check_report;
using cli_test::command_result;
using cli_test::compiled_json;
using cli_test::example_plan;
using cli_test::json_run;
using cli_test::run_ferrum;
using cli_test::run_json;
using cli_test::seed_with_first;
using cli_test::u64;
using cli_test::vulkan_run_json;

namespace {

// Waves per plan in the runs over every example plan and the Vulkan run with
// faults: fewer under the sanitizers, where each costs ten times as much
// (tests/support/sanitized.hpp).
constexpr std::uint64_t example_waves = test_support::sanitized ? 12 : 30;
// Waves per plan of the Vulkan runs whose every wave completes.
constexpr std::uint64_t vulkan_waves = test_support::sanitized ? 6 : 12;

// A usage error: exit 1, one stderr line naming usage_error, nothing on stdout.
void check_usage_error(const std::vector<std::string>& args, std::string_view fragment) {
  const command_result r = run_ferrum(args);
  INFO("stderr: " << r.err);
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(cli_test::one_line(r.err));
  CHECK(cli_test::starts_with(r.err, "ferrum: error: usage_error: "));
  CHECK(r.err.find(fragment) != std::string::npos);
}

}  // namespace

TEST_CASE("ferrum run: a healthy run on the null device completes every wave without violations", "[cli]") {
  const json_run run = run_json(example_plan("multi_bucket.json"), {"--waves", "60"});
  check_healthy(run, 60);
  const nlohmann::ordered_json& r = run.report;
  CHECK(u64(r["waves"]["completed"]) == 60);
  CHECK(u64(r["faults"]["injected"]) == 0);
  CHECK(u64(r["lanes"]["per_bucket"]) == 3);
  CHECK(u64(r["lanes"]["quarantined"]) == 0);
  // Three buckets of three lanes: never more than nine waves hold a lane.
  CHECK(u64(r["lanes"]["max_in_flight"]) <= 9);
  CHECK(r["latency_us"]["wave_p50"].get<double>() > 0.0);
  // The null device stamps each submission's end: the wake is measured.
  CHECK(r["latency_us"]["fence_wake_p50"].get<double>() > 0.0);
}

TEST_CASE("ferrum run: the report's plan_hash is the one ferrum compile prints", "[cli]") {
  const json_run run = run_json(example_plan("two_nodes.json"), {"--waves", "5"});
  CHECK(run.report["plan_hash"] == compiled_json(example_plan("two_nodes.json"))["plan_hash"]);
}

TEST_CASE("ferrum run: without --json the summary names the device, the waves and the violations", "[cli]") {
  const command_result r = run_ferrum({"run", example_plan("two_nodes.json"), "--waves", "20", "--threads", "1"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.status == 0);
  // stderr is not a terminal here: no progress bar, nothing at all.
  CHECK(r.err.empty());
  CHECK(r.out.find("on null (null)") != std::string::npos);
  CHECK(r.out.find("20 requested: 20 completed, 0 failed, 0 cancelled") != std::string::npos);
  CHECK(r.out.find("violations   0") != std::string::npos);
  CHECK(r.out.find("0 injected, 0 surfaced") != std::string::npos);
}

TEST_CASE("ferrum run: delay faults surface without failing a wave", "[cli]") {
  const json_run run = run_json(example_plan("multi_bucket.json"), {"--waves", "40", "--fault", "delay:0.5"});
  check_healthy(run, 40);
  CHECK(u64(run.report["waves"]["completed"]) == 40);
  CHECK(u64(run.report["faults"]["injected"]) > 0);
}

TEST_CASE("ferrum run: each encoder fault fails exactly its wave with encoder_failed", "[cli]") {
  const json_run run = run_json(example_plan("multi_bucket.json"), {"--waves", "40", "--fault", "encoder:0.3"});
  check_healthy(run, 40);
  CHECK(u64(run.report["faults"]["injected"]) > 0);
  CHECK(u64(run.report["waves"]["failed"]) == u64(run.report["faults"]["injected"]));
  CHECK(u64(run.report["waves"]["cancelled"]) == 0);
}

TEST_CASE("ferrum run: each cancel fault cancels exactly its wave", "[cli]") {
  const json_run run = run_json(example_plan("multi_bucket.json"), {"--waves", "40", "--fault", "cancel:0.4"});
  check_healthy(run, 40);
  CHECK(u64(run.report["faults"]["injected"]) > 0);
  CHECK(u64(run.report["waves"]["cancelled"]) == u64(run.report["faults"]["injected"]));
  CHECK(u64(run.report["waves"]["failed"]) == 0);
}

TEST_CASE("ferrum run: the summary names cancelled waves operation_aborted as it names every code", "[cli]") {
  const command_result r = run_ferrum(
      {"run", example_plan("multi_bucket.json"), "--waves", "40", "--fault", "cancel:0.4", "--threads", "1"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.status == 0);
  CHECK(r.out.find("not completed operation_aborted ") != std::string::npos);
  CHECK(r.out.find("system:") == std::string::npos);
}

TEST_CASE("ferrum run: the same seed injects the same faults", "[cli]") {
  const std::vector<std::string> args{"--waves", "30", "--fault", "delay:0.2,encoder:0.2,cancel:0.2", "--seed", "7"};
  const json_run first = run_json(example_plan("two_nodes.json"), args);
  const json_run second = run_json(example_plan("two_nodes.json"), args);
  check_healthy(first, 30);
  check_healthy(second, 30);
  CHECK(first.report["faults"] == second.report["faults"]);
  CHECK(first.report["waves"] == second.report["waves"]);
}

TEST_CASE("ferrum run: a lost device fails the later waves and the loss surfaces", "[cli]") {
  const std::uint64_t seed = seed_with_first(ferrum::gpu::fault_kind::lost, 0.05, 40);
  const json_run run = run_json(example_plan("multi_bucket.json"),
                                {"--waves", "40", "--fault", "lost:0.05", "--seed", std::to_string(seed)});
  check_healthy(run, 40);
  CHECK(u64(run.report["faults"]["injected"]) == 1);
  CHECK(u64(run.report["waves"]["failed"]) >= 37);
  // The lanes that had work on the lost device stay out of service.
  CHECK(u64(run.report["lanes"]["quarantined"]) >= 1);
}

TEST_CASE("ferrum run: a hang times out its wave, stalls those behind it, and the lanes come back", "[cli]") {
  const std::uint64_t seed = seed_with_first(ferrum::gpu::fault_kind::hang, 0.05, 30);
  const json_run run = run_json(example_plan("two_nodes.json"), {"--waves", "30", "--fault", "hang:0.05", "--seed",
                                                                 std::to_string(seed), "--fence-timeout", "250"});
  check_healthy(run, 30);
  CHECK(u64(run.report["faults"]["injected"]) == 1);
  CHECK(u64(run.report["waves"]["failed"]) >= 1);
  // The hang ended (five fence timeouts) before the run did.
  CHECK(u64(run.report["lanes"]["quarantined"]) == 0);
}

TEST_CASE("ferrum run: every fault kind at once surfaces as injected", "[cli]") {
  // A seed whose device faults include a loss halfway through and no hang
  // before it, so that delays, encoder faults and cancellations all happen
  // first (a hang would fail nearly every later wave with
  // all_lanes_quarantined; the hang test covers that).
  ferrum::gpu::null_fault_options device{.seed = 0, .lost = 0.01, .hang = 0.01, .delay = 0.1};
  std::optional<std::uint64_t> seed;
  for (std::uint64_t candidate = 1; candidate < 100000 && !seed; ++candidate) {
    device.seed = candidate;
    std::uint64_t first_lost = 0;
    bool hang = false;
    for (std::uint64_t v = 1; v <= 60 && first_lost == 0; ++v) {
      const auto f = ferrum::gpu::decide_fault(device, v);
      if (f && f->kind == ferrum::gpu::fault_kind::lost) first_lost = v;
      hang = hang || (f && f->kind == ferrum::gpu::fault_kind::hang);
    }
    if (!hang && first_lost >= 20 && first_lost <= 35) seed = candidate;
  }
  REQUIRE(seed);
  const json_run run = run_json(example_plan("multi_bucket.json"),
                                {"--waves", "60", "--fault", "delay:0.1,hang:0.01,lost:0.01,encoder:0.05,cancel:0.05",
                                 "--seed", std::to_string(*seed)});
  check_healthy(run, 60);
  // The loss, and some of the others before it.
  CHECK(u64(run.report["faults"]["injected"]) >= 2);
  CHECK(u64(run.report["waves"]["failed"]) >= 60 - 35);
}

TEST_CASE("ferrum run: a stale slot is counted as violations and fails the run with exit 3", "[cli]") {
  // The checks' self-test: wave 3's first slot (in node order) gets wave 2's
  // pattern; each of its words must be one violation.
  const json_run run =
      run_json(example_plan("multi_bucket.json"), {"--waves", "12"}, {{"FERRUM_RUN_CORRUPT_WAVE", "3"}});
  INFO("stderr: " << run.result.err);
  CHECK(run.result.status == 3);
  check_report(run.report, 12, "null");
  const nlohmann::ordered_json buckets = compiled_json(example_plan("multi_bucket.json"))["buckets"];
  // Waves go to the buckets in turn: wave 3 runs in the third.
  const nlohmann::ordered_json& slots = buckets.at((3 - 1) % buckets.size())["program_binding"]["slots"];
  std::uint64_t first_slot_words = 0;
  for (const auto& slot : slots)
    if (slot["node_index"] == 0) first_slot_words = u64(slot["capacity"]) / 4;
  CHECK(first_slot_words > 0);
  CHECK(u64(run.report["violations"]) == first_slot_words);
  CHECK(u64(run.report["waves"]["completed"]) == 12);
  CHECK(cli_test::one_line(run.result.err));
  CHECK(cli_test::starts_with(run.result.err, "ferrum: error: run_failed: "));
  CHECK(run.result.err.find("violations") != std::string::npos);
}

TEST_CASE("ferrum run: workspace resources are checked, and memory is reported as ferrum compile lays it out",
          "[cli]") {
  for (const char* name : {"interval_liveness.json", "history.json", "two_queues.json"}) {
    INFO(name);
    const json_run run = run_json(example_plan(name), {"--waves", "12"});
    check_healthy(run, 12);
    CHECK(u64(run.report["waves"]["completed"]) == 12);
    const nlohmann::ordered_json buckets = compiled_json(example_plan(name))["buckets"];
    const nlohmann::ordered_json& memory = run.report["memory"];
    REQUIRE(memory.size() == buckets.size());
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      CHECK(memory[b]["bucket"] == buckets[b]["id"]);
      CHECK(memory[b]["lane_bytes"] == buckets[b]["lane_bytes"]);
      CHECK(memory[b]["unaliased_lane_bytes"] == buckets[b]["unaliased_lane_bytes"]);
      REQUIRE(memory[b]["pools"].size() == buckets[b]["domains"].size());
      for (std::size_t d = 0; d < buckets[b]["domains"].size(); ++d) {
        CHECK(memory[b]["pools"][d]["pool"] == buckets[b]["domains"][d]["pool"]);
        CHECK(memory[b]["pools"][d]["offset"] == buckets[b]["domains"][d]["lane_offset"]);
        CHECK(memory[b]["pools"][d]["bytes"] == buckets[b]["domains"][d]["physical_size_bytes"]);
      }
      // Aliasing saves bytes in every plan.
      CHECK(u64(memory[b]["lane_bytes"]) < u64(memory[b]["unaliased_lane_bytes"]));
    }
  }
  // Every resource listing is checked: 14 in interval_liveness's six nodes.
  const json_run run = run_json(example_plan("interval_liveness.json"), {"--waves", "2"});
  CHECK(u64(run.report["memory"][0]["resources_checked_per_wave"]) == 14);
}

TEST_CASE(
    "ferrum run: each bucket's barriers and their scopes are the ones compile() derives, in the report and the "
    "summary",
    "[cli]") {
  for (const char* name : {"history.json", "two_queues_access.json"}) {
    INFO(name);
    const cli_test::compiled_plan c = cli_test::compile_in_process(example_plan(name));
    const json_run run = run_json(example_plan(name), {"--waves", "4"});
    check_healthy(run, 4);
    const nlohmann::ordered_json& memory = run.report["memory"];
    REQUIRE(memory.size() == c.program.buckets.size());
    const command_result summary = run_ferrum({"run", example_plan(name), "--waves", "4"});
    REQUIRE(summary.status == 0);
    INFO(summary.out);
    for (std::size_t b = 0; b < memory.size(); ++b) {
      const ferrum::compiled_bucket& bucket = c.program.buckets[b];
      CHECK(memory[b]["bucket"] == bucket.id.str());
      CHECK(u64(memory[b]["barriers_per_wave"]) == bucket.lane.barriers_per_wave());
      // On the bucket's memory line, before its lanes.
      const std::size_t line = summary.out.find("\n  memory       " + bucket.id.str() + ": ");
      REQUIRE(line != std::string::npos);
      const std::size_t end = summary.out.find('\n', line + 1);
      const std::string expected = ", " + std::to_string(bucket.lane.barriers_per_wave()) + " barriers per wave; ";
      CHECK(summary.out.substr(line, end - line).find(expected) != std::string::npos);
      // Each barrier, with its scope, in the report and under that line.
      const nlohmann::ordered_json& barriers = memory[b]["barriers"];
      REQUIRE(barriers.size() == bucket.lane.barriers_per_wave());
      std::size_t i = 0;
      for (std::size_t n = 0; n < c.plan.nodes.size(); ++n) {
        if (!bucket.lane.barrier_before[n]) continue;
        const ferrum::barrier_scope& scope = bucket.lane.barrier_scopes[n];
        CHECK(barriers[i]["node"] == c.plan.nodes[n].id.str());
        CHECK(barriers[i]["waits_for"] == ferrum::stage_mask_names(scope.before.stages));
        CHECK(barriers[i]["flushes"] == ferrum::access_mask_names(scope.before.accesses));
        CHECK(barriers[i]["blocks"] == ferrum::stage_mask_names(scope.after.stages));
        CHECK(barriers[i]["makes_visible"] == ferrum::access_mask_names(scope.after.accesses));
        ++i;
        CHECK(summary.out.find("\n    barrier before " + c.plan.nodes[n].id.str() + ": waits for " +
                                   ferrum::scope_text(scope.before) + "; blocks " + ferrum::scope_text(scope.after) +
                                   "\n",
                               end) != std::string::npos);
      }
    }
  }
}

TEST_CASE("ferrum run: persistent resources keep their lane's last submitted wave through every fault kind", "[cli]") {
  // A hang times waves out and quarantines lanes, encoder faults and
  // cancellations leave lanes unsubmitted: each persistent first use still
  // finds what the lane's last submitted wave wrote.
  const std::uint64_t seed = seed_with_first(ferrum::gpu::fault_kind::hang, 0.05, 40);
  const json_run run =
      run_json(example_plan("history.json"), {"--waves", "40", "--fault", "hang:0.05,encoder:0.1,cancel:0.1",
                                              "--fence-timeout", "250", "--seed", std::to_string(seed)});
  check_healthy(run, 40);
  CHECK(u64(run.report["waves"]["failed"]) >= 1);
  CHECK(u64(run.report["lanes"]["quarantined"]) == 0);
}

TEST_CASE("ferrum run: the summary has a memory line per bucket", "[cli]") {
  const command_result r = run_ferrum({"run", example_plan("history.json"), "--waves", "4"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.status == 0);
  CHECK(r.out.find("memory       frame@1x1x1: 49408 bytes per lane (pool/bindings 256, pool/history 16384, "
                   "pool/transient 32768; 65792 unaliased), 12 resources checked per wave") != std::string::npos);
}

TEST_CASE("ferrum run: a workspace resource written inside its interval is counted as violations", "[cli]") {
  // The checks' self-test: in wave 3, the first workspace resource that a
  // later node uses (interval_liveness: resource/scratch.decode, used by
  // node/load and node/conv.0) gets wave 2's pattern. Its own check and its
  // next user's each count every word.
  const json_run run =
      run_json(example_plan("interval_liveness.json"), {"--waves", "6"}, {{"FERRUM_RUN_CORRUPT_WORKSPACE_WAVE", "3"}});
  INFO("stderr: " << run.result.err);
  CHECK(run.result.status == 3);
  check_report(run.report, 6, "null");
  const nlohmann::ordered_json buckets = compiled_json(example_plan("interval_liveness.json"))["buckets"];
  // Waves go to the buckets in turn: wave 3 runs in the first of two.
  std::uint64_t words = 0;
  for (const auto& domain : buckets.at((3 - 1) % buckets.size())["domains"])
    for (const auto& projection : domain["projections"])
      if (projection["resource"] == "resource/scratch.decode") words = u64(projection["capacity"]) / 4;
  REQUIRE(words > 0);
  CHECK(u64(run.report["violations"]) == 2 * words);
}

TEST_CASE("ferrum run: a rejected plan exits 2 with the error line of compile", "[cli]") {
  nlohmann::json plan = nlohmann::json::parse(cli_test::read_file(example_plan("two_nodes.json")));
  plan["resources"][0]["alignment"] = 3;
  const cli_test::temp_file file(plan.dump());
  const command_result r = run_ferrum({"run", file.path()});
  INFO("stderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(cli_test::one_line(r.err));
  CHECK(cli_test::starts_with(r.err, "ferrum: error: invalid_alignment: "));

  const command_result json = run_ferrum({"run", file.path(), "--json"});
  CHECK(json.status == 2);
  REQUIRE(nlohmann::json::accept(json.out));
  CHECK(nlohmann::json::parse(json.out)["error"]["code"] == "invalid_alignment");
}

TEST_CASE("ferrum run: a plan without binding nodes runs, its nodes without slots", "[cli]") {
  const cli_test::temp_file file(cli_test::workspace_only_plan);
  check_healthy(run_json(file.path(), {"--waves", "3"}), 3);
}

TEST_CASE("ferrum run: a missing plan file exits 1 with io_error", "[cli]") {
  const command_result r = run_ferrum({"run", "/nonexistent/ferrum/plan.json"});
  CHECK(r.status == 1);
  CHECK(cli_test::one_line(r.err));
  CHECK(cli_test::starts_with(r.err, "ferrum: error: io_error: "));
}

TEST_CASE("ferrum run: --trace and --timeline write every wave's spans as a Chrome trace and an SVG", "[cli]") {
  const cli_test::temp_file trace_file("");
  const cli_test::temp_file timeline_file("");
  const json_run run = run_json(example_plan("multi_bucket.json"),
                                {"--waves", "30", "--trace", trace_file.path(), "--timeline", timeline_file.path()});
  CHECK(run.result.status == 0);
  const auto& reported = run.report["trace"];
  CHECK(reported["chrome"] == trace_file.path());
  CHECK(reported["timeline"] == timeline_file.path());
  CHECK(reported["dropped"] == 0);

  const std::string text = cli_test::read_file(trace_file.path());
  REQUIRE(nlohmann::json::accept(text));
  const auto trace = nlohmann::json::parse(text);
  std::map<std::string, std::uint64_t> names;
  std::uint64_t spans = 0;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    ++spans;
    ++names[e.at("args").contains("node") ? "encode <node>" : e.at("name").get<std::string>()];
  }
  for (const char* phase : {"acquire", "bind", "encode", "submit", "fence", "release"}) CHECK(names[phase] == 30);
  // multi_bucket.json: eight nodes.
  CHECK(names["encode <node>"] == 30 * 8);
  CHECK(u64(reported["spans"]) == spans);

  const std::string svg = cli_test::read_file(timeline_file.path());
  CHECK(cli_test::starts_with(svg, "<svg "));
  CHECK(svg.find(" lane 0</text>") != std::string::npos);
  CHECK(svg.find("</svg>") != std::string::npos);
}

TEST_CASE("ferrum run: --gpu-timestamps reports GPU time per wave, a summary line and the trace's GPU track", "[cli]") {
  const cli_test::temp_file trace_file("");
  const json_run run =
      run_json(example_plan("multi_bucket.json"), {"--waves", "20", "--gpu-timestamps", "--trace", trace_file.path()});
  CHECK(run.result.status == 0);
  INFO(run.report.dump(2));
  // After latency_us, only with the option.
  std::vector<std::string> keys;
  for (const auto& item : run.report.items()) keys.push_back(item.key());
  const auto latency_at = std::find(keys.begin(), keys.end(), "latency_us");
  REQUIRE(latency_at + 1 < keys.end());
  CHECK(*(latency_at + 1) == "gpu_us");
  const auto& gpu = run.report["gpu_us"];
  CHECK(gpu["p50"].get<double>() > 0);
  CHECK(gpu["p50"].get<double>() <= gpu["p99"].get<double>());
  // Each wave's GPU time is part of its own time.
  CHECK(gpu["p50"].get<double>() <= run.report["latency_us"]["wave_p99"].get<double>());

  const auto trace = nlohmann::json::parse(cli_test::read_file(trace_file.path()));
  std::uint64_t gpu_spans = 0;
  for (const auto& e : trace.at("traceEvents"))
    if (e.at("ph") == "X" && e.at("cat") == "gpu") ++gpu_spans;
  CHECK(gpu_spans == 20 * 8);  // multi_bucket.json: eight nodes
  CHECK(run.report["trace"]["dropped"] == 0);

  const json_run without = run_json(example_plan("two_nodes.json"), {"--waves", "5"});
  CHECK_FALSE(without.report.contains("gpu_us"));
  const command_result summary =
      run_ferrum({"run", example_plan("two_nodes.json"), "--waves", "5", "--gpu-timestamps"});
  CHECK(summary.status == 0);
  CHECK(summary.out.find("\n  gpu          p50 ") != std::string::npos);
}

TEST_CASE("ferrum run: --gpu-timestamps reports each bucket's critical path and what a second queue could save",
          "[cli]") {
  // two_queues_access.json: node/upload -> node/simulate, then node/readback
  // (transfer) beside node/shade, both before node/compose; each node's
  // `after` names the nodes whose bytes it needs.
  const json_run run = run_json(example_plan("two_queues_access.json"), {"--waves", "6", "--gpu-timestamps"});
  CHECK(run.result.status == 0);
  INFO(run.report.dump(2));
  const auto plan = nlohmann::json::parse(cli_test::read_file(example_plan("two_queues_access.json")));
  std::map<std::string, std::vector<std::string>> after;
  for (const auto& node : plan.at("nodes")) after[node.at("id")] = node.value("after", std::vector<std::string>{});
  const auto& buckets = run.report.at("gpu_us").at("buckets");
  REQUIRE(buckets.is_array());
  CHECK(!buckets.empty());
  std::uint64_t waves = 0;
  for (const auto& b : buckets) {
    waves += u64(b.at("waves"));
    const double serial = b.at("serial_us").get<double>();
    const double path = b.at("critical_path_us").get<double>();
    CHECK(serial > 0);
    CHECK(path > 0);
    CHECK(path <= serial);
    // serial - max(path, serial / 2), in whole nanoseconds.
    const double half = std::ceil(std::round(serial * 1000) / 2) / 1000;
    CHECK(b.at("async_bound_us").get<double>() == Approx(serial - std::max(path, half)).margin(1e-6));
    // The path's nodes follow one another in the graph, from the first node
    // to the last, which waits for both branches.
    const auto nodes = b.at("critical_path").get<std::vector<std::string>>();
    REQUIRE(!nodes.empty());
    CHECK(nodes.size() == 4);
    CHECK(nodes.front() == "node/upload");
    CHECK(nodes.back() == "node/compose");
    for (std::size_t k = 1; k < nodes.size(); ++k) {
      const std::vector<std::string>& before = after.at(nodes[k]);
      CHECK(std::find(before.begin(), before.end(), nodes[k - 1]) != before.end());
    }
  }
  CHECK(waves == u64(run.report.at("waves").at("completed")));

  const command_result summary =
      run_ferrum({"run", example_plan("two_queues_access.json"), "--waves", "4", "--gpu-timestamps"});
  CHECK(summary.status == 0);
  INFO(summary.out);
  const std::size_t line = summary.out.find("\n  gpu path     frame@");
  REQUIRE(line != std::string::npos);
  const std::string text = summary.out.substr(line + 1, summary.out.find('\n', line + 1) - line - 1);
  CHECK(text.find(": critical path ") != std::string::npos);
  CHECK(text.find(" us serial (nodes node/upload -> node/simulate -> ") != std::string::npos);
  CHECK(text.find(" -> node/compose); a second queue could save at most ") != std::string::npos);
  CHECK(text.back() == ')');
  // Without the option, no line.
  const command_result untimed = run_ferrum({"run", example_plan("two_queues_access.json"), "--waves", "2"});
  CHECK(untimed.out.find("gpu path") == std::string::npos);
}

TEST_CASE("ferrum run: a --trace or --timeline file that cannot be written exits 1 before any wave", "[cli]") {
  for (const char* option : {"--trace", "--timeline"}) {
    const command_result r =
        run_ferrum({"run", example_plan("two_nodes.json"), option, "/nonexistent/ferrum/trace.out"});
    CHECK(r.status == 1);
    CHECK(cli_test::one_line(r.err));
    CHECK(r.err == "ferrum: error: io_error: cannot write '/nonexistent/ferrum/trace.out'\n");
    CHECK(r.out.empty());
  }
}

TEST_CASE("ferrum run: malformed fault specs are usage errors", "[cli]") {
  const std::string plan = example_plan("two_nodes.json");
  check_usage_error({"run", plan, "--fault", "boom:0.1"}, "unknown fault kind 'boom'");
  check_usage_error({"run", plan, "--fault", "delay:1.5"}, "[0, 1]");
  check_usage_error({"run", plan, "--fault", "delay:-0.1"}, "'delay:-0.1'");
  check_usage_error({"run", plan, "--fault", "hang:nan"}, "[0, 1]");
  check_usage_error({"run", plan, "--fault", "lost:0.1x"}, "decimal number");
  check_usage_error({"run", plan, "--fault", "delay"}, "not kind:probability");
  check_usage_error({"run", plan, "--fault", "delay:0.1,"}, "not kind:probability");
  check_usage_error({"run", plan, "--fault", "encoder:0.1,encoder:0.2"}, "given twice");
  check_usage_error({"run", plan, "--fault", ""}, "--fault");
}

TEST_CASE("ferrum run: bad devices, wave counts, threads and timeouts are usage errors", "[cli]") {
  const std::string plan = example_plan("two_nodes.json");
  check_usage_error({"run", plan, "--device", "metal"}, "unknown device 'metal'");
  check_usage_error({"run", plan, "--waves", "0"}, "--waves");
  check_usage_error({"run", plan, "--waves", "-3"}, "--waves");
  check_usage_error({"run", plan, "--waves", "many"}, "--waves");
  check_usage_error({"run", plan, "--threads", "0"}, "--threads");
  check_usage_error({"run", plan, "--fence-timeout", "0"}, "--fence-timeout");
  check_usage_error({"run", plan, "--bogus"}, "--bogus");
  check_usage_error({"run"}, "PLAN");
  // Checked before any device is made: the same without a Vulkan driver.
  check_usage_error({"run", plan, "--device", "vulkan", "--fault", "hang:0.1"}, "--device null");
  check_usage_error({"run", plan, "--discrete-layout", "--fault", "lost:0.1"}, "staging submissions");
}

TEST_CASE("ferrum run: --json carries usage errors found after parsing as an error object", "[cli]") {
  const command_result r = run_ferrum({"run", example_plan("two_nodes.json"), "--json", "--fault", "boom:1"});
  CHECK(r.status == 1);
  REQUIRE(nlohmann::json::accept(r.out));
  CHECK(nlohmann::json::parse(r.out)["error"]["code"] == "usage_error");
}

TEST_CASE("ferrum run: help run describes the options and the fault kinds", "[cli]") {
  const command_result r = run_ferrum({"help", "run"});
  CHECK(r.status == 0);
  for (const char* word : {"--device", "--waves", "--threads", "--seed", "--fault", "--fence-timeout", "--trace",
                           "--timeline", "--gpu-timestamps", "--reorder", "--discrete-layout", "--json", "delay",
                           "hang", "lost", "encoder", "cancel", "Exit status"})
    CHECK(r.out.find(word) != std::string::npos);
  CHECK(r.out.find("--program FILE") != std::string::npos);
  // --discrete-layout refuses device faults (run_options.cpp), and says so.
  CHECK(r.out.find("Device faults (delay, hang, lost) are refused with it.") != std::string::npos);
}

TEST_CASE("ferrum run: --device vulkan runs the checking encoders on the GPU", "[cli][vulkan]") {
  // lavapipe shares the CPU with the other tests: a long fence timeout, so
  // that only injected faults fail waves.
  const auto run = vulkan_run_json(example_plan("multi_bucket.json"),
                                   {"--waves", std::to_string(example_waves), "--fault", "encoder:0.1,cancel:0.1",
                                    "--fence-timeout", cli_test::vulkan_fence_timeout_ms});
  if (!run) return;
  const nlohmann::ordered_json& report = *run;
  check_report(report, example_waves, "vulkan");
  CHECK(u64(report["violations"]) == 0);
  CHECK(u64(report["faults"]["surfaced"]) == u64(report["faults"]["injected"]));
  CHECK(u64(report["waves"]["completed"]) > 0);
  // Vulkan runs no host functions: the fence wake is not measured.
  CHECK(report["latency_us"]["fence_wake_p50"].get<double>() == 0.0);
}

TEST_CASE("ferrum run: on Vulkan, workspace and persistent resources hold what the layout says", "[cli][vulkan]") {
  // Under a sanitizer one plan (a lavapipe process costs ASan about 8 s of
  // CPU; the vulkan tests check these paths there).
  const std::vector<const char*> plans =
      test_support::sanitized ? std::vector<const char*>{"history.json"}
                              : std::vector<const char*>{"interval_liveness.json", "history.json", "two_queues.json"};
  for (const char* name : plans) {
    INFO(name);
    const auto run = vulkan_run_json(example_plan(name), {"--waves", std::to_string(vulkan_waves), "--fence-timeout",
                                                          cli_test::vulkan_fence_timeout_ms});
    if (!run) return;
    const nlohmann::ordered_json& report = *run;
    check_report(report, vulkan_waves, "vulkan");
    CHECK(u64(report["violations"]) == 0);
    CHECK(u64(report["waves"]["completed"]) == vulkan_waves);
  }
}

TEST_CASE("ferrum run: --gpu-timestamps on Vulkan times the checking encoders' dispatches", "[cli][vulkan]") {
  const auto run =
      vulkan_run_json(example_plan("multi_bucket.json"),
                      {"--waves", "8", "--gpu-timestamps", "--fence-timeout", cli_test::vulkan_fence_timeout_ms});
  if (!run) return;
  const nlohmann::ordered_json& report = *run;
  CHECK(u64(report["violations"]) == 0);
  CHECK(u64(report["waves"]["completed"]) == 8);
  CHECK(report["gpu_us"]["p50"].get<double>() > 0);
  CHECK(report["gpu_us"]["p50"].get<double>() <= report["gpu_us"]["p99"].get<double>());
}

TEST_CASE("ferrum run: the Vulkan checks see a stale slot too", "[cli][vulkan]") {
  const auto run =
      vulkan_run_json(example_plan("two_nodes.json"), {"--waves", "6"}, 3, {{"FERRUM_RUN_CORRUPT_WAVE", "4"}});
  if (!run) return;
  CHECK(u64((*run)["violations"]) > 0);
}

TEST_CASE("ferrum run: --reorder runs the example plans with only their derived barriers, no violation", "[cli]") {
  // The null device runs what no barrier orders last to first: a barrier
  // the plan's hazards needed and did not get would show as a violation.
  for (const char* plan : {"two_nodes.json", "history.json", "interval_liveness.json", "multi_bucket.json",
                           "two_queues.json", "two_queues_access.json", "imported.json"}) {
    INFO(plan);
    check_healthy(run_json(example_plan(plan), {"--waves", std::to_string(example_waves), "--reorder"}), example_waves);
  }
}

TEST_CASE("ferrum run: --discrete-layout runs the example plans with staged memory, no violation", "[cli]") {
  // Device memory unmapped, uploads and readbacks copied by the lanes'
  // staging lists; with --reorder too, so that what the staging lists'
  // barriers order is run out of order where they do not (in order, the
  // same lists check less).
  for (const char* plan : {"two_nodes.json", "history.json", "interval_liveness.json", "multi_bucket.json",
                           "readback.json", "two_queues.json", "two_queues_access.json", "imported.json"}) {
    INFO(plan);
    const json_run run =
        run_json(example_plan(plan), {"--waves", std::to_string(example_waves), "--discrete-layout", "--reorder"});
    check_healthy(run, example_waves);
    CHECK(run.report["discrete_layout"] == true);
  }
  CHECK(run_ferrum({"run", example_plan("two_nodes.json"), "--waves", "2", "--discrete-layout"})
            .out.find("discrete layout") != std::string::npos);
}

TEST_CASE("ferrum run: --discrete-layout on Vulkan stages memory as a discrete GPU, no violation", "[cli][vulkan]") {
  // Under a sanitizer two plans: staged readback and an engine's buffers.
  const std::vector<const char*> plans =
      test_support::sanitized
          ? std::vector<const char*>{"readback.json", "imported.json"}
          : std::vector<const char*>{"history.json", "readback.json", "two_queues.json", "imported.json"};
  for (const char* name : plans) {
    INFO(name);
    const auto run = vulkan_run_json(example_plan(name), {"--waves", "12", "--fence-timeout",
                                                          cli_test::vulkan_fence_timeout_ms, "--discrete-layout"});
    if (!run) return;
    check_report(*run, 12, "vulkan");
    CHECK((*run)["discrete_layout"] == true);
    CHECK(u64((*run)["violations"]) == 0);
    CHECK(u64((*run)["waves"]["completed"]) == 12);
  }
}

TEST_CASE("ferrum run: --reorder needs the null device", "[cli]") {
  const command_result r = run_ferrum({"run", example_plan("two_nodes.json"), "--device", "vulkan", "--reorder"});
  CHECK(r.status == 1);
  CHECK(cli_test::one_line(r.err));
  CHECK(r.err.find("--reorder needs --device null") != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("ferrum run: --split-barriers waits for events where a consumer runs far from its producer, no violation",
          "[cli][split]") {
  const cli_test::temp_file plan(cli_test::split_plan_json(2));
  for (const bool split : {false, true}) {
    INFO("split " << split);
    std::vector<std::string> extra{"--waves", "6", "--reorder"};
    if (split) extra.emplace_back("--split-barriers");
    const json_run run = run_json(plan.path(), extra);
    check_healthy(run, 6);
    const nlohmann::ordered_json& bucket = run.report["memory"][0];
    CHECK(u64(bucket["barriers_per_wave"]) == 1);
    CHECK(u64(bucket["split_barriers"]["events_per_wave"]) == 1);
    CHECK(u64(bucket["split_barriers"]["barriers_per_wave"]) == 0);
  }
  const command_result summary = run_ferrum({"run", plan.path(), "--waves", "2", "--split-barriers"});
  INFO(summary.out << summary.err);
  CHECK(summary.status == 0);
  CHECK(summary.out.find(", 1 barriers per wave; split on one queue 0 barriers and 1 events per wave; ") !=
        std::string::npos);
}
