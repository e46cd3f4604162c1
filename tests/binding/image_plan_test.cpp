// Tests of images in the plan: how a ferrum.plan.v2 file declares them and
// the accesses nodes make of them, every refusal with its code and JSON
// pointer, and the plan hash's images part (docs/canonical-encoding.md).
#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/demand.hpp"
#include "ferrum/binding/image_access.hpp"
#include "ferrum/binding/plan_json.hpp"

#include "both_parsers.hpp"
#include "example_plans.hpp"
#include "pinned_digests.hpp"
#include "plan_builder.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>

using namespace ferrum;
using test::code_of;

namespace {

std::string images_text() {
  std::ifstream in(std::string(FERRUM_SOURCE_DIR) + "/" + std::string(pinned::images_hash.plan_file));
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string images_edited(const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json doc = nlohmann::json::parse(images_text());
  edit(doc);
  return doc.dump();
}

// The index of a resource or node of images.json by id.
std::size_t index_of(const nlohmann::json& list, std::string_view id) {
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i]["id"] == id) return i;
  FAIL("no " << id);
  return 0;
}

nlohmann::json& resource(nlohmann::json& doc, std::string_view id) {
  return doc["resources"][index_of(doc["resources"], id)];
}
nlohmann::json& node(nlohmann::json& doc, std::string_view id) { return doc["nodes"][index_of(doc["nodes"], id)]; }

// A 64-byte storage buffer `buffer/x` in `pool`, as images.json would declare one.
nlohmann::json buffer_x(std::string_view pool) {
  return {{"id", "buffer/x"},
          {"pool", pool},
          {"kind", "workspace"},
          {"demand", {{"fixed", 64}}},
          {"alignment", 16},
          {"lifetime", "invocation"},
          {"usage", "storage"},
          {"element", "u8"},
          {"storage",
           {{"allocator", "linear-arena"},
            {"view", "contiguous"},
            {"contract", "c2a8e4f06b1d9c3a7e5f2b8d0c6a4e1f9b3d7c5a2e8f0b6d4c1a9e3f7b5d2c8a"}}}};
}

struct refusal {
  const char* what;
  std::function<void(nlohmann::json&)> edit;
  errc code;
  const char* path;
};

}  // namespace

TEST_CASE("images: images.json parses with both parsers, images and accesses as written", "[binding][image]") {
  const plan p = both_parsers::parsed(images_text());
  REQUIRE(p.resources.size() == 7);
  const resource_descriptor& depth = p.resources[1];
  CHECK(depth.id.view() == "image/scene.depth");
  REQUIRE(depth.image.has_value());
  CHECK(depth.image->format == image_format::d32_float);
  CHECK(depth.image->bucket_extent);
  CHECK(depth.image->mips == 1);
  CHECK(depth.image->layers == 1);
  CHECK(p.resources[6].lifetime == allocation_lifetime::persistent);
  CHECK(p.nodes[0].access == std::vector{resource_access::color_attachment, resource_access::depth_attachment});
  CHECK(p.nodes[4].access == std::vector{resource_access::transfer_src, resource_access::transfer_dst});
}

TEST_CASE("images: a fixed extent, mips and layers are read", "[binding][image]") {
  const plan p = both_parsers::parsed(images_edited([](nlohmann::json& doc) {
    resource(doc, "image/ao")["image"] = {{"format", "r32-float"}, {"extent", {64, 32}}, {"mips", 7}, {"layers", 2}};
  }));
  const image_desc& ao = *p.resources[2].image;
  CHECK_FALSE(ao.bucket_extent);
  CHECK(ao.width == 64);
  CHECK(ao.height == 32);
  CHECK(ao.mips == 7);
  CHECK(ao.layers == 2);
  // 64x32 .. 1x1 is 7 levels: 2730 texels a layer, 4 bytes each.
  const compiled_program program = compile(p).value();
  const compiled_bucket& bucket = program.buckets.front();
  const auto& targets = bucket.capacity_layouts[1];
  CHECK(targets.pool.view() == "pool/targets");
  CHECK(targets.projections[0].resource.view() == "image/ao");
  CHECK(targets.projections[0].capacity == (2048 + 512 + 128 + 32 + 8 + 2 + 1) * 2 * 4);
}

TEST_CASE("images: every bad image declaration is refused with its code and path", "[binding][image]") {
  const std::vector<refusal> refusals{
      {"an image in a v1 plan",
       [](auto& doc) {
         doc["format"] = "ferrum.plan.v1";
         for (auto& n : doc["nodes"]) {
           n.erase("access");
           n.erase("after");
         }
         doc.erase("pools");
       },
       errc::unknown_field, "/resources/0/image"},
      {"a binding image", [](auto& doc) { resource(doc, "image/ao")["kind"] = "binding"; }, errc::invalid_image,
       "/resources/2/kind"},
      {"a buffer's field on an image", [](auto& doc) { resource(doc, "image/ao")["alignment"] = 16; },
       errc::unknown_field, "/resources/2/alignment"},
      {"an unknown format", [](auto& doc) { resource(doc, "image/ao")["image"]["format"] = "rgb8"; },
       errc::unknown_value, "/resources/2/image/format"},
      {"an extent that is not 'bucket'", [](auto& doc) { resource(doc, "image/ao")["image"]["extent"] = "screen"; },
       errc::unknown_value, "/resources/2/image/extent"},
      {"an extent of three numbers",
       [](auto& doc) {
         resource(doc, "image/ao")["image"]["extent"] = {1, 2, 3};
       },
       errc::wrong_type, "/resources/2/image/extent"},
      {"a zero extent",
       [](auto& doc) {
         resource(doc, "image/ao")["image"]["extent"] = {0, 16};
       },
       errc::invalid_image, "/resources/2/image/extent"},
      {"an extent past 16384",
       [](auto& doc) {
         resource(doc, "image/ao")["image"]["extent"] = {16385, 16};
       },
       errc::invalid_image, "/resources/2/image/extent"},
      {"zero layers", [](auto& doc) { resource(doc, "image/ao")["image"]["layers"] = 0; }, errc::invalid_image,
       "/resources/2/image/layers"},
      {"257 layers", [](auto& doc) { resource(doc, "image/ao")["image"]["layers"] = 257; }, errc::invalid_image,
       "/resources/2/image/layers"},
      {"zero mips", [](auto& doc) { resource(doc, "image/ao")["image"]["mips"] = 0; }, errc::invalid_image,
       "/resources/2/image/mips"},
      {"more mips than a fixed extent has",
       [](auto& doc) {
         resource(doc, "image/ao")["image"]["extent"] = {16, 4};
         resource(doc, "image/ao")["image"]["mips"] = 6;
       },
       errc::invalid_image, "/resources/2/image/mips"},
      {"more mips than a bucket's extent has",
       [](auto& doc) { resource(doc, "image/ao")["image"]["mips"] = 10; },  // 320x180 has 9
       errc::invalid_image, "/resources/2/image"},
      {"a bucket extent past 16384",
       [](auto& doc) {
         doc["buckets"][1]["capacity"] = {20000, 8, 1};
       },
       errc::invalid_image, "/resources/0/image"},
      {"an image and a buffer in one pool",
       [](auto& doc) {
         doc["resources"].push_back(buffer_x("pool/targets"));
         node(doc, "node/tonemap")["resources"].push_back("buffer/x");
         node(doc, "node/tonemap")["access"]["buffer/x"] = "write";
       },
       // Members are dealt in id order: buffer/x first, then image/ao differs.
       errc::incompatible_pool_member, "/resources/2"},
      {"a pool of images declared readback",
       [](auto& doc) {
         doc["pools"]["pool/history"] = {{"memory", "readback"}};
       },
       errc::invalid_memory_class, "/pools/pool~1history/memory"},
      {"a persistent imported image",
       [](auto& doc) {
         doc["pools"]["pool/history"] = {{"memory", "imported"}};
       },
       errc::invalid_image, "/resources/6/lifetime"},
      {"an interval pool of imported images", [](auto& doc) { doc["pools"]["pool/targets"]["memory"] = "imported"; },
       errc::invalid_liveness, "/pools/pool~1targets/liveness"},
  };
  for (const refusal& r : refusals) {
    INFO(r.what);
    const error e = both_parsers::refusal(images_edited(r.edit));
    CHECK(e == r.code);
    CHECK(e.path == r.path);
    CHECK_FALSE(e.detail.empty());
  }
}

TEST_CASE("images: every access that does not fit its image, queue or place is refused", "[binding][image]") {
  const std::vector<refusal> refusals{
      {"a buffer access on an image", [](auto& doc) { node(doc, "node/ssao")["access"]["image/ao"] = "write"; },
       errc::invalid_access, "/nodes/1/access/image~1ao"},
      {"an image without a declared access (read-write)",
       [](auto& doc) { node(doc, "node/ssao")["access"].erase("image/ao"); }, errc::invalid_access,
       "/nodes/1/access/image~1ao"},
      {"storage on d32-float",
       [](auto& doc) { node(doc, "node/ssao")["access"]["image/scene.depth"] = "storage-read"; },
       errc::invalid_image_access, "/nodes/1/access/image~1scene.depth"},
      {"storage on d16-unorm", [](auto& doc) { resource(doc, "image/out")["image"]["format"] = "d16-unorm"; },
       errc::invalid_image_access, "/nodes/5/access/image~1out"},
      {"storage on bc7-unorm", [](auto& doc) { resource(doc, "image/out")["image"]["format"] = "bc7-unorm"; },
       errc::invalid_image_access, "/nodes/5/access/image~1out"},
      {"a color attachment on bc1-rgba-srgb",
       [](auto& doc) { resource(doc, "image/scene.color")["image"]["format"] = "bc1-rgba-srgb"; },
       errc::invalid_image_access, "/nodes/0/access/image~1scene.color"},
      {"a color attachment on d24-unorm-s8-uint",
       [](auto& doc) { resource(doc, "image/scene.color")["image"]["format"] = "d24-unorm-s8-uint"; },
       errc::invalid_image_access, "/nodes/0/access/image~1scene.color"},
      {"a depth attachment on r16-unorm",
       [](auto& doc) { resource(doc, "image/scene.depth")["image"]["format"] = "r16-unorm"; },
       errc::invalid_image_access, "/nodes/0/access/image~1scene.depth"},
      {"a color attachment on d32-float",
       [](auto& doc) { node(doc, "node/gbuffer")["access"]["image/scene.depth"] = "color-attachment"; },
       errc::invalid_image_access, "/nodes/0/access/image~1scene.depth"},
      {"a depth attachment on a color format",
       [](auto& doc) { node(doc, "node/gbuffer")["access"]["image/scene.color"] = "depth-attachment"; },
       errc::invalid_image_access, "/nodes/0/access/image~1scene.color"},
      {"present on rgba16-float", [](auto& doc) { node(doc, "node/tonemap")["access"]["image/resolved"] = "present"; },
       errc::invalid_image_access, "/nodes/5/access/image~1resolved"},
      {"sampling on a transfer-queue node",
       [](auto& doc) {
         node(doc, "node/keep")["queue"] = "transfer";
         node(doc, "node/keep")["access"]["image/resolved"] = "sampled";
       },
       errc::invalid_image_access, "/nodes/4/access/image~1resolved"},
      {"a raster node on the async compute queue",
       [](auto& doc) { node(doc, "node/gbuffer")["queue"] = "async-compute"; }, errc::invalid_image_access,
       "/nodes/0/access/image~1scene.color"},
      {"a present on the async compute queue",
       [](auto& doc) {
         resource(doc, "image/out")["pool"] = "pool/window";
         doc["pools"]["pool/window"] = {{"memory", "imported"}};
         for (auto& b : doc["buckets"]) b["budgets"].push_back({{"pool", "pool/window"}, {"min", 0}, {"max", 0}});
         doc["nodes"].push_back({{"id", "node/present"},
                                 {"queue", "async-compute"},
                                 {"resources", {"image/out"}},
                                 {"after", {"node/tonemap"}},
                                 {"access", {{"image/out", "present"}}}});
       },
       errc::invalid_image_access, "/nodes/6/access/image~1out"},
      {"a vertex buffer on the async compute queue",
       [](auto& doc) {
         doc["resources"].push_back(buffer_x("pool/buffers"));
         for (auto& b : doc["buckets"]) b["budgets"].push_back({{"pool", "pool/buffers"}, {"min", 0}, {"max", 64}});
         node(doc, "node/tonemap")["queue"] = "async-compute";
         node(doc, "node/tonemap")["resources"].push_back("buffer/x");
         node(doc, "node/tonemap")["access"]["buffer/x"] = "vertex";
       },
       errc::invalid_access, "/nodes/5/access/buffer~1x"},
      {"a present of an image that is not imported",
       [](auto& doc) {
         doc["nodes"].push_back({{"id", "node/present"},
                                 {"resources", {"image/out"}},
                                 {"after", {"node/tonemap"}},
                                 {"access", {{"image/out", "present"}}}});
       },
       errc::invalid_image_access, "/nodes/6/access/image~1out"},
      {"a use after present",
       [](auto& doc) {
         // image/out, the engine's (imported), as only such an image is presented.
         resource(doc, "image/out")["pool"] = "pool/window";
         doc["pools"]["pool/window"] = {{"memory", "imported"}};
         for (auto& b : doc["buckets"]) b["budgets"].push_back({{"pool", "pool/window"}, {"min", 0}, {"max", 0}});
         doc["nodes"].push_back({{"id", "node/present"},
                                 {"resources", {"image/out"}},
                                 {"after", {"node/tonemap"}},
                                 {"access", {{"image/out", "present"}}}});
         doc["nodes"].push_back({{"id", "node/late"},
                                 {"resources", {"image/out"}},
                                 {"after", {"node/present"}},
                                 {"access", {{"image/out", "storage-read"}}}});
       },
       errc::invalid_image_access, "/nodes/7/access/image~1out"},
      {"an invocation image sampled before any write",
       [](auto& doc) {
         node(doc, "node/gbuffer")["resources"].push_back("image/lit");
         node(doc, "node/gbuffer")["access"]["image/lit"] = "sampled";
       },
       errc::image_read_before_write, "/nodes/0/access/image~1lit"},
      {"an invocation image's first use a read-modify-write",
       [](auto& doc) { node(doc, "node/ssao")["access"]["image/ao"] = "storage-read-write"; },
       errc::image_read_before_write, "/nodes/1/access/image~1ao"},
      {"an image access on a buffer",
       [](auto& doc) {
         doc["resources"].push_back(buffer_x("pool/buffers"));
         for (auto& b : doc["buckets"]) b["budgets"].push_back({{"pool", "pool/buffers"}, {"min", 0}, {"max", 64}});
         node(doc, "node/tonemap")["resources"].push_back("buffer/x");
         node(doc, "node/tonemap")["access"]["buffer/x"] = "sampled";
       },
       errc::invalid_access, "/nodes/5/access/buffer~1x"},
  };
  for (const refusal& r : refusals) {
    INFO(r.what);
    const error e = both_parsers::refusal(images_edited(r.edit));
    CHECK(e == r.code);
    CHECK(e.path == r.path);
    CHECK_FALSE(e.detail.empty());
  }
}

TEST_CASE("images: a raster node on async compute is refused naming the node, and compute nodes may run there",
          "[binding][image][queues]") {
  const error e =
      both_parsers::refusal(images_edited([](auto& doc) { node(doc, "node/gbuffer")["queue"] = "async-compute"; }));
  CHECK(e == errc::invalid_image_access);
  CHECK(e.detail.find("'node/gbuffer'") != std::string::npos);
  CHECK(e.detail.find("async-compute") != std::string::npos);
  CHECK(e.detail.find("'color-attachment'") != std::string::npos);
  // ssao samples and writes storage: it may run on async compute, the
  // lighting pass it feeds running after it.
  const plan p = both_parsers::parsed(images_edited([](auto& doc) {
    node(doc, "node/ssao")["queue"] = "async-compute";
    node(doc, "node/ssao")["after"] = {"node/gbuffer"};
    node(doc, "node/lighting")["after"] = {"node/ssao"};
  }));
  CHECK(p.nodes[1].queue == queue_kind::async_compute);
  CHECK(compile(p).has_value());
}

TEST_CASE("images: a persistent image may be read first, as it holds the last wave's contents", "[binding][image]") {
  // image/history's first use is taa's sampled read.
  const plan p = both_parsers::parsed(images_text());
  CHECK(p.nodes[3].access[1] == resource_access::sampled);
  CHECK(validate_plan(p).has_value());
}

TEST_CASE("images: an imported image may be read first, and a lane holds none of it", "[binding][image][imported]") {
  // present.json: image/engine (imported) is first read by node/check.
  const plan p = test::load_source_plan("examples/plans/present.json");
  const compiled_program c = test::compile_ok(p);
  const compiled_bucket& bucket = c.buckets[0];
  REQUIRE(bucket.lane.images.size() == 2);
  for (const lane_image& i : bucket.lane.images) {
    CHECK(i.imported);
    CHECK(i.initial == image_layout::undefined);
  }
  // The engine's images are no buffers the wave names, take no texels of
  // the lane's image window, and admission counts none of them.
  CHECK(bucket.lane.imports.empty());
  CHECK(bucket.image_window.size == 0);
  CHECK(bucket.admitted_lane_bytes() == bucket.lane_size_bytes);
  // Their first transitions start from undefined, which each wave replaces
  // with the layout it names; present-src last.
  const auto present = bucket.lane.node_transitions(2);
  REQUIRE(present.size() == 1);
  CHECK(present[0].to == image_layout::present_src);
  // The same image, not imported, could not be read first.
  plan local = p;
  local.pools.erase(std::remove_if(local.pools.begin(), local.pools.end(),
                                   [](const pool_option& o) { return o.pool.view() == "pool/engine"; }),
                    local.pools.end());
  CHECK(code_of(validate_plan(local)) == errc::image_read_before_write);
}

TEST_CASE("images: a plan built in code is checked as a file is", "[binding][image]") {
  const plan good = both_parsers::parsed(images_text());
  SECTION("a buffer's demand on an image") {
    plan p = good;
    p.resources[2].demand = resource_demand::fixed(64);
    CHECK(code_of(validate_plan(p)) == errc::invalid_image);
    CHECK(validate_plan(p).error().path == "/resources/2");
  }
  SECTION("an image in a v1 plan") {
    plan p = good;
    p.format = plan_format::v1;
    CHECK(code_of(validate_plan(p)) == errc::unknown_field);
  }
  SECTION("an access past the last one ferrum knows") {
    plan p = good;
    p.nodes[1].access[1] = static_cast<resource_access>(static_cast<unsigned>(last_resource_access) + 1);
    CHECK(code_of(validate_plan(p)) == errc::invalid_access);
    CHECK(code_of(hash_plan(p)) == errc::invalid_access);
  }
}

TEST_CASE("images: the hash covers every image field and keeps its pinned value", "[binding][image][hash]") {
  const plan p = both_parsers::parsed(images_text());
  CHECK(hash_plan(p).value().str() == pinned::images_hash.digest);
  const plan_hash base = hash_plan(p).value();
  const std::vector<std::function<void(image_desc&)>> edits{
      [](image_desc& i) { i.format = image_format::rgba8_unorm; },
      [](image_desc& i) {
        i.bucket_extent = false;
        i.width = 320;
        i.height = 180;
      },
      [](image_desc& i) { i.mips = 2; },
      [](image_desc& i) { i.layers = 2; },
  };
  for (const auto& edit : edits) {
    plan changed = p;
    edit(*changed.resources[3].image);
    CHECK(hash_plan(changed).value() != base);
  }
  // An image access differs from the buffer access it replaces.
  plan changed = p;
  changed.nodes[1].access[0] = resource_access::depth_read;
  CHECK(hash_plan(changed).value() != base);
  // Resources listed in another order are the same plan.
  plan reordered = p;
  std::reverse(reordered.resources.begin(), reordered.resources.end());
  CHECK(hash_plan(reordered).value() == base);
}

TEST_CASE("image_access: what each access reads, writes and needs", "[binding][image]") {
  CHECK_FALSE(is_image_access(resource_access::read_write));
  CHECK(is_image_access(resource_access::sampled));
  CHECK(access_reads(resource_access::sampled));
  CHECK_FALSE(access_writes(resource_access::sampled));
  CHECK(access_writes(resource_access::color_attachment));
  CHECK_FALSE(access_reads(resource_access::color_attachment));
  CHECK(access_reads(resource_access::storage_read_write));
  CHECK(access_writes(resource_access::storage_read_write));
  CHECK(layout_of(resource_access::storage_read) == image_layout::general);
  CHECK(layout_of(resource_access::depth_read) == image_layout::depth_read_only);
  CHECK(layout_of(resource_access::present) == image_layout::present_src);
  CHECK(format_takes(image_format::bgra8_unorm, resource_access::present));
  CHECK(format_takes(image_format::bgra8_srgb, resource_access::present));
  CHECK_FALSE(format_takes(image_format::bgra8_unorm, resource_access::depth_read));
  CHECK(transfer_queue_takes(resource_access::transfer_dst));
  CHECK_FALSE(transfer_queue_takes(resource_access::sampled));
  for (resource_access a = resource_access::read; a <= resource_access::present;
       a = static_cast<resource_access>(static_cast<int>(a) + 1))
    CHECK(enum_from_string<resource_access>(to_string(a)) == a);
  for (image_format f : image_formats) CHECK(image_format_from_string(to_string(f)) == f);
}

TEST_CASE("image formats: every name parses, and what no device does is refused with the plan", "[binding][image]") {
  CHECK(image_formats.size() == 28);
  CHECK(to_string(static_cast<image_format>(image_formats.size())) == "unknown");
  for (image_format f : image_formats) {
    INFO(to_string(f));
    const std::string text = images_edited([&](nlohmann::json& doc) {
      // image/history is sampled and copied into: every format takes both.
      resource(doc, "image/history")["image"]["format"] = std::string(to_string(f));
    });
    const plan p = both_parsers::parsed(text);
    CHECK(p.resources[index_of(nlohmann::json::parse(text)["resources"], "image/history")].image->format == f);
    CHECK(validate_plan(p).has_value());
  }
  // Depth formats take depth accesses only; block-compressed ones neither
  // storage nor attachments; present only the swapchains' four.
  for (image_format f : {image_format::d16_unorm, image_format::d24_unorm_s8_uint, image_format::d32_float_s8_uint}) {
    CHECK(format_takes(f, resource_access::depth_attachment));
    CHECK_FALSE(format_takes(f, resource_access::storage_write));
    CHECK_FALSE(format_takes(f, resource_access::color_attachment));
  }
  for (image_format f : {image_format::bc1_rgba_unorm, image_format::bc5_unorm, image_format::bc7_srgb}) {
    CHECK(format_takes(f, resource_access::sampled));
    CHECK(format_takes(f, resource_access::transfer_dst));
    CHECK_FALSE(format_takes(f, resource_access::storage_read));
    CHECK_FALSE(format_takes(f, resource_access::color_attachment));
    CHECK_FALSE(format_takes(f, resource_access::depth_read));
  }
  // What some device does is the device's to refuse.
  CHECK(format_takes(image_format::rgba8_srgb, resource_access::storage_write));
  CHECK(format_takes(image_format::r8_unorm, resource_access::storage_read_write));
  CHECK(format_takes(image_format::a2b10g10r10_unorm, resource_access::color_attachment));
  CHECK(format_takes(image_format::bgra8_unorm, resource_access::storage_write));
  CHECK_FALSE(format_takes(image_format::rgba16_float, resource_access::present));
  CHECK(format_takes(image_format::rgba8_srgb, resource_access::present));
  CHECK_FALSE(format_takes(image_format::r8_unorm, resource_access::present));
  // An unknown name lists the formats.
  const error unknown = both_parsers::refusal(
      images_edited([](nlohmann::json& doc) { resource(doc, "image/history")["image"]["format"] = "bc2-unorm"; }));
  CHECK(unknown == errc::unknown_value);
  CHECK(unknown.detail.find("'bc7-srgb'") != std::string::npos);
}

TEST_CASE("image formats: a level's bytes are whole blocks, and a bucket holds each image's", "[binding][image]") {
  CHECK(level_bytes(image_format::rgba8_unorm, 3, 5) == 60);
  CHECK(level_bytes(image_format::r8_unorm, 3, 5) == 15);
  CHECK(level_bytes(image_format::d32_float_s8_uint, 3, 5) == 120);
  CHECK(level_bytes(image_format::d24_unorm_s8_uint, 3, 5) == 60);
  CHECK(level_bytes(image_format::bc1_rgba_unorm, 1, 1) == 8);
  CHECK(level_bytes(image_format::bc7_unorm, 5, 4) == 32);
  CHECK(level_bytes(image_format::bc4_unorm, 8, 9) == 2 * 3 * 8);
  CHECK(is_depth(image_format::d24_unorm_s8_uint));
  CHECK(has_stencil(image_format::d32_float_s8_uint));
  CHECK_FALSE(has_stencil(image_format::d16_unorm));
  CHECK(is_block_compressed(image_format::bc3_srgb));
  CHECK_FALSE(is_block_compressed(image_format::b10g11r11_float));
  const plan p = both_parsers::parsed(images_edited([](nlohmann::json& doc) {
    // 10x7 in 4x4 blocks of 16 bytes, 2 mips: 3x2 + 2x1 blocks.
    resource(doc, "image/history")["image"] = {{"format", "bc7-srgb"}, {"extent", {10, 7}}, {"mips", 2}};
    resource(doc, "image/scene.depth")["image"]["format"] = "d32-float-s8-uint";
  }));
  const auto bytes_of = [&](std::string_view id, const bucket_capacity& dims) {
    for (const resource_descriptor& r : p.resources)
      if (r.id.view() == id) return resolve_demand(r, dims).value();
    FAIL("no " << id);
    return std::uint64_t{0};
  };
  CHECK(bytes_of("image/history", {320, 180, 1}) == (3 * 2 + 2 * 1) * 16);
  CHECK(bytes_of("image/scene.depth", {320, 180, 1}) == 320 * 180 * 8);
  CHECK(bytes_of("image/scene.depth", {5, 3, 1}) == 5 * 3 * 8);
  REQUIRE(compile(p).has_value());
}
