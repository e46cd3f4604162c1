// Tests of frame_builder: example frames declared in C++ hash as their plan
// files; the derived order, pools, contracts and parameter blocks; the
// written plan reads back to the same hash. Its refusals:
// frame_builder_errors_test.cpp.
#include "ferrum/binding/frame_builder.hpp"
#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/plan_json.hpp"

#include "example_plans.hpp"
#include "plan_builder.hpp"

#include <algorithm>
#include <string>
#include <vector>

using namespace ferrum;

namespace {

// The contracts the example files spell by hand (a binding's, an f32
// storage buffer's), which these frames take as overrides.
constexpr std::string_view args_contract = "5e1d9a3c7b2f0e8d4a6c1b9f3e7d2a5c8b0f4e6d1a3c9b7f2e5d8a0c4b6f1e3d";
constexpr std::string_view f32_contract = "c2a8e4f06b1d9c3a7e5f2b8d0c6a4e1f9b3d7c5a2e8f0b6d4c1a9e3f7b5d2c8a";

constexpr subresource_range layer(std::uint32_t i) { return {0, 0, i, 1}; }
constexpr subresource_range mip(std::uint32_t i) { return {i, 1, 0, 0}; }

image_info screen(image_format format) { return {.image = {.format = format, .bucket_extent = true}}; }

// examples/plans/deferred_frame.json, declared.
frame_builder deferred_frame_declared() {
  using a = resource_access;
  frame_builder f({.lanes = 2, .budget_bytes = 16777216});
  const node_handle upload = f.add_pass(
      "node/upload", {.parameter_bytes = 64, .parameters = "resource/frame.args", .parameter_contract = args_contract});
  const buffer_handle in = f.add_buffer("resource/in", {.size = resource_demand::fixed(2048),
                                                        .element = element_type::f32,
                                                        .alignment = 16,
                                                        .memory = memory_class::upload,
                                                        .pool = "pool/input",
                                                        .contract = f32_contract});
  const buffer_handle out = f.add_buffer("resource/out", {.size = resource_demand::fixed(2048),
                                                          .element = element_type::f32,
                                                          .alignment = 16,
                                                          .memory = memory_class::readback,
                                                          .pool = "pool/output",
                                                          .contract = f32_contract});
  const image_handle light_in = f.add_image("image/light.in", screen(image_format::rgba32_float));
  const image_handle shadow = f.add_image(
      "image/shadow", {.image = {.format = image_format::d32_float, .width = 16, .height = 16, .layers = 3}});
  const image_handle albedo = f.add_image("image/gbuffer.albedo", screen(image_format::rgba8_srgb));
  const image_handle normal = f.add_image("image/gbuffer.normal", screen(image_format::rg16_float));
  const image_handle depth = f.add_image("image/gbuffer.depth", screen(image_format::d32_float_s8_uint));
  const image_handle hdr = f.add_image("image/hdr", screen(image_format::rgba32_float));
  const image_handle bloom = f.add_image(
      "image/bloom",
      {.image = {.format = image_format::rgba32_float, .bucket_extent = true, .mips = 3, .extent_divisor = 2}});
  image_info history = screen(image_format::rgba32_float);
  history.lifetime = allocation_lifetime::history;
  history.pool = "pool/history";
  const image_handle taa = f.add_image("image/taa", history);
  const image_handle taa_previous = f.add_previous("image/taa.previous", taa);
  image_info engine = screen(image_format::rgba32_float);
  engine.memory = memory_class::imported;
  engine.pool = "pool/engine";
  const image_handle frame = f.add_image("image/frame", engine);

  f.access(upload, in, a::read);
  f.access(upload, light_in, a::transfer_dst);
  std::vector<node_handle> cascades;
  for (std::uint32_t i = 0; i < 3; ++i) {
    cascades.push_back(f.add_pass("node/shadow.cascade" + std::to_string(i)));
    f.access(cascades.back(), shadow, a::depth_attachment, layer(i));
  }
  const node_handle gbuffer = f.add_pass("node/gbuffer");
  f.access(gbuffer, albedo, a::color_attachment);
  f.access(gbuffer, normal, a::color_attachment);
  f.access(gbuffer, depth, a::depth_attachment);
  const node_handle lighting = f.add_pass("node/lighting");
  for (const image_handle read : {light_in, albedo, normal, depth}) f.access(lighting, read, a::sampled);
  for (std::uint32_t i = 0; i < 3; ++i) f.access(lighting, shadow, a::sampled, layer(i));
  f.access(lighting, hdr, a::storage_write);
  const node_handle down0 = f.add_pass("node/bloom.down0");
  f.access(down0, hdr, a::sampled);
  f.access(down0, bloom, a::storage_write, mip(0));
  for (std::uint32_t i = 1; i < 3; ++i) {
    const node_handle down = f.add_pass("node/bloom.down" + std::to_string(i));
    f.access(down, bloom, a::sampled, mip(i - 1));
    f.access(down, bloom, a::storage_write, mip(i));
  }
  for (std::uint32_t i = 2; i > 0; --i) {
    const node_handle up = f.add_pass("node/bloom.up" + std::to_string(i - 1));
    f.access(up, bloom, a::sampled, mip(i));
    f.access(up, bloom, a::storage_read_write, mip(i - 1));
  }
  const node_handle resolve = f.add_pass("node/taa");
  f.access(resolve, hdr, a::sampled);
  f.access(resolve, bloom, a::sampled, mip(0));
  f.access(resolve, taa_previous, a::sampled);
  f.access(resolve, taa, a::storage_write);
  const node_handle tonemap = f.add_pass("node/tonemap");
  f.access(tonemap, taa, a::sampled);
  f.access(tonemap, frame, a::storage_write);
  const node_handle readback = f.add_pass("node/readback");
  f.access(readback, frame, a::transfer_src);
  f.access(readback, out, a::write);
  f.add_bucket("frame", {16, 8, 1},
               {{"pool/bindings", 0, 4096},
                {"pool/engine", 0, 1048576},
                {"pool/history", 0, 1048576},
                {"pool/input", 0, 65536},
                {"pool/output", 0, 65536},
                {"pool/targets", 0, 4194304}});
  return f;
}

// The plan a builder builds, which must.
plan built_plan(const frame_builder& f) {
  result<plan> built = f.build();
  INFO((built ? std::string() : built.error().what()));
  REQUIRE(built.has_value());
  return std::move(*built);
}

plan deferred_frame() { return built_plan(deferred_frame_declared()); }

// A scaled f32 buffer as examples/plans/async_compute.json's.
buffer_info per_unit(allocation_lifetime lifetime = allocation_lifetime::invocation, std::string_view pool = {}) {
  return {.size = resource_demand::scaled(0, 4096, 0),
          .element = element_type::f32,
          .lifetime = lifetime,
          .pool = pool,
          .contract = f32_contract};
}

pass_info with_args(queue_kind queue = queue_kind::compute) {
  return {.queue = queue, .parameter_bytes = 64, .parameter_contract = args_contract};
}

// A pass with a parameter block, using buffers only.
void buffer_pass(frame_builder& f, std::string_view name, queue_kind queue,
                 std::initializer_list<std::pair<buffer_handle, resource_access>> uses) {
  const node_handle n = f.add_pass(name, with_args(queue));
  for (const auto& [buffer, how] : uses) f.access(n, buffer, how);
}

// examples/plans/async_compute.json, declared: no `after` anywhere.
frame_builder async_compute_declared() {
  using a = resource_access;
  frame_builder f({.lanes = 2, .budget_bytes = 1048576});
  const buffer_handle input = f.add_buffer("resource/input", per_unit());
  const buffer_handle visible = f.add_buffer("resource/visible", per_unit());
  const buffer_handle lit = f.add_buffer("resource/lit", per_unit());
  const buffer_handle counts = f.add_buffer("resource/counts", per_unit());
  const buffer_handle frame = f.add_buffer("resource/frame", per_unit(allocation_lifetime::persistent, "pool/frame"));
  buffer_pass(f, "node/prepare", queue_kind::compute, {{input, a::write}});
  buffer_pass(f, "node/cull", queue_kind::async_compute, {{input, a::read}, {visible, a::write}});
  buffer_pass(f, "node/shade", queue_kind::compute, {{input, a::read}, {lit, a::write}});
  buffer_pass(f, "node/reduce", queue_kind::async_compute, {{visible, a::read}, {counts, a::write}});
  buffer_pass(f, "node/compose", queue_kind::compute, {{lit, a::read}, {counts, a::read}, {frame, a::read_write}});
  f.add_bucket("frame", {1, 1, 1}, {{"pool/bindings", 0, 320}, {"pool/frame", 0, 4096}, {"pool/transient", 0, 16384}});
  return f;
}

plan async_compute() { return built_plan(async_compute_declared()); }

// examples/plans/imported.json, declared.
frame_builder imported_declared() {
  using a = resource_access;
  frame_builder f({.lanes = 2, .budget_bytes = 262144});
  buffer_info mesh_info = per_unit(allocation_lifetime::persistent);
  mesh_info.size = resource_demand::fixed(8192);
  mesh_info.memory = memory_class::imported;
  const buffer_handle mesh = f.add_buffer("resource/mesh", mesh_info);
  mesh_info.size = resource_demand::fixed(1024);
  const buffer_handle lut = f.add_buffer("resource/lut", mesh_info);
  buffer_info frame_info = per_unit();
  frame_info.memory = memory_class::imported;
  const buffer_handle frame = f.add_buffer("resource/frame", frame_info);
  const buffer_handle state = f.add_buffer("resource/state", per_unit(allocation_lifetime::persistent, "pool/state"));
  buffer_pass(f, "node/upload", queue_kind::transfer, {{mesh, a::write}});
  buffer_pass(f, "node/simulate", queue_kind::compute, {{mesh, a::read}, {lut, a::read}, {state, a::read_write}});
  buffer_pass(f, "node/shade", queue_kind::compute, {{state, a::read}, {frame, a::write}});
  for (const std::uint64_t d0 : {1, 4})
    f.add_bucket("frame", {d0, 1, 1}, {{"pool/bindings", 0, 256}, {"pool/engine", 0, 65536}, {"pool/state", 0, 65536}});
  return f;
}

plan imported() { return built_plan(imported_declared()); }

std::vector<std::string> after_of(const plan& p, std::string_view node) {
  for (const plan_node& n : p.nodes)
    if (n.id.view() == node) {
      std::vector<std::string> out;
      for (const node_id& d : n.after) out.push_back(d.str());
      return out;
    }
  FAIL("no node " << node);
  return {};
}

}  // namespace

TEST_CASE("frame builder: the example frames declared in C++ hash as their plan files", "[frame_builder]") {
  const auto check = [](const plan& built, std::string_view file) {
    INFO(file);
    INFO(write_plan_json(built));
    const plan expected = test::load_source_plan(std::string("examples/plans/") + std::string(file));
    CHECK(hash_plan(built).value() == hash_plan(expected).value());
    // The written plan is the file's equivalent: it reads back to the hash.
    CHECK(hash_plan(parse_plan(write_plan_json(built)).value()).value() == hash_plan(expected).value());
  };
  check(deferred_frame(), "deferred_frame.json");
  check(async_compute(), "async_compute.json");
  check(imported(), "imported.json");
}

TEST_CASE("frame builder: hash() of the example frames is hash_plan(build())", "[frame_builder]") {
  for (frame_builder (*declare)() : {deferred_frame_declared, async_compute_declared, imported_declared}) {
    frame_builder f = declare();
    const plan_hash expected = hash_plan(built_plan(f)).value();
    CHECK(f.hash().value() == expected);
    // Taken twice (the second from the encoding kept), the same.
    CHECK(f.hash().value() == expected);
  }
}

TEST_CASE("frame builder: hash() covers what only some frames declare", "[frame_builder]") {
  using a = resource_access;
  // Kept images and buffers, no culling, an image a fraction of the
  // bucket's, the engine's image, a readback buffer, a history pair.
  for (const bool cull : {true, false}) {
    frame_builder f({.cull = cull});
    image_info kept_image = screen(image_format::rgba16_float);
    kept_image.kept = true;
    const image_handle shown = f.add_image("image/shown", kept_image);
    const image_handle small = f.add_image(
        "image/small", {.image = {.format = image_format::r32_float, .bucket_extent = true, .extent_divisor = 4}});
    image_info engine = screen(image_format::rgba8_unorm);
    engine.memory = memory_class::imported;
    const image_handle target = f.add_image("image/target", engine);
    image_info history = screen(image_format::rgba16_float);
    history.lifetime = allocation_lifetime::history;
    const image_handle now = f.add_image("image/now", history);
    const image_handle before = f.add_previous("image/before", now);
    const buffer_handle out = f.add_buffer(
        "resource/out", {.size = resource_demand::fixed(256), .memory = memory_class::readback, .kept = true});
    const node_handle draw = f.add_pass("node/draw", {.parameter_bytes = 16});
    f.access(draw, before, a::sampled);
    f.access(draw, now, a::storage_write);
    f.access(draw, small, a::storage_write);
    f.access(draw, shown, a::storage_write);
    const node_handle show = f.add_pass("node/show");
    f.access(show, small, a::sampled);
    f.access(show, target, a::storage_write);
    f.access(show, out, a::write);
    f.add_bucket("frame", {64, 32, 1});
    const plan p = built_plan(f);
    CHECK(f.hash().value() == hash_plan(p).value());
  }
}

TEST_CASE("frame builder: a pass runs after what it reads, with no 'after' implied by another", "[frame_builder]") {
  const plan p = deferred_frame();
  // The cascades write layers of one image, which no access overlaps.
  CHECK(after_of(p, "node/shadow.cascade1").empty());
  CHECK(after_of(p, "node/lighting") == std::vector<std::string>{"node/upload", "node/shadow.cascade0",
                                                                 "node/shadow.cascade1", "node/shadow.cascade2",
                                                                 "node/gbuffer"});
  // bloom.up1 rewrites mip 1 (down1 wrote it, down2 read it): down2 alone,
  // which runs after down1.
  CHECK(after_of(p, "node/bloom.up1") == std::vector<std::string>{"node/bloom.down2"});
  CHECK(after_of(p, "node/taa") == std::vector<std::string>{"node/bloom.up0"});
}

TEST_CASE("frame builder: across queues an image needed in two layouts is ordered, on one queue not",
          "[frame_builder]") {
  frame_builder f;
  const image_handle color = f.add_image("image/color", screen(image_format::rgba8_unorm));
  const node_handle draw = f.add_pass("node/draw");
  f.access(draw, color, resource_access::storage_write);
  const node_handle sample = f.add_pass("node/sample");
  f.access(sample, color, resource_access::sampled);
  const node_handle copy = f.add_pass("node/copy");
  f.access(copy, color, resource_access::transfer_src);
  const node_handle other = f.add_pass("node/other", {.queue = queue_kind::transfer});
  f.access(other, color, resource_access::transfer_src);
  const plan p = f.build().value();
  CHECK(after_of(p, "node/copy") == std::vector<std::string>{"node/draw"});
  // node/other, on the transfer queue: after node/sample (another layout),
  // which runs after node/draw; node/copy has its layout.
  CHECK(after_of(p, "node/other") == std::vector<std::string>{"node/sample"});
}

TEST_CASE("frame builder: explicit 'after' for what the data does not say", "[frame_builder]") {
  frame_builder f;
  const buffer_handle a = f.add_buffer("resource/a", {.size = resource_demand::fixed(256)});
  const buffer_handle b = f.add_buffer("resource/b", {.size = resource_demand::fixed(256)});
  const node_handle first = f.add_pass("node/first");
  f.access(first, a, resource_access::write);
  const node_handle second = f.add_pass("node/second");
  f.access(second, b, resource_access::write);
  CHECK(after_of(f.build().value(), "node/second").empty());
  f.after(second, first);
  CHECK(after_of(f.build().value(), "node/second") == std::vector<std::string>{"node/first"});
}

TEST_CASE("frame builder: derived pools, contracts and parameter blocks compile", "[frame_builder]") {
  frame_builder f;
  const buffer_handle data =
      f.add_buffer("resource/data", {.size = resource_demand::scaled(0, 64, 0), .element = element_type::f32});
  const buffer_handle kept = f.add_buffer("resource/kept", {.size = resource_demand::fixed(1024),
                                                            .element = element_type::f32,
                                                            .lifetime = allocation_lifetime::persistent});
  const image_handle target = f.add_image("image/target", screen(image_format::rgba16_float));
  const node_handle make = f.add_pass("node/make", {.parameter_bytes = 48});
  f.access(make, data, resource_access::write);
  f.access(make, target, resource_access::storage_write);
  const node_handle use = f.add_pass("use", {.parameter_bytes = 16});
  f.access(use, data, resource_access::read);
  f.access(use, target, resource_access::sampled);
  f.access(use, kept, resource_access::read_write);
  f.add_bucket("frame", {64, 32, 1});
  const plan p = f.build().value();
  const auto resource = [&](std::string_view id) {
    return *std::find_if(p.resources.begin(), p.resources.end(),
                         [&](const resource_descriptor& r) { return r.id.view() == id; });
  };
  CHECK(resource("resource/make.args").kind == allocation_kind::binding);
  CHECK(resource("resource/make.args").alignment == 16);
  CHECK(resource("resource/make.args").pool.view() == "pool/bindings");
  CHECK(resource("resource/use.args").alignment == 16);
  CHECK(p.nodes[1].binding->view() == "resource/use.args");
  CHECK(resource("resource/data").pool.view() == "pool/transient");
  CHECK(resource("resource/kept").pool.view() == "pool/persistent");
  CHECK(resource("image/target").pool.view() == "pool/targets");
  CHECK(resource("resource/data").storage.digest == derived_contract(buffer_usage::storage, element_type::f32));
  CHECK(derived_contract(buffer_usage::storage, element_type::f32) !=
        derived_contract(buffer_usage::storage, element_type::u8));
  CHECK(derived_contract(buffer_usage::binding, element_type::u8).size() == 64);
  REQUIRE(p.buckets.size() == 1);
  CHECK(p.buckets[0].budgets.size() == 4);
  // The transient pools are interval, the others not listed.
  CHECK(p.pools.size() == 2);
  CHECK(test::compile_ok(p).buckets.size() == 1);
}

TEST_CASE("frame builder: a pass without parameters has no binding slot", "[frame_builder]") {
  frame_builder f;
  const buffer_handle out = f.add_buffer("resource/out", {.size = resource_demand::fixed(64)});
  f.access(f.add_pass("node/only"), out, resource_access::write);
  const plan p = f.build().value();
  CHECK_FALSE(p.nodes[0].binding.has_value());
  CHECK(p.resources.size() == 1);
  CHECK(p.buckets[0].id().value().str() == "frame@1x1x1");
}

TEST_CASE("frame builder: the embedding guide's frame builds, compiles and orders tonemap after lighting",
          "[frame_builder]") {
  // docs/embedding.md, "A frame declared in C++".
  frame_builder f({.lanes = 2});
  auto hdr = f.add_image("image/hdr", {.image = {.format = image_format::rgba16_float, .bucket_extent = true}});
  auto ldr = f.add_image("image/ldr", {.image = {.format = image_format::rgba8_unorm, .bucket_extent = true},
                                       .memory = memory_class::imported});
  auto lights = f.add_buffer(
      "resource/lights",
      {.size = resource_demand::fixed(4096), .element = element_type::f32, .memory = memory_class::upload});
  auto light = f.add_pass("node/lighting", {.parameter_bytes = 64});
  f.access(light, lights, resource_access::read);
  f.access(light, hdr, resource_access::storage_write);
  auto tonemap = f.add_pass("node/tonemap");
  f.access(tonemap, hdr, resource_access::sampled);
  f.access(tonemap, ldr, resource_access::storage_write);
  f.add_bucket("frame", {1920, 1080, 1});
  const plan p = f.build().value();
  CHECK(after_of(p, "node/tonemap") == std::vector<std::string>{"node/lighting"});
  CHECK_FALSE(p.nodes[1].binding.has_value());
  CHECK(hash_plan(parse_plan(write_plan_json(p)).value()).value() == hash_plan(p).value());
  CHECK(test::compile_ok(p).buckets.size() == 1);
}
