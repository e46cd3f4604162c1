// Tests of culling (docs/design.md, "Culling"): which nodes of a v2 plan
// compile culls and why, what keeps a writer live (imported, host-read,
// persistent, history and kept outputs, a live reader later, a present
// access, no declared write), the culled node's place in the lane recipe
// (no uses, no barrier, no image of its own), a v1 plan and `"cull": false`
// culling nothing, and the parser's `kept` and `cull`.
#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/compiled_program_file.hpp"
#include "ferrum/binding/plan_json.hpp"

#include "both_parsers.hpp"
#include "culling_plans.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

using namespace ferrum;
using culling_plans::cull_buffer;
using culling_plans::cull_chain;
using culling_plans::cull_node;

namespace {

nlohmann::json& cull_resource(nlohmann::json& doc, std::string_view id) {
  for (auto& r : doc["resources"])
    if (r["id"] == id) return r;
  FAIL("no resource " << id);
  return doc;
}

compiled_program cull_compiled(const nlohmann::json& doc) {
  const plan p = both_parsers::parsed(doc.dump());
  auto program = compile(p);
  REQUIRE(program.has_value());
  return std::move(*program);
}

std::vector<bool> culled_flags(const compiled_program& program) {
  std::vector<bool> out;
  for (std::size_t n = 0; n < program.node_count; ++n) out.push_back(program.culled(n));
  return out;
}

// Moves resource/z into a pool of its own, with pool options `options`.
nlohmann::json cull_with_z_in(nlohmann::json doc, nlohmann::json options) {
  cull_resource(doc, "resource/z")["pool"] = "pool/out";
  doc["pools"] = {{"pool/out", options}};
  doc["buckets"][0]["budgets"].push_back({{"pool", "pool/out"}, {"min", 0}, {"max", 65536}});
  return doc;
}

}  // namespace

TEST_CASE("culling: the nodes whose writes nothing live reads are culled, with why", "[culling]") {
  // node/c's resource/z is read by nothing: c is culled; then y is read by
  // no live node, so b is, and then a.
  const compiled_program program = cull_compiled(cull_chain());
  CHECK(culled_flags(program) == std::vector<bool>{true, true, true});
  CHECK(program.culled_nodes == 3);
  CHECK(program.first_live_node == 3);
  REQUIRE(program.culling[2].writes.size() == 1);
  CHECK(program.culling[2].writes[0].view() == "resource/z");
  CHECK(program.culling[2].text() == "writes resource/z, which nothing live reads");
  CHECK(program.culling[0].text() == "writes resource/x, which nothing live reads");
  // Nothing of theirs reaches the lane recipe: no uses, no barrier.
  const lane_recipe& lane = program.buckets[0].lane;
  CHECK(lane.uses.empty());
  CHECK(lane.barriers_per_wave() == 0);
}

TEST_CASE("culling: an output kept, imported, host-read, persistent or history keeps its writers live", "[culling]") {
  nlohmann::json doc;
  SECTION("kept") {
    doc = cull_chain();
    cull_resource(doc, "resource/z")["kept"] = true;
  }
  SECTION("in a readback pool") { doc = cull_with_z_in(cull_chain(), {{"memory", "readback"}}); }
  SECTION("in an upload pool, which the host sees too") { doc = cull_with_z_in(cull_chain(), {{"memory", "upload"}}); }
  SECTION("in an imported pool") { doc = cull_with_z_in(cull_chain(), {{"memory", "imported"}}); }
  SECTION("persistent") {
    doc = cull_chain();
    cull_resource(doc, "resource/z")["lifetime"] = "persistent";
  }
  SECTION("history") {
    doc = cull_chain();
    nlohmann::json current = cull_buffer("resource/z", "pool/history", "history");
    nlohmann::json previous = cull_buffer("resource/z.previous", "pool/history", "history");
    previous["history_of"] = "resource/z";
    cull_resource(doc, "resource/z") = current;
    doc["resources"].push_back(previous);
    doc["nodes"][0] = cull_node("node/a", {{"resource/z.previous", "read"}, {"resource/x", "write"}});
    doc["buckets"][0]["budgets"].push_back({{"pool", "pool/history"}, {"min", 0}, {"max", 65536}});
  }
  const compiled_program program = cull_compiled(doc);
  // c is live for its output, b and a because a live node reads what they write.
  CHECK(culled_flags(program) == std::vector<bool>{false, false, false});
  CHECK(program.culling[0].text() == "live");
  CHECK(program.buckets[0].lane.node_uses(1).size() == 2);
}

TEST_CASE("culling: a node is live only where a live node reads it later", "[culling]") {
  nlohmann::json doc = cull_chain();
  cull_resource(doc, "resource/y")["kept"] = true;
  // node/b's y is kept: a and b live; c's z is read by nothing.
  CHECK(culled_flags(cull_compiled(doc)) == std::vector<bool>{false, false, true});
  // A read earlier than the write does not count: node/d reads z before c writes it.
  doc = cull_chain();
  doc["nodes"].insert(doc["nodes"].begin(), cull_node("node/d", {{"resource/z", "read"}, {"resource/w", "write"}}));
  doc["resources"].push_back(cull_buffer("resource/w", "pool/work"));
  cull_resource(doc, "resource/w")["kept"] = true;
  const compiled_program program = cull_compiled(doc);
  CHECK(culled_flags(program) == std::vector<bool>{false, true, true, true});
  // A node writing two resources, neither read: both named.
  CHECK(program.culling[3].text() == "writes resource/z, which nothing live reads");
}

TEST_CASE("culling: no declared write keeps a node live, and what it reads", "[culling]") {
  nlohmann::json doc = cull_chain();
  SECTION("read only: effects ferrum cannot see") {
    doc["nodes"][2] = cull_node("node/c", {{"resource/y", "read"}, {"resource/z", "read"}});
  }
  SECTION("a reader after the last writer") { doc["nodes"].push_back(cull_node("node/d", {{"resource/z", "read"}})); }
  CHECK(cull_compiled(doc).culled_nodes == 0);
}

TEST_CASE("culling: a v1 plan, and a v2 plan with cull false, cull nothing", "[culling]") {
  nlohmann::json doc = cull_chain();
  doc["cull"] = false;
  const compiled_program off = cull_compiled(doc);
  CHECK(off.culled_nodes == 0);
  CHECK(off.buckets[0].lane.uses.size() == 5);
  // A v1 plan: no accesses say what is output.
  nlohmann::json v1 = cull_chain();
  v1["format"] = "ferrum.plan.v1";
  for (auto& n : v1["nodes"]) n.erase("access");
  CHECK(cull_compiled(v1).culled_nodes == 0);
}

TEST_CASE("culling: an image only culled nodes use is not made", "[culling]") {
  nlohmann::json doc = cull_chain();
  doc["resources"].push_back({{"id", "resource/scratch"},
                              {"pool", "pool/images"},
                              {"kind", "workspace"},
                              {"lifetime", "invocation"},
                              {"image", {{"format", "rgba8-unorm"}, {"extent", {16, 16}}}}});
  doc["buckets"][0]["budgets"].push_back({{"pool", "pool/images"}, {"min", 0}, {"max", 65536}});
  doc["nodes"][2] =
      cull_node("node/c", {{"resource/y", "read"}, {"resource/z", "write"}, {"resource/scratch", "storage-write"}});
  cull_resource(doc, "resource/y")["kept"] = true;
  const compiled_program program = cull_compiled(doc);
  CHECK(culled_flags(program) == std::vector<bool>{false, false, true});
  CHECK(program.culling[2].text() == "writes resource/z and resource/scratch, none of which anything live reads");
  CHECK(program.buckets[0].lane.images.empty());
  CHECK(program.buckets[0].lane.node_uses(2).empty());
  CHECK(program.buckets[0].lane.node_transitions(2).empty());
  // With culling off, the lane makes it.
  doc["cull"] = false;
  CHECK(cull_compiled(doc).buckets[0].lane.images.size() == 1);
}

TEST_CASE("culling: a buffer only culled nodes use takes no bytes, and one a live node uses keeps them", "[culling]") {
  // resource/y kept: node/a and node/b live, node/c culled; resource/z only
  // c uses.
  nlohmann::json doc = cull_chain();
  cull_resource(doc, "resource/y")["kept"] = true;
  const auto capacity_of = [](const compiled_program& program, std::string_view id) {
    for (const capacity_layout& layout : program.buckets[0].capacity_layouts)
      for (const projection& p : layout.projections)
        if (p.resource.view() == id) return p.capacity;
    FAIL("no projection of " << id);
    return std::uint64_t{0};
  };
  const compiled_program culled = cull_compiled(doc);
  REQUIRE(culled_flags(culled) == std::vector<bool>{false, false, true});
  CHECK(capacity_of(culled, "resource/z") == 0);
  CHECK(capacity_of(culled, "resource/y") == 256);
  CHECK(capacity_of(culled, "resource/x") == 256);
  doc["cull"] = false;
  const compiled_program all = cull_compiled(doc);
  CHECK(capacity_of(all, "resource/z") == 256);
  CHECK(culled.buckets[0].lane_size_bytes + 256 == all.buckets[0].lane_size_bytes);
  // What the host writes keeps its bytes: resource/u, of an upload pool,
  // which only the culled node/c reads.
  doc = cull_chain();
  cull_resource(doc, "resource/y")["kept"] = true;
  doc["resources"].push_back(cull_buffer("resource/u", "pool/up"));
  doc["pools"] = {{"pool/up", {{"memory", "upload"}}}};
  doc["buckets"][0]["budgets"].push_back({{"pool", "pool/up"}, {"min", 0}, {"max", 65536}});
  doc["nodes"][2] = cull_node("node/c", {{"resource/y", "read"}, {"resource/u", "read"}, {"resource/z", "write"}});
  const compiled_program upload = cull_compiled(doc);
  REQUIRE(culled_flags(upload) == std::vector<bool>{false, false, true});
  CHECK(capacity_of(upload, "resource/u") == 256);
  CHECK(capacity_of(upload, "resource/z") == 0);
}

TEST_CASE("culling: a loaded program file culls as compile does", "[culling]") {
  const plan p = both_parsers::parsed(cull_chain().dump());
  const compiled_program program = compile(p).value();
  const auto bytes = save_compiled_program(program, p).value();
  const compiled_program loaded = load_compiled_program(bytes, p).value();
  CHECK(loaded.culling == program.culling);
  CHECK(loaded.culled_nodes == 3);
}

TEST_CASE("culling: kept and cull hash only where a plan uses them, and are strict", "[culling]") {
  const plan plain = both_parsers::parsed(cull_chain().dump());
  nlohmann::json doc = cull_chain();
  cull_resource(doc, "resource/z")["kept"] = false;
  doc["cull"] = true;
  // Their defaults, written out, hash as a plan without them.
  CHECK(hash_plan(both_parsers::parsed(doc.dump())).value() == hash_plan(plain).value());
  cull_resource(doc, "resource/z")["kept"] = true;
  const plan_hash kept = hash_plan(both_parsers::parsed(doc.dump())).value();
  CHECK(kept != hash_plan(plain).value());
  doc = cull_chain();
  doc["cull"] = false;
  const plan_hash off = hash_plan(both_parsers::parsed(doc.dump())).value();
  CHECK(off != hash_plan(plain).value());
  CHECK(off != kept);

  SECTION("not a boolean") {
    nlohmann::json bad = cull_chain();
    cull_resource(bad, "resource/z")["kept"] = "yes";
    const error e = both_parsers::rejection(bad.dump());
    CHECK(e.code == make_error_code(errc::wrong_type));
    CHECK(e.path == "/resources/2/kept");
    bad = cull_chain();
    bad["cull"] = 0;
    const error f = both_parsers::rejection(bad.dump());
    CHECK(f.code == make_error_code(errc::wrong_type));
    CHECK(f.path == "/cull");
  }
  SECTION("in a v1 plan") {
    nlohmann::json v1 = cull_chain();
    v1["format"] = "ferrum.plan.v1";
    for (auto& n : v1["nodes"]) n.erase("access");
    cull_resource(v1, "resource/z")["kept"] = true;
    const error e = both_parsers::rejection(v1.dump());
    CHECK(e.code == make_error_code(errc::unknown_field));
    CHECK(e.path == "/resources/2/kept");
    v1 = cull_chain();
    v1["format"] = "ferrum.plan.v1";
    for (auto& n : v1["nodes"]) n.erase("access");
    v1["cull"] = false;
    const error f = both_parsers::rejection(v1.dump());
    CHECK(f.code == make_error_code(errc::unknown_field));
    CHECK(f.path == "/cull");
    // Built in code: validate_plan says the same.
    plan p = both_parsers::parsed(cull_chain().dump());
    p.format = plan_format::v1;
    for (plan_node& n : p.nodes) n.access.clear();
    p.resources[2].kept = true;
    const auto refused = validate_plan(p);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().path == "/resources/2/kept");
    p.resources[2].kept = false;
    p.cull = false;
    const auto off_refused = validate_plan(p);
    REQUIRE_FALSE(off_refused.has_value());
    CHECK(off_refused.error().path == "/cull");
  }
}
