// End-to-end tests of `ferrum run` on v2 plans: nodes run on their plan
// queue (the null device's two, lavapipe's one), transfer nodes record only
// copies, the checks follow the dependency graph, and what they cannot check
// is reported (docs/interfaces.md, "ferrum.run.v1": queues, violations).
#include "ferrum_process.hpp"
#include "run_report_checks.hpp"

#include "ferrum/gpu/null_device.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
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
using cli_test::u64;

namespace {

// examples/plans/two_queues.json, to be changed by a test.
nlohmann::json two_queues() { return nlohmann::json::parse(cli_test::read_file(example_plan("two_queues.json"))); }

nlohmann::json& node_of(nlohmann::json& plan, const std::string& id) {
  for (nlohmann::json& node : plan["nodes"])
    if (node["id"] == id) return node;
  FAIL("no node " << id);
  return plan["nodes"][0];
}

// The words of `resource` in bucket `bucket` of `plan`'s compiled layout.
std::uint64_t words_of(const std::string& plan, std::size_t bucket, const std::string& resource) {
  const nlohmann::ordered_json compiled = compiled_json(plan);
  for (const auto& domain : compiled["buckets"].at(bucket)["domains"])
    for (const auto& projection : domain["projections"])
      if (projection["resource"] == resource) return u64(projection["capacity"]) / 4;
  FAIL("no resource " << resource);
  return 0;
}

// Runs `plan` with the checks' self-test `variable`=3 over 6 waves; wave 3
// runs in the first of two_queues' two buckets.
json_run corrupted_run(const std::string& plan, const char* variable) {
  json_run run = run_json(plan, {"--waves", "6"}, {{variable, "3"}});
  INFO("stderr: " << run.result.err);
  CHECK(run.result.status == 3);
  check_report(run.report, 6, "null");
  CHECK(cli_test::starts_with(run.result.err, "ferrum: error: run_failed: "));
  return run;
}

}  // namespace

TEST_CASE("ferrum run: a two-queue plan runs on both queues of the null device without violations", "[cli]") {
  const json_run run = run_json(example_plan("two_queues.json"), {"--waves", "40"});
  check_healthy(run, 40);
  const nlohmann::ordered_json& r = run.report;
  CHECK(u64(r["waves"]["completed"]) == 40);
  const nlohmann::ordered_json& queues = r["queues"];
  REQUIRE(queues.size() == 2);
  CHECK(queues[0]["kinds"] == nlohmann::ordered_json::array({"compute"}));
  CHECK(queues[1]["kinds"] == nlohmann::ordered_json::array({"transfer"}));
  CHECK(u64(queues[0]["nodes"]) == 3);
  CHECK(u64(queues[1]["nodes"]) == 2);
  // Per wave, segments upload (transfer), simulate (compute), readback
  // (transfer), shade and compose (compute, waiting for readback): two
  // submissions on each queue, and no join.
  CHECK(u64(queues[0]["submissions"]) == 2 * 40);
  CHECK(u64(queues[1]["submissions"]) == 2 * 40);
  // Every listing checked: the transfer nodes' by node/simulate and
  // node/compose, resource/state at node/readback and node/shade by its
  // writer node/simulate's pattern.
  for (const auto& bucket : r["memory"]) {
    CHECK(u64(bucket["resources_checked_per_wave"]) == 15);
    CHECK(u64(bucket["resources_unchecked_per_wave"]) == 0);
  }
}

TEST_CASE("ferrum run: an async-compute plan runs its chain on a third null queue without violations", "[cli]") {
  const json_run run = run_json(example_plan("async_compute.json"), {"--waves", "40"});
  check_healthy(run, 40);
  const nlohmann::ordered_json& queues = run.report["queues"];
  REQUIRE(queues.size() == 3);
  CHECK(queues[0]["kinds"] == nlohmann::ordered_json::array({"compute"}));
  CHECK(queues[2]["kinds"] == nlohmann::ordered_json::array({"async-compute"}));
  CHECK(u64(queues[0]["nodes"]) == 3);
  CHECK(u64(queues[1]["nodes"]) == 0);
  CHECK(u64(queues[2]["nodes"]) == 2);
  // Per wave, segments prepare (compute), cull (async), shade (compute),
  // reduce (async), compose (compute, waiting for reduce): no join.
  CHECK(u64(queues[0]["submissions"]) == 3 * 40);
  CHECK(u64(queues[2]["submissions"]) == 2 * 40);
  for (const auto& bucket : run.report["memory"]) CHECK(u64(bucket["resources_unchecked_per_wave"]) == 0);
  // The checks see a stale pattern in a resource the async chain reads.
  const json_run corrupted = corrupted_run(example_plan("async_compute.json"), "FERRUM_RUN_CORRUPT_WORKSPACE_WAVE");
  CHECK(u64(corrupted.report["violations"]) > 0);
}

TEST_CASE("ferrum run: a v1 plan's report and summary have no queues and no unchecked listings", "[cli]") {
  const json_run run = run_json(example_plan("two_nodes.json"), {"--waves", "4"});
  check_healthy(run, 4);
  CHECK_FALSE(run.report.contains("queues"));
  CHECK_FALSE(run.report["memory"][0].contains("resources_unchecked_per_wave"));
  const command_result summary = run_ferrum({"run", example_plan("two_nodes.json"), "--waves", "4"});
  CHECK(summary.status == 0);
  CHECK(summary.out.find("  queues") == std::string::npos);
  CHECK(summary.out.find("unchecked") == std::string::npos);
}

TEST_CASE("ferrum run: the summary of a two-queue plan names each queue's nodes and submissions", "[cli]") {
  const command_result r = run_ferrum({"run", example_plan("two_queues.json"), "--waves", "20"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("\n  queues       compute: 3 nodes per wave, 40 submissions; transfer: 2 nodes per wave, 40 "
                   "submissions\n") != std::string::npos);
  CHECK(r.out.find(", 15 resources checked per wave, 0 unchecked, ") != std::string::npos);
  CHECK(r.out.find(" barriers per wave; 2 lanes made, ") != std::string::npos);
  CHECK(r.out.find("  unchecked    ") == std::string::npos);
  CHECK(r.out.find("violations   0") != std::string::npos);
}

TEST_CASE("ferrum run: a stale slot or workspace pattern written by a transfer node is counted", "[cli]") {
  // Wave 3's first slot is node/upload's, a transfer node: its staging gets
  // wave 2's pattern, and node/simulate's check of its snapshot counts each
  // word once.
  const std::string plan = example_plan("two_queues.json");
  const json_run slot = corrupted_run(plan, "FERRUM_RUN_CORRUPT_WAVE");
  CHECK(u64(slot.report["violations"]) == words_of(plan, 0, "resource/upload.args"));
  // Its first workspace resource with a later user is resource/staging:
  // counted by node/simulate's check of node/upload's snapshot and by its own
  // check of what it finds.
  const json_run workspace = corrupted_run(plan, "FERRUM_RUN_CORRUPT_WORKSPACE_WAVE");
  CHECK(u64(workspace.report["violations"]) == 2 * words_of(plan, 0, "resource/staging"));
}

TEST_CASE("ferrum run: a stale pattern written by a compute node of a two-queue plan is counted", "[cli]") {
  // node/upload on the compute queue: the targets are a compute node's,
  // while node/readback still runs on the transfer queue.
  nlohmann::json changed = two_queues();
  node_of(changed, "node/upload")["queue"] = "compute";
  const cli_test::temp_file file(changed.dump());
  const json_run slot = corrupted_run(file.path(), "FERRUM_RUN_CORRUPT_WAVE");
  CHECK(u64(slot.report["violations"]) == words_of(file.path(), 0, "resource/upload.args"));
  REQUIRE(slot.report["queues"].size() == 2);
  CHECK(u64(slot.report["queues"][1]["nodes"]) == 1);
  CHECK(u64(slot.report["queues"][1]["submissions"]) > 0);
  const json_run workspace = corrupted_run(file.path(), "FERRUM_RUN_CORRUPT_WORKSPACE_WAVE");
  CHECK(u64(workspace.report["violations"]) == 2 * words_of(file.path(), 0, "resource/staging"));
}

TEST_CASE("ferrum run: listings the checks cannot check are counted and named, and do not fail the run", "[cli]") {
  nlohmann::json changed = two_queues();
  // node/tail: a transfer node after everything, so no compute node checks
  // its copies of resource/frame. node/left and node/right both list
  // resource/shared, unordered and with nothing written before them (on
  // one queue: on two, compile refuses them, unordered_hazard).
  changed["nodes"].push_back(
      {{"id", "node/tail"}, {"queue", "transfer"}, {"after", {"node/compose"}}, {"resources", {"resource/frame"}}});
  changed["nodes"].push_back({{"id", "node/left"}, {"after", {"node/upload"}}, {"resources", {"resource/shared"}}});
  changed["nodes"].push_back({{"id", "node/right"}, {"after", {"node/upload"}}, {"resources", {"resource/shared"}}});
  nlohmann::json shared = changed["resources"].back();  // resource/frame's shape
  shared["id"] = "resource/shared";
  shared["pool"] = "pool/shared";
  shared["demand"] = {{"fixed", 256}};
  shared["lifetime"] = "invocation";
  changed["resources"].push_back(shared);
  for (nlohmann::json& bucket : changed["buckets"])
    bucket["budgets"].push_back({{"pool", "pool/shared"}, {"min", 0}, {"max", 256}});
  const cli_test::temp_file file(changed.dump());

  const json_run run = run_json(file.path(), {"--waves", "12"});
  check_healthy(run, 12);
  for (const auto& bucket : run.report["memory"]) {
    CHECK(u64(bucket["resources_checked_per_wave"]) == 15);
    CHECK(u64(bucket["resources_unchecked_per_wave"]) == 3);
  }
  // node/tail's pattern is still checked: by node/compose in the lane's next wave.
  CHECK(u64(run.report["queues"][1]["nodes"]) == 3);

  const command_result summary = run_ferrum({"run", file.path(), "--waves", "4"});
  INFO("stdout: " << summary.out);
  CHECK(summary.status == 0);
  CHECK(summary.out.find(", 15 resources checked per wave, 3 unchecked, ") != std::string::npos);
  CHECK(summary.out.find(" barriers per wave; 2 lanes made, ") != std::string::npos);
  CHECK(summary.out.find("\n  unchecked    resource/frame at node/tail: a transfer node that no compute node runs "
                         "after\n") != std::string::npos);
  CHECK(summary.out.find("\n               resource/shared at node/left: not ordered against every other user, "
                         "and no user before it writes it\n") != std::string::npos);
  CHECK(summary.out.find("\n               resource/shared at node/right: ") != std::string::npos);
}

TEST_CASE("ferrum run: with device faults a two-queue plan runs on one null queue and every fault surfaces", "[cli]") {
  // One submission per wave, so that each device fault is its wave's; the
  // transfer nodes still record only copies.
  const json_run run = run_json(example_plan("two_queues.json"),
                                {"--waves", "40", "--fault", "delay:0.3,encoder:0.1,cancel:0.1", "--seed", "3"});
  check_healthy(run, 40);
  CHECK(u64(run.report["faults"]["injected"]) > 0);
  REQUIRE(run.report["queues"].size() == 1);
  CHECK(run.report["queues"][0]["kinds"] == nlohmann::ordered_json::array({"compute", "transfer"}));
  CHECK(u64(run.report["queues"][0]["nodes"]) == 5);

  // A hang and a loss, each on the first submission and once: the waves they fail are
  // explained, and persistent resource/frame keeps its lane's last submitted
  // wave through the hang.
  const std::uint64_t hang_seed = cli_test::seed_with_first(ferrum::gpu::fault_kind::hang, 0.05, 30);
  const json_run hang = run_json(
      example_plan("two_queues.json"),
      {"--waves", "30", "--fault", "hang:0.05", "--fence-timeout", "250", "--seed", std::to_string(hang_seed)});
  check_healthy(hang, 30);
  CHECK(u64(hang.report["waves"]["failed"]) >= 1);
  CHECK(u64(hang.report["lanes"]["quarantined"]) == 0);
  const std::uint64_t lost_seed = cli_test::seed_with_first(ferrum::gpu::fault_kind::lost, 0.05, 30);
  const json_run lost = run_json(example_plan("two_queues.json"),
                                 {"--waves", "30", "--fault", "lost:0.05", "--seed", std::to_string(lost_seed)});
  check_healthy(lost, 30);
  CHECK(u64(lost.report["faults"]["injected"]) == 1);
  CHECK(u64(lost.report["waves"]["failed"]) >= 27);
}

namespace {

// Runs `plan` for 6 waves on lavapipe (false where Vulkan is not there):
// one queue running `kinds`, each wave one submission of all five nodes, no
// violation.
bool runs_on_lavapipes_one_queue(const std::string& plan, const nlohmann::ordered_json& kinds) {
  const auto run =
      cli_test::vulkan_run_json(plan, {"--waves", "6", "--fence-timeout", cli_test::vulkan_fence_timeout_ms});
  if (!run) return false;
  check_report(*run, 6, "vulkan");
  CHECK(u64((*run)["violations"]) == 0);
  CHECK(u64((*run)["waves"]["completed"]) == 6);
  REQUIRE((*run)["queues"].size() == 1);
  CHECK((*run)["queues"][0]["kinds"] == kinds);
  CHECK(u64((*run)["queues"][0]["nodes"]) == 5);
  CHECK(u64((*run)["queues"][0]["submissions"]) == 6);
  return true;
}

}  // namespace

TEST_CASE("ferrum run: on Vulkan a two-queue plan runs both kinds on one queue and its checks see a stale pattern",
          "[cli][vulkan]") {
  // lavapipe has one queue: the transfer nodes' lists still record copies only.
  if (!runs_on_lavapipes_one_queue(example_plan("two_queues.json"),
                                   nlohmann::ordered_json::array({"compute", "transfer"})))
    return;

  const auto corrupted = cli_test::vulkan_run_json(example_plan("two_queues.json"), {"--waves", "4"}, 3,
                                                   {{"FERRUM_RUN_CORRUPT_WORKSPACE_WAVE", "3"}});
  if (!corrupted) return;
  CHECK(u64((*corrupted)["violations"]) == 2 * words_of(example_plan("two_queues.json"), 0, "resource/staging"));
}

TEST_CASE("ferrum run: on Vulkan an async-compute plan runs every kind on lavapipe's one queue", "[cli][vulkan]") {
  (void)runs_on_lavapipes_one_queue(example_plan("async_compute.json"),
                                    nlohmann::ordered_json::array({"compute", "transfer", "async-compute"}));
}
