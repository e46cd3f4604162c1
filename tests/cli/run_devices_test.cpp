// End-to-end tests of `ferrum run --devices K`: one scheduler over K
// devices, waves on whichever device's lane frees first, every device's
// memory checked by its own kernels, per-device counts in the report
// (docs/interfaces.md, "ferrum.run.v1": devices), and a lost device that
// stops only itself.
#include "ferrum_process.hpp"
#include "run_report_checks.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

using cli_test::check_healthy;
using cli_test::check_report;
using cli_test::example_plan;
using cli_test::json_run;
using cli_test::run_ferrum;
using cli_test::run_json;
using cli_test::u64;

namespace {

// The report's waves and submissions, summed over its devices.
struct device_sums {
  std::uint64_t completed = 0;
  std::uint64_t failed = 0;
  std::uint64_t cancelled = 0;
  std::uint64_t submissions = 0;
};

device_sums sum_devices(const nlohmann::ordered_json& report, std::size_t devices) {
  REQUIRE(report.contains("devices"));
  const auto& list = report["devices"];
  REQUIRE(list.size() == devices);
  device_sums sums;
  for (std::size_t d = 0; d < devices; ++d) {
    const auto& entry = list[d];
    std::vector<std::string> keys;
    for (const auto& item : entry.items()) keys.push_back(item.key());
    CHECK(keys == std::vector<std::string>{"device", "name", "completed", "failed", "cancelled", "submissions", "lost",
                                           "quarantined"});
    CHECK(u64(entry["device"]) == d);
    sums.completed += u64(entry["completed"]);
    sums.failed += u64(entry["failed"]);
    sums.cancelled += u64(entry["cancelled"]);
    sums.submissions += u64(entry["submissions"]);
  }
  return sums;
}

}  // namespace

TEST_CASE("ferrum run --devices 2 runs a v2 plan over both devices' two queues with no violation", "[cli][devices]") {
  const json_run run = run_json(example_plan("two_queues.json"), {"--devices", "2", "--waves", "300"});
  check_healthy(run, 300);
  const auto& r = run.report;
  CHECK(u64(r["waves"]["completed"]) == 300);
  const device_sums sums = sum_devices(r, 2);
  CHECK(sums.completed == 300);
  // Both devices took waves, each wave making two compute submissions (its
  // segments end on compute, so no join).
  for (const auto& d : r["devices"]) {
    CHECK(u64(d["completed"]) > 0);
    CHECK(u64(d["submissions"]) == 2 * u64(d["completed"]));
    CHECK(d["lost"] == false);
  }
  // The queues' submissions are every device's.
  CHECK(u64(r["queues"][0]["submissions"]) == sums.submissions);
  CHECK(u64(r["queues"][1]["submissions"]) == 600);
  // Four lanes per device (two buckets of two).
  CHECK(u64(r["lanes"]["max_in_flight"]) <= 8);
}

TEST_CASE("ferrum run --devices 3 with device faults explains every wave, each device lost on its own",
          "[cli][devices]") {
  const json_run run = run_json(
      example_plan("two_nodes.json"),
      {"--devices", "3", "--waves", "1500", "--fault", "lost:0.002,delay:0.1,encoder:0.01,cancel:0.01", "--seed", "4"});
  check_healthy(run, 1500);
  const auto& r = run.report;
  const device_sums sums = sum_devices(r, 3);
  // Waves that got a lane are counted on its device; those that found every
  // device lost, nowhere.
  CHECK(sums.completed == u64(r["waves"]["completed"]));
  CHECK(sums.completed + sums.failed + sums.cancelled <= 1500);
  std::size_t lost = 0;
  for (const auto& d : r["devices"]) {
    lost += d["lost"] == true ? 1 : 0;
    CHECK(u64(d["completed"]) > 0);
  }
  CHECK(lost > 0);
}

TEST_CASE("ferrum run --devices prints a line per device in its summary, and only with several", "[cli][devices]") {
  const cli_test::command_result several =
      run_ferrum({"run", example_plan("two_nodes.json"), "--devices", "2", "--waves", "50"});
  INFO(several.out << several.err);
  CHECK(several.status == 0);
  CHECK(several.out.find("\n  device 0     ") != std::string::npos);
  CHECK(several.out.find("\n  device 1     ") != std::string::npos);
  const json_run one = run_json(example_plan("two_nodes.json"), {"--waves", "50"});
  CHECK_FALSE(one.report.contains("devices"));
}

TEST_CASE("ferrum run refuses --devices outside 1..8 with a usage error", "[cli][devices]") {
  for (const char* count : {"0", "9"}) {
    const cli_test::command_result r = run_ferrum({"run", example_plan("two_nodes.json"), "--devices", count});
    CHECK(r.status == 1);
    CHECK(r.err.find("--devices must lie in 1..8, got " + std::string(count)) != std::string::npos);
  }
}

TEST_CASE("ferrum run --device vulkan --devices 2 runs over two logical devices with no violation",
          "[cli][devices][vulkan]") {
  const auto report = cli_test::vulkan_run_json(example_plan("two_queues.json"), {"--devices", "2", "--waves", "40"});
  if (!report) return;
  check_report(*report, 40, "vulkan");
  CHECK(u64((*report)["violations"]) == 0);
  const device_sums sums = sum_devices(*report, 2);
  CHECK(sums.completed == 40);
}
