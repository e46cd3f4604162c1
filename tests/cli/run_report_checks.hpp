// run_report_checks.hpp — helpers of the `ferrum run` CLI tests: run the
// built binary with --json, parse its ferrum.run.v1 report, check the
// report's documented shape, and run on Vulkan where a driver is found.
//
//   const cli_test::json_run run = cli_test::run_json(cli_test::example_plan("two_nodes.json"), {"--waves", "5"});
//   cli_test::check_healthy(run, 5);
#pragma once

#include "ferrum_process.hpp"

#include "ferrum/gpu/null_device.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cli_test {

// Runs `ferrum run PLAN --json` plus `extra`, and parses stdout.
// Parsed in order: the report's key order is part of its format.
struct json_run {
  command_result result;
  nlohmann::ordered_json report;
};

inline json_run run_json(const std::string& plan, const std::vector<std::string>& extra,
                         const std::vector<std::pair<std::string, std::string>>& env = {}) {
  std::vector<std::string> args{"run", plan, "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  json_run run{run_ferrum(args, env), {}};
  INFO("stdout: " << run.result.out << "\nstderr: " << run.result.err);
  REQUIRE(nlohmann::json::accept(run.result.out));
  run.report = nlohmann::ordered_json::parse(run.result.out);
  return run;
}

inline std::uint64_t u64(const nlohmann::ordered_json& j) { return j.get<std::uint64_t>(); }

// What `ferrum compile PLAN --json` prints, parsed (requiring exit 0).
inline nlohmann::ordered_json compiled_json(const std::string& plan) {
  const command_result compiled = run_ferrum({"compile", plan, "--json"});
  REQUIRE(compiled.status == 0);
  return nlohmann::ordered_json::parse(compiled.out);
}

// The invariants of every report: the documented shape, and every wave
// completed, failed or was cancelled.
inline void check_report(const nlohmann::ordered_json& r, std::uint64_t waves, std::string_view device) {
  INFO(r.dump(2));
  REQUIRE(r.is_object());
  std::vector<std::string> keys;
  for (const auto& item : r.items()) keys.push_back(item.key());
  // A v2 plan's report adds `queues` after `memory`, and each bucket its
  // unchecked listings.
  const bool v2 = r.contains("queues");
  std::vector<std::string> expected{"format", "device",     "discrete_layout",      "plan_hash",  "waves",
                                    "lanes",  "latency_us", "allocations_per_wave", "violations", "image_layout_errors",
                                    "memory", "faults"};
  if (v2) expected.insert(expected.end() - 1, "queues");
  // A run over several devices adds `devices` before `faults`.
  if (r.contains("devices")) expected.insert(expected.end() - 1, "devices");
  CHECK(keys == expected);
  CHECK(r["format"] == "ferrum.run.v1");
  CHECK(r["device"] == device);
  CHECK(r["discrete_layout"].is_boolean());
  CHECK(cli_test::starts_with(r["plan_hash"].get<std::string>(), "sha256/"));
  CHECK(r["plan_hash"].get<std::string>().size() == 7 + 64);

  const nlohmann::ordered_json& w = r["waves"];
  keys.clear();
  for (const auto& item : w.items()) keys.push_back(item.key());
  CHECK(keys == std::vector<std::string>{"requested", "completed", "failed", "cancelled"});
  CHECK(u64(w["requested"]) == waves);
  CHECK(u64(w["completed"]) + u64(w["failed"]) + u64(w["cancelled"]) == waves);

  const nlohmann::ordered_json& lanes = r["lanes"];
  keys.clear();
  for (const auto& item : lanes.items()) keys.push_back(item.key());
  CHECK(keys == std::vector<std::string>{"per_bucket", "max_in_flight", "quarantined"});
  CHECK(u64(lanes["max_in_flight"]) >= 1);

  const nlohmann::ordered_json& latency = r["latency_us"];
  keys.clear();
  for (const auto& item : latency.items()) keys.push_back(item.key());
  CHECK(keys == std::vector<std::string>{"wave_p50", "wave_p99", "fence_wake_p50", "fence_wake_p99"});
  for (const auto& item : latency.items()) {
    CHECK(item.value().is_number());
    CHECK(item.value().get<double>() >= 0.0);
  }
  CHECK(latency["wave_p50"].get<double>() <= latency["wave_p99"].get<double>());
  CHECK(latency["fence_wake_p50"].get<double>() <= latency["fence_wake_p99"].get<double>());
  CHECK(r["allocations_per_wave"].is_number());
  CHECK(r["allocations_per_wave"].get<double>() >= 0.0);
  CHECK(r["violations"].is_number_unsigned());
  // Counted on the null device; Vulkan's validation layers check layouts there.
  CHECK(u64(r["image_layout_errors"]) == 0);

  REQUIRE(r["memory"].is_array());
  for (const auto& bucket : r["memory"]) {
    keys.clear();
    for (const auto& item : bucket.items()) keys.push_back(item.key());
    std::vector<std::string> expected_keys{
        "bucket",         "lane_bytes",  "unaliased_lane_bytes",  "pools",
        "memory_classes", "image_bytes", "unaliased_image_bytes", "resources_checked_per_wave"};
    if (v2) expected_keys.push_back("resources_unchecked_per_wave");
    expected_keys.insert(expected_keys.end(),
                         {"barriers_per_wave", "split_barriers", "barriers", "lanes_made", "made_bytes"});
    CHECK(keys == expected_keys);
    // Made at create: every lane of the bucket, each of lane_bytes and its
    // image memory.
    CHECK(u64(bucket["lanes_made"]) >= 1);
    CHECK(u64(bucket["made_bytes"]) ==
          u64(bucket["lanes_made"]) * (u64(bucket["lane_bytes"]) + u64(bucket["image_bytes"])));
    CHECK(u64(bucket["image_bytes"]) <= u64(bucket["unaliased_image_bytes"]));
    CHECK(bucket["barriers_per_wave"].is_number_unsigned());
    CHECK(bucket["split_barriers"]["events_per_wave"].is_number_unsigned());
    CHECK(bucket["split_barriers"]["barriers_per_wave"].is_number_unsigned());
    CHECK(bucket["barriers"].is_array());
    CHECK(bucket["barriers"].size() == bucket["barriers_per_wave"].get<std::size_t>());
    std::uint64_t end = 0;
    for (const auto& pool : bucket["pools"]) {
      keys.clear();
      for (const auto& item : pool.items()) keys.push_back(item.key());
      CHECK(keys ==
            std::vector<std::string>{"pool", "memory", "liveness", "offset", "bytes", "unaliased_bytes", "images"});
      CHECK(u64(pool["bytes"]) <= u64(pool["unaliased_bytes"]));
      // An image pool's texels lie past the lane, in the image window.
      if (pool["images"] == true) {
        CHECK(u64(pool["offset"]) >= u64(bucket["lane_bytes"]));
        continue;
      }
      if (pool["memory"] != "imported") end = std::max(end, u64(pool["offset"]) + u64(pool["bytes"]));
    }
    // Each class's window lies in the lane, in window order, and holds the
    // pools of its class; the imported window, last, lies past it (no lane
    // allocates the engine's buffers).
    std::uint64_t window_end = 0;
    for (const auto& window : bucket["memory_classes"]) {
      CHECK(u64(window["lane_offset"]) >= window_end);
      if (window["class"] == "imported") {
        CHECK(u64(window["lane_offset"]) >= u64(bucket["lane_bytes"]));
        CHECK(&window == &bucket["memory_classes"].back());
        continue;
      }
      window_end = u64(window["lane_offset"]) + u64(window["bytes"]);
      for (const auto& pool : bucket["pools"])
        if (pool["memory"] == window["class"] && pool["images"] == false) {
          CHECK(u64(pool["offset"]) >= u64(window["lane_offset"]));
          CHECK(u64(pool["offset"]) + u64(pool["bytes"]) <= window_end);
        }
    }
    CHECK(window_end <= u64(bucket["lane_bytes"]));
    // The pools lie inside the lane, which aliasing made no larger.
    CHECK(end <= u64(bucket["lane_bytes"]));
    CHECK(u64(bucket["lane_bytes"]) <= u64(bucket["unaliased_lane_bytes"]));
  }

  if (v2) {
    REQUIRE(r["queues"].is_array());
    CHECK(!r["queues"].empty());
    std::uint64_t index = 0;
    for (const auto& queue : r["queues"]) {
      keys.clear();
      for (const auto& item : queue.items()) keys.push_back(item.key());
      CHECK(keys == std::vector<std::string>{"queue", "kinds", "nodes", "submissions"});
      CHECK(u64(queue["queue"]) == index++);
      REQUIRE(queue["kinds"].is_array());
      CHECK(!queue["kinds"].empty());
      CHECK(queue["submissions"].is_number_unsigned());
    }
    // Queue 0 is the compute queue.
    CHECK(r["queues"][0]["kinds"][0] == "compute");
  }

  const nlohmann::ordered_json& faults = r["faults"];
  keys.clear();
  for (const auto& item : faults.items()) keys.push_back(item.key());
  CHECK(keys == std::vector<std::string>{"injected", "surfaced"});
}

// A healthy faulted run: exit 0, no violation, every fault surfaced.
inline void check_healthy(const json_run& run, std::uint64_t waves) {
  INFO("stdout: " << run.result.out << "\nstderr: " << run.result.err);
  CHECK(run.result.status == 0);
  CHECK(run.result.err.empty());
  check_report(run.report, waves, "null");
  CHECK(u64(run.report["violations"]) == 0);
  CHECK(u64(run.report["faults"]["surfaced"]) == u64(run.report["faults"]["injected"]));
}

// The fence timeout of `ferrum run --device vulkan` in the tests: lavapipe
// runs a queue's waves one after another on the CPU, and under the asan
// preset its shaders' per-workgroup allocations go through the sanitizer's
// allocator, so a multi_bucket wave there takes seconds and the last of nine
// queued waves a minute. Only injected faults may fail a wave.
inline constexpr const char* vulkan_fence_timeout_ms = test_fence_timeout_ms;

inline bool vulkan_required() {
  const char* value = std::getenv("FERRUM_REQUIRE_VULKAN");
  return value != nullptr && std::string_view(value) == "1";
}

// Whether a --device vulkan run found no driver (and may be skipped).
inline bool skipped_without_vulkan(const command_result& r) {
  if (r.status != 1 || r.err.find("vulkan_unavailable") == std::string::npos) return false;
  if (vulkan_required()) {
    FAIL("no Vulkan driver, and FERRUM_REQUIRE_VULKAN=1: " << r.err);
  }
  WARN("skipped: no usable Vulkan driver (" << r.err << "); set FERRUM_REQUIRE_VULKAN=1 to fail instead");
  return true;
}

// Runs `ferrum run PLAN --device vulkan --json` plus `extra` and requires
// exit `status` and a JSON report, which it returns parsed; none when the run
// was skipped for want of a driver.
inline std::optional<nlohmann::ordered_json> vulkan_run_json(
    const std::string& plan, const std::vector<std::string>& extra, int status = 0,
    std::vector<std::pair<std::string, std::string>> env = {}) {
  std::vector<std::string> args{"run", plan, "--device", "vulkan", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const command_result r = run_ferrum(args, env);
  if (skipped_without_vulkan(r)) return std::nullopt;
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.status == status);
  REQUIRE(nlohmann::json::accept(r.out));
  return nlohmann::ordered_json::parse(r.out);
}

// A seed whose null-device decisions give `kind` to submission 1 and to none
// of the others up to `waves`, so that the fault is certainly reached and
// happens once, and no wave runs before it: with a short fence timeout, a
// wave ahead of a hang could time out only because the machine is slow
// (under tsan on two busy cores a wave once took 12 s), which no injected
// fault explains. Behind the hang every timeout is the hang's.
inline std::uint64_t seed_with_first(ferrum::gpu::fault_kind kind, double probability, std::uint64_t waves) {
  ferrum::gpu::null_fault_options options;
  (kind == ferrum::gpu::fault_kind::hang ? options.hang : options.lost) = probability;
  for (std::uint64_t seed = 1; seed < 100000; ++seed) {
    options.seed = seed;
    std::uint64_t first = 0;
    std::uint64_t count = 0;
    for (std::uint64_t v = 1; v <= waves; ++v) {
      if (const auto f = ferrum::gpu::decide_fault(options, v); f && f->kind == kind) {
        if (first == 0) first = v;
        ++count;
      }
    }
    if (first == 1 && count == 1) return seed;
  }
  FAIL("no seed gives a fault to the first submission alone");
  return 0;
}

}  // namespace cli_test
