// Tests of history resources (docs/plan-format.md, "History"): a current
// that a wave writes and its previous (`history_of`), which holds what the
// wave before wrote. The example plan, the lane recipe's marks (roles,
// pairs, transfer-dst for clearing, no lane memory), the hash's part, and
// every refusal with its code and JSON pointer.
#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/compiled_program_file.hpp"
#include "ferrum/binding/plan_json.hpp"

#include "both_parsers.hpp"
#include "example_plans.hpp"
#include "pinned_digests.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

using namespace ferrum;

namespace {

nlohmann::json taa_plan() { return nlohmann::json::parse(test::source_text(pinned::taa_history_hash.plan_file)); }

// A buffer pair: node/accumulate writes resource/sum from resource/sum.previous
// (what the wave before wrote), node/read reads resource/sum.
nlohmann::json buffer_plan() {
  const auto buffer = [](std::string_view id, std::string_view pool, std::string_view lifetime) {
    return nlohmann::json{
        {"id", id},
        {"pool", pool},
        {"kind", "workspace"},
        {"demand", {{"base", 0}, {"per_unit", 16}, {"dimension", 0}}},
        {"alignment", 16},
        {"lifetime", lifetime},
        {"usage", "storage"},
        {"element", "f32"},
        {"storage", {{"allocator", "linear-arena"}, {"view", "contiguous"}, {"contract", std::string(64, 'c')}}}};
  };
  nlohmann::json previous = buffer("resource/sum.previous", "pool/history", "history");
  previous["history_of"] = "resource/sum";
  return {{"format", "ferrum.plan.v2"},
          {"nodes",
           {{{"id", "node/accumulate"},
             {"resources", {"resource/sum.previous", "resource/sum"}},
             {"access", {{"resource/sum.previous", "read"}, {"resource/sum", "write"}}}},
            {{"id", "node/read"},
             {"resources", {"resource/sum", "resource/out"}},
             {"after", {"node/accumulate"}},
             {"access", {{"resource/sum", "read"}, {"resource/out", "write"}}}}}},
          {"resources",
           {buffer("resource/sum", "pool/history", "history"), previous,
            buffer("resource/out", "pool/work", "invocation")}},
          {"buckets",
           {{{"class", "frame"},
             {"capacity", {64, 1, 1}},
             {"budgets",
              {{{"pool", "pool/history"}, {"min", 0}, {"max", 65536}},
               {{"pool", "pool/work"}, {"min", 0}, {"max", 65536}}}}}}},
          {"lanes", 2},
          {"budget_bytes", 1048576}};
}

nlohmann::json& named_node(nlohmann::json& doc, std::string_view id) {
  for (auto& n : doc["nodes"])
    if (n["id"] == id) return n;
  FAIL("no node " << id);
  return doc;
}

nlohmann::json& named_resource(nlohmann::json& doc, std::string_view id) {
  for (auto& r : doc["resources"])
    if (r["id"] == id) return r;
  FAIL("no resource " << id);
  return doc;
}

struct history_refusal {
  const char* what;
  std::function<nlohmann::json()> doc;
  errc code;
  const char* path;
  const char* says;  // a part of the detail
};

template <class Edit>
std::function<nlohmann::json()> taa_edited(Edit edit) {
  return [edit] {
    nlohmann::json doc = taa_plan();
    edit(doc);
    return doc;
  };
}

template <class Edit>
std::function<nlohmann::json()> buffers_edited(Edit edit) {
  return [edit] {
    nlohmann::json doc = buffer_plan();
    edit(doc);
    return doc;
  };
}

}  // namespace

TEST_CASE("history: taa_history.json compiles, keeps its pinned hash, and its pair is marked in the lane",
          "[binding][history]") {
  const plan p = both_parsers::parsed(test::source_text(pinned::taa_history_hash.plan_file));
  CHECK(hash_plan(p).value().str() == pinned::taa_history_hash.digest);
  const compiled_program program = compile(p).value();
  // The history pool is placed as an imported one: the scheduler keeps the
  // pair, outside the lanes.
  const auto pool = std::find_if(program.domains.begin(), program.domains.end(),
                                 [](const pool_domain& d) { return d.pool.view() == "pool/history"; });
  REQUIRE(pool != program.domains.end());
  CHECK(pool->history);
  CHECK(pool->memory == memory_class::imported);
  const compiled_bucket& bucket = program.buckets.front();
  const lane_recipe& lane = bucket.lane;
  REQUIRE(lane.images.size() == 4);
  std::vector<std::string> marks;
  for (const lane_image& i : lane.images)
    marks.push_back(i.resource.str() + (i.imported ? " imported" : "") +
                    (i.history == history_role::current    ? " current"
                     : i.history == history_role::previous ? " previous"
                                                           : "") +
                    (i.takes(resource_access::transfer_dst) ? " transfer-dst" : ""));
  CHECK(marks == std::vector<std::string>{"image/taa imported current transfer-dst",
                                          "image/taa.previous imported previous transfer-dst", "image/color",
                                          "image/out"});
  CHECK(lane.histories == std::vector<history_pair>{{true, 0, 1}});
  // Its images take no bytes of the lane's image memory: the targets' do.
  const auto targets = std::find_if(program.domains.begin(), program.domains.end(),
                                    [](const pool_domain& d) { return d.pool.view() == "pool/targets"; });
  const std::size_t t = static_cast<std::size_t>(targets - program.domains.begin());
  CHECK(bucket.image_window.size == bucket.capacity_layouts[t].physical_size_bytes);
  // The previous is read first, from the layout the wave hands in; the
  // current is written first.
  const auto taa = lane.node_transitions(1);
  REQUIRE(taa.size() == 3);
  CHECK(taa[0].image == 0);
  CHECK(taa[0].from == image_layout::undefined);
  CHECK(taa[0].to == image_layout::general);
  CHECK(taa[1].image == 1);
  CHECK(taa[1].to == image_layout::shader_read_only);
  CHECK(lane.images[1].initial == image_layout::undefined);
}

TEST_CASE("history: a buffer pair is listed with the imports, and a saved program loads with its pairs",
          "[binding][history]") {
  nlohmann::json doc = buffer_plan();
  doc["resources"][2]["kept"] = true;  // resource/out: node/read live, its bytes in the lane
  const plan p = both_parsers::parsed(doc.dump());
  const compiled_program program = compile(p).value();
  const lane_recipe& lane = program.buckets.front().lane;
  REQUIRE(lane.imports.size() == 2);
  CHECK(lane.imports[0].resource.view() == "resource/sum");
  CHECK(lane.imports[0].history == history_role::current);
  CHECK(lane.imports[0].written);
  CHECK(lane.imports[0].size == 64 * 16);
  CHECK(lane.imports[1].history == history_role::previous);
  CHECK_FALSE(lane.imports[1].written);
  CHECK(lane.histories == std::vector<history_pair>{{false, 0, 1}});
  // The lane holds the work pool only; admission counts no history.
  CHECK(program.buckets.front().lane_bytes() == 64 * 16);
  CHECK(program.buckets.front().window(memory_class::imported).size == 2 * 64 * 16);
  const auto bytes = save_compiled_program(program, p).value();
  const compiled_program loaded = load_compiled_program(bytes, p).value();
  CHECK(loaded.buckets.front().lane.histories == lane.histories);
  CHECK(loaded.buckets.front().lane.imports[1].history == history_role::previous);
}

TEST_CASE("history: history_of is in the hash, and a plan without it hashes as before", "[binding][history][hash]") {
  const plan p = both_parsers::parsed(taa_plan().dump());
  plan other = p;
  // The same resources, the pair's roles swapped: another plan.
  other.resources[3].history_of.reset();
  other.resources[2].history_of = other.resources[3].id;
  CHECK(hash_plan(other).value() != hash_plan(p).value());
  plan none = p;
  none.resources[3].history_of.reset();
  CHECK(hash_plan(none).value() != hash_plan(p).value());
  // Without history_of, the lifetime (an enum number) tells it apart alone.
  plan invocation = none;
  invocation.resources[2].lifetime = invocation.resources[3].lifetime = allocation_lifetime::invocation;
  CHECK(hash_plan(invocation).value() != hash_plan(none).value());
}

TEST_CASE("history: every rule of a pair is refused where it is broken", "[binding][history]") {
  const std::vector<history_refusal> refusals{
      {"lifetime history in a v1 plan",
       [] {
         nlohmann::json doc = nlohmann::json::parse(test::source_text(pinned::two_nodes_hash.plan_file));
         doc["resources"][1]["lifetime"] = "history";
         return doc;
       },
       errc::unknown_value, "/resources/1/lifetime", "ferrum.plan.v2"},
      {"history_of in a v1 plan",
       [] {
         nlohmann::json doc = nlohmann::json::parse(test::source_text(pinned::two_nodes_hash.plan_file));
         doc["resources"][1]["history_of"] = "resource/program-binding-first";
         return doc;
       },
       errc::unknown_field, "/resources/1/history_of", "ferrum.plan.v2"},
      {"history_of not an id",
       taa_edited([](auto& doc) { named_resource(doc, "image/taa.previous")["history_of"] = 3; }), errc::wrong_type,
       "/resources/3/history_of", "a string"},
      {"history_of naming no resource",
       taa_edited([](auto& doc) { named_resource(doc, "image/taa.previous")["history_of"] = "image/missing"; }),
       errc::dangling_reference, "/resources/3/history_of", "'image/missing'"},
      {"history_of naming a resource that is not history",
       taa_edited([](auto& doc) { named_resource(doc, "image/taa.previous")["history_of"] = "image/color"; }),
       errc::invalid_history, "/resources/3/history_of", "not 'history'"},
      {"history_of on a resource that is not history",
       taa_edited([](auto& doc) { named_resource(doc, "image/color")["history_of"] = "image/taa"; }),
       errc::invalid_history, "/resources/0/history_of", "'invocation'"},
      {"history_of naming a previous", taa_edited([](auto& doc) {
         nlohmann::json third = named_resource(doc, "image/taa.previous");
         third["id"] = "image/taa.older";
         third["history_of"] = "image/taa.previous";
         doc["resources"].push_back(third);
         named_node(doc, "node/taa")["resources"].push_back("image/taa.older");
         named_node(doc, "node/taa")["access"]["image/taa.older"] = "sampled";
       }),
       errc::invalid_history, "/resources/4/history_of", "itself a previous"},
      {"two previous of one current", taa_edited([](auto& doc) {
         nlohmann::json second = named_resource(doc, "image/taa.previous");
         second["id"] = "image/taa.second";
         doc["resources"].push_back(second);
         named_node(doc, "node/taa")["resources"].push_back("image/taa.second");
         named_node(doc, "node/taa")["access"]["image/taa.second"] = "sampled";
       }),
       errc::invalid_history, "/resources/4/history_of", "both the history of 'image/taa'"},
      {"a current no resource names",
       taa_edited([](auto& doc) { named_resource(doc, "image/taa.previous").erase("history_of"); }),
       errc::invalid_history, "/resources/2/lifetime", "has no previous"},
      {"a format that differs",
       taa_edited([](auto& doc) { named_resource(doc, "image/taa.previous")["image"]["format"] = "rgba32-float"; }),
       errc::invalid_history, "/resources/3", "image/format (rgba32-float, the current's rgba16-float)"},
      {"an extent that differs",
       taa_edited([](auto& doc) { named_resource(doc, "image/taa.previous")["image"]["extent"] = "bucket/2"; }),
       errc::invalid_history, "/resources/3", "image/extent (bucket/2, the current's bucket)"},
      {"mips that differ",
       taa_edited([](auto& doc) { named_resource(doc, "image/taa.previous")["image"]["mips"] = 2; }),
       errc::invalid_history, "/resources/3", "image/mips"},
      {"an image paired with a buffer", buffers_edited([](auto& doc) {
         named_resource(doc, "resource/sum.previous") = {
             {"id", "resource/sum.previous"}, {"pool", "pool/history"},
             {"kind", "workspace"},           {"lifetime", "history"},
             {"history_of", "resource/sum"},  {"image", {{"format", "r32-float"}, {"extent", {8, 8}}}}};
         named_node(doc, "node/accumulate")["access"]["resource/sum.previous"] = "sampled";
       }),
       errc::invalid_history, "/resources/1", "kind of resource (an image, the current's a buffer)"},
      {"a demand that differs", buffers_edited([](auto& doc) {
         named_resource(doc, "resource/sum.previous")["demand"] = {{"fixed", 1024}};
       }),
       errc::invalid_history, "/resources/1", "demand (1024 fixed"},
      {"an alignment that differs",
       buffers_edited([](auto& doc) { named_resource(doc, "resource/sum.previous")["alignment"] = 64; }),
       errc::invalid_history, "/resources/1", "alignment (64, the current's 16)"},
      {"an element that differs",
       buffers_edited([](auto& doc) { named_resource(doc, "resource/sum.previous")["element"] = "u32"; }),
       errc::invalid_history, "/resources/1", "element (u32, the current's f32)"},
      {"a usage that differs",
       buffers_edited([](auto& doc) { named_resource(doc, "resource/sum.previous")["usage"] = "uniform"; }),
       errc::invalid_history, "/resources/1", "usage (uniform, the current's storage)"},
      {"a storage that differs",
       buffers_edited([](auto& doc) { named_resource(doc, "resource/sum.previous")["storage"]["view"] = "strided"; }),
       errc::invalid_history, "/resources/1", "storage (linear-arena, strided"},
      {"a binding history resource", buffers_edited([](auto& doc) {
         for (const char* id : {"resource/sum", "resource/sum.previous"}) {
           named_resource(doc, id)["kind"] = "binding";
           named_resource(doc, id)["node"] = "node/accumulate";
         }
         named_resource(doc, "resource/sum")["node"] = "node/read";
         named_node(doc, "node/read")["binding"] = "resource/sum";
         named_node(doc, "node/accumulate")["binding"] = "resource/sum.previous";
       }),
       errc::invalid_history, "/resources/0/kind", "binding resource"},
      {"a pool of history and other resources",
       taa_edited([](auto& doc) { named_resource(doc, "image/out")["pool"] = "pool/history"; }),
       errc::incompatible_pool_member, "/resources/1/pool", "holds nothing else"},
      {"an interval history pool", taa_edited([](auto& doc) {
         doc["pools"]["pool/history"] = {{"liveness", "interval"}};
       }),
       errc::invalid_liveness, "/pools/pool~1history/liveness", "never shares memory"},
      {"a history pool of memory other than device", buffers_edited([](auto& doc) {
         doc["pools"] = {{"pool/history", {{"memory", "readback"}}}};
       }),
       errc::invalid_memory_class, "/pools/pool~1history/memory", "'readback'"},
      {"a history image of a block-compressed format", taa_edited([](auto& doc) {
         for (const char* id : {"image/taa", "image/taa.previous"})
           named_resource(doc, id)["image"]["format"] = "bc7-unorm";
       }),
       errc::invalid_image, "/resources/2/image/format", "block-compressed"},
      {"part of a history image", taa_edited([](auto& doc) {
         for (const char* id : {"image/taa", "image/taa.previous"}) named_resource(doc, id)["image"]["mips"] = 2;
         named_node(doc, "node/taa")["access"]["image/taa.previous"] = {{"access", "sampled"}, {"mips", {0, 1}}};
       }),
       errc::invalid_image_access, "/nodes/1/access/image~1taa.previous", "reached whole"},
      {"a previous image written", taa_edited([](auto& doc) {
         named_node(doc, "node/taa")["access"]["image/taa.previous"] = "storage-read-write";
       }),
       errc::invalid_access, "/nodes/1/access/image~1taa.previous", "read only"},
      {"a previous buffer written", buffers_edited([](auto& doc) {
         named_node(doc, "node/accumulate")["access"]["resource/sum.previous"] = "write";
       }),
       errc::invalid_access, "/nodes/0/access/resource~1sum.previous", "read only"},
      {"a current buffer read first",
       buffers_edited([](auto& doc) { named_node(doc, "node/accumulate")["access"]["resource/sum"] = "read-write"; }),
       errc::invalid_access, "/nodes/0/access/resource~1sum", "first use in a wave is 'write'"},
      {"a current image read first",
       taa_edited([](auto& doc) { named_node(doc, "node/taa")["access"]["image/taa"] = "sampled"; }),
       errc::image_read_before_write, "/nodes/1/access/image~1taa", "before any node writes it"},
  };
  for (const history_refusal& r : refusals) {
    INFO(r.what);
    const error e = both_parsers::refusal(r.doc().dump());
    CHECK(e == r.code);
    CHECK(e.path == r.path);
    CHECK_THAT(e.detail, Catch::Matchers::Contains(r.says));
  }
}

TEST_CASE("history: a previous image and buffer may be read first, and a history resource read only as a previous",
          "[binding][history]") {
  // node/tonemap reads the previous too: a previous may be read by any node.
  nlohmann::json doc = taa_plan();
  named_node(doc, "node/tonemap")["resources"].push_back("image/taa.previous");
  named_node(doc, "node/tonemap")["access"]["image/taa.previous"] = "sampled";
  CHECK(compile(both_parsers::parsed(doc.dump())).has_value());
  CHECK(compile(both_parsers::parsed(buffer_plan().dump())).has_value());
}
