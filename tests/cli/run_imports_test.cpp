// End-to-end tests of `ferrum run` on a plan that imports the engine's
// buffers (examples/plans/imported.json): the run names one buffer per
// imported resource in every wave, the checks read them where the run put
// them, and waves that write the one mesh are ordered on the GPU; and on a
// plan of images (examples/plans/image_copies.json), whose image memory the
// run reports.
#include "ferrum_process.hpp"
#include "run_report_checks.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>

using cli_test::check_healthy;
using cli_test::example_plan;
using cli_test::json_run;
using cli_test::run_ferrum;
using cli_test::run_json;
using cli_test::u64;

TEST_CASE("ferrum run: an imported plan's waves check the engine's buffers, with no violation", "[cli][imported]") {
  const json_run run = run_json(example_plan("imported.json"), {"--waves", "60", "--fault", "cancel:0.1"});
  check_healthy(run, 60);
  const nlohmann::ordered_json& r = run.report;
  // Every listing, the imported ones included, is checked in each bucket.
  REQUIRE(r["memory"].size() == 2);
  for (const auto& bucket : r["memory"]) {
    CHECK(u64(bucket["resources_checked_per_wave"]) == 9);
    CHECK(u64(bucket["resources_unchecked_per_wave"]) == 0);
    // The imported window lies past the lane's bytes: no lane allocates it.
    const auto& imported = bucket["memory_classes"].back();
    CHECK(imported["class"] == "imported");
    CHECK(u64(imported["lane_offset"]) >= u64(bucket["lane_bytes"]));
  }
}

TEST_CASE("ferrum run: a stale pattern in an imported resource is reported", "[cli][imported]") {
  // The first workspace resource with a later user is resource/mesh, the
  // engine's: wave 3 writes wave 2's pattern into it.
  const json_run run =
      run_json(example_plan("imported.json"), {"--waves", "6"}, {{"FERRUM_RUN_CORRUPT_WORKSPACE_WAVE", "3"}});
  INFO("stderr: " << run.result.err);
  CHECK(run.result.status == 3);
  CHECK(u64(run.report["violations"]) > 0);
}

TEST_CASE("ferrum run: an imported plan runs on one device", "[cli][imported]") {
  const cli_test::command_result r = run_ferrum({"run", example_plan("imported.json"), "--devices", "2"});
  CHECK(r.status == 1);
  CHECK(r.err.find("a plan with imported resources runs on one device") != std::string::npos);
}

TEST_CASE("ferrum run: a plan with imported images is refused, naming the image", "[cli][imported][image]") {
  const cli_test::command_result r = run_ferrum({"run", example_plan("present.json"), "--waves", "2"});
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(r.err.find("image 'image/engine' is imported") != std::string::npos);
}

TEST_CASE("ferrum run: a plan with history resources is refused, naming a current", "[cli][history]") {
  const cli_test::command_result r = run_ferrum({"run", example_plan("taa_history.json"), "--waves", "2"});
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(r.err.find("history resources ('image/taa')") != std::string::npos);
}

TEST_CASE("ferrum run: an image plan's lanes make image memory, and every transition finds its image's layout",
          "[cli][image]") {
  const json_run run = run_json(example_plan("image_copies.json"), {"--waves", "40", "--fault", "cancel:0.1"});
  check_healthy(run, 40);
  REQUIRE(run.report["memory"].size() == 1);
  const auto& bucket = run.report["memory"][0];
  // The null device's 4 KiB pages: image/a and image/b share one.
  CHECK(u64(bucket["image_bytes"]) == 2 * 4096);
  CHECK(u64(bucket["unaliased_image_bytes"]) == 3 * 4096);
  // The images' listings are reported, not checked: 6 per wave.
  CHECK(u64(bucket["resources_unchecked_per_wave"]) == 6);
  const cli_test::command_result text = run_ferrum({"run", example_plan("image_copies.json"), "--waves", "4"});
  CHECK(text.status == 0);
  CHECK(text.out.find("pool/targets 512 texels") != std::string::npos);
  CHECK(text.out.find("images 8192 bytes of image memory per lane (12288 unaliased)") != std::string::npos);
}

TEST_CASE("ferrum run: images a fraction of the frame, on two independent chains, share image memory and run clean",
          "[cli][image]") {
  // image_copies.json with image/a and image/b half the bucket's extent
  // (8x4), and node/fill.b after node/fill.a only: two chains with no path
  // between them, on one queue, whose images still share memory.
  nlohmann::json doc = nlohmann::json::parse(cli_test::read_file(example_plan("image_copies.json")));
  for (auto& r : doc["resources"])
    if (r["id"] == "image/a" || r["id"] == "image/b") r["image"]["extent"] = "bucket/2";
  REQUIRE(doc["nodes"][2]["id"] == "node/fill.b");
  doc["nodes"][2]["after"] = {"node/fill.a"};
  const cli_test::temp_file plan(doc.dump());
  const nlohmann::ordered_json compiled = cli_test::compiled_json(plan.path());
  const auto& images = compiled["buckets"][0]["images"];
  REQUIRE(images.size() == 3);
  CHECK(images[1]["extent"] == "bucket/2");
  CHECK(u64(images[1]["width"]) == 8);
  CHECK(u64(images[1]["height"]) == 4);
  // Texels: history 512, a and b 128 each, sharing.
  CHECK(u64(compiled["buckets"][0]["image_bytes"]) == 512 + 128);
  CHECK(u64(compiled["buckets"][0]["unaliased_image_bytes"]) == 512 + 2 * 128);
  // --reorder runs what no barrier orders last to first: a layout error or a
  // violation would show a missing one.
  const json_run run = run_json(plan.path(), {"--waves", "20", "--reorder"});
  check_healthy(run, 20);
  const auto& bucket = run.report["memory"][0];
  CHECK(u64(bucket["image_bytes"]) == 2 * 4096);  // the null device's pages
  CHECK(u64(bucket["unaliased_image_bytes"]) == 3 * 4096);
  const cli_test::command_result text = run_ferrum({"run", plan.path(), "--waves", "4"});
  CHECK(text.status == 0);
  CHECK(text.out.find("images 8192 bytes of image memory per lane (12288 unaliased)") != std::string::npos);
}

TEST_CASE("ferrum run: on Vulkan an image plan runs with its images' memory reported", "[cli][vulkan][image]") {
  const auto report = cli_test::vulkan_run_json(example_plan("image_copies.json"),
                                                {"--waves", "8", "--fence-timeout", cli_test::vulkan_fence_timeout_ms});
  if (!report) return;
  cli_test::check_report(*report, 8, "vulkan");
  CHECK(u64((*report)["memory"][0]["image_bytes"]) > 0);
}
