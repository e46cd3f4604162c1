// Tests of accesses to part of an image (docs/plan-format.md, "Mip levels
// and layers"): how a ferrum.plan.v2 file names mip levels and layers, the
// layout transitions the compiler derives per subresource (a bloom chain
// down the mips of one image, shadow cascades in the layers of one depth
// image), every refusal with its code and JSON pointer, and the plan hash.
#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/compiled_program_file.hpp"
#include "ferrum/binding/image_access.hpp"
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

// Three shadow cascades drawn into the layers of one depth image, a bloom
// chain written down the mips of one image (each step reads mip i and
// writes mip i + 1), and a lighting node that samples both.
nlohmann::json chain_plan() {
  const auto image = [](std::string_view id, std::string_view format, std::uint32_t side, std::uint32_t mips,
                        std::uint32_t layers) {
    return nlohmann::json{
        {"id", id},
        {"pool", "pool/targets"},
        {"kind", "workspace"},
        {"lifetime", "invocation"},
        {"image", {{"format", format}, {"extent", {side, side}}, {"mips", mips}, {"layers", layers}}}};
  };
  // The output, which the engine reads: its writer is not culled.
  const auto kept = [](nlohmann::json r) {
    r["kept"] = true;
    return r;
  };
  const auto cascade = [](int layer) {
    return nlohmann::json{{"id", "node/cascade" + std::to_string(layer)},
                          {"resources", {"image/shadow"}},
                          {"access", {{"image/shadow", {{"access", "depth-attachment"}, {"layers", {layer, 1}}}}}}};
  };
  const auto down = [](int mip) {
    return nlohmann::json{
        {"id", "node/down" + std::to_string(mip)},
        {"resources", {"image/bloom"}},
        {"after", {"node/down" + std::to_string(mip - 1)}},
        {"access",
         {{"image/bloom",
           {{{"access", "sampled"}, {"mips", {mip - 1, 1}}}, {{"access", "storage-write"}, {"mips", {mip, 1}}}}}}}};
  };
  return {{"format", "ferrum.plan.v2"},
          {"nodes",
           {cascade(0),
            cascade(1),
            cascade(2),
            {{"id", "node/down0"},
             {"resources", {"image/bloom"}},
             {"access", {{"image/bloom", {{"access", "storage-write"}, {"mips", {0, 1}}}}}}},
            down(1),
            down(2),
            {{"id", "node/light"},
             {"resources", {"image/shadow", "image/bloom", "image/out"}},
             {"after", {"node/cascade0", "node/cascade1", "node/cascade2", "node/down2"}},
             {"access",
              {{"image/shadow", "sampled"},
               {"image/bloom", {{"access", "sampled"}, {"mips", {0, 3}}}},
               {"image/out", "storage-write"}}}}}},
          {"resources",
           {image("image/shadow", "d32-float", 32, 1, 3), image("image/bloom", "rgba16-float", 64, 4, 1),
            kept(image("image/out", "rgba8-unorm", 64, 1, 1))}},
          {"buckets",
           {{{"class", "frame"},
             {"capacity", {64, 64, 1}},
             {"budgets", {{{"pool", "pool/targets"}, {"min", 0}, {"max", 8388608}}}}}}},
          {"lanes", 1},
          {"budget_bytes", 16777216}};
}

// "node image from->to mips a+n layers b+m" per transition, in node order;
// "whole" for a transition of the whole image.
std::vector<std::string> described_ranges(const lane_recipe& lane, const plan& p) {
  std::vector<std::string> out;
  for (std::size_t n = 0; n < p.nodes.size(); ++n)
    for (const image_transition& t : lane.node_transitions(n)) {
      std::string line = p.nodes[n].id.str() + " " + lane.images[t.image].resource.str() + " " +
                         std::string(to_string(t.from)) + "->" + std::string(to_string(t.to));
      line += t.range.whole()
                  ? std::string(" whole")
                  : " mips " + std::to_string(t.range.base_mip) + "+" + std::to_string(t.range.mips) + " layers " +
                        std::to_string(t.range.base_layer) + "+" + std::to_string(t.range.layers);
      out.push_back(line);
    }
  return out;
}

struct range_refusal {
  const char* what;
  std::function<void(nlohmann::json&)> edit;
  errc code;
  const char* path;
};

nlohmann::json& chain_node(nlohmann::json& doc, std::string_view id) {
  for (auto& n : doc["nodes"])
    if (n["id"] == id) return n;
  FAIL("no node " << id);
  return doc;
}

}  // namespace

TEST_CASE("subresources: mip_chain.json is the plan these tests build, and keeps its pinned hash",
          "[binding][image][hash]") {
  const plan file = test::load_source_plan(pinned::mip_chain_hash.plan_file);
  CHECK(hash_plan(file).value().str() == pinned::mip_chain_hash.digest);
  CHECK(hash_plan(both_parsers::parsed(chain_plan().dump())).value() == hash_plan(file).value());
}

TEST_CASE("subresources: an access array lists the image once per range, each with its access", "[binding][image]") {
  const plan p = both_parsers::parsed(chain_plan().dump());
  const plan_node& down1 = p.nodes[4];
  REQUIRE(down1.resources.size() == 2);
  CHECK(down1.resources[0] == down1.resources[1]);
  CHECK(down1.access == std::vector{resource_access::sampled, resource_access::storage_write});
  CHECK(down1.ranges == std::vector<subresource_range>{{0, 1, 0, 0}, {1, 1, 0, 0}});
  // A node whose every access is to a whole resource keeps no ranges.
  const plan_node& light = p.nodes[6];
  REQUIRE(light.ranges.size() == 3);
  CHECK(light.ranges[0].whole());
  CHECK(light.ranges[1] == subresource_range{0, 3, 0, 0});
  CHECK(validate_plan(p).has_value());
}

TEST_CASE("subresources: transitions per mip level and layer, runs left alike in one", "[binding][image]") {
  const plan p = both_parsers::parsed(chain_plan().dump());
  const compiled_program program = compile(p).value();
  const lane_recipe& lane = program.buckets.front().lane;
  CHECK(described_ranges(lane, p) == std::vector<std::string>{
                                         "node/cascade0 image/shadow undefined->depth-attachment mips 0+1 layers 0+1",
                                         "node/cascade1 image/shadow undefined->depth-attachment mips 0+1 layers 1+1",
                                         "node/cascade2 image/shadow undefined->depth-attachment mips 0+1 layers 2+1",
                                         "node/down0 image/bloom undefined->general mips 0+1 layers 0+1",
                                         "node/down1 image/bloom general->shader-read-only mips 0+1 layers 0+1",
                                         "node/down1 image/bloom undefined->general mips 1+1 layers 0+1",
                                         "node/down2 image/bloom general->shader-read-only mips 1+1 layers 0+1",
                                         "node/down2 image/bloom undefined->general mips 2+1 layers 0+1",
                                         // (A node's transitions in image order: bloom, out, shadow.)
                                         // Mips 0 and 1 are already read-only; only mip 2 changes.
                                         "node/light image/bloom general->shader-read-only mips 2+1 layers 0+1",
                                         "node/light image/out undefined->general whole",
                                         // The three layers, each left by its cascade's drawing: one transition.
                                         "node/light image/shadow depth-attachment->shader-read-only whole",
                                     });
  // What each waits for: the access that left those subresources.
  const auto down1 = lane.node_transitions(4);
  REQUIRE(down1.size() == 2);
  CHECK(down1[0].after == resource_access::storage_write);
  CHECK_FALSE(down1[1].after.has_value());
  // Each listing's range reaches the lane's uses, resolved.
  const auto uses = lane.node_uses(4);
  REQUIRE(uses.size() == 2);
  CHECK(uses[0].range == subresource_range{0, 1, 0, 1});
  CHECK(uses[1].range == subresource_range{1, 1, 0, 1});
  CHECK(lane.node_uses(6)[0].range.whole());
  // Mip 3 is never reached: no transition names it.
  for (const image_transition& t : lane.transitions)
    CHECK(resolve(t.range, 4, 3).base_mip + resolve(t.range, 4, 3).mips <= 4);
}

TEST_CASE("subresources: layers left in different layouts get a transition each", "[binding][image]") {
  nlohmann::json doc = chain_plan();
  // cascade1 samples layer 0 (written by cascade0) while drawing layer 1.
  chain_node(doc, "node/cascade1")["access"]["image/shadow"] = {{{"access", "depth-attachment"}, {"layers", {1, 1}}},
                                                                {{"access", "sampled"}, {"layers", {0, 1}}}};
  const plan p = both_parsers::parsed(doc.dump());
  const compiled_program program = compile(p).value();
  const auto lines = described_ranges(program.buckets.front().lane, p);
  CHECK(std::find(lines.begin(), lines.end(), "node/light image/shadow shader-read-only->shader-read-only whole") ==
        lines.end());
  CHECK(std::find(lines.begin(), lines.end(),
                  "node/light image/shadow depth-attachment->shader-read-only mips 0+1 layers 1+2") != lines.end());
  CHECK(std::count_if(lines.begin(), lines.end(),
                      [](const std::string& l) { return l.rfind("node/light image/shadow", 0) == 0; }) == 1);
}

TEST_CASE("subresources: a saved program loads with its ranges", "[binding][image]") {
  const plan p = both_parsers::parsed(chain_plan().dump());
  const compiled_program program = compile(p).value();
  const auto bytes = save_compiled_program(program, p).value();
  const compiled_program loaded = load_compiled_program(bytes, p).value();
  CHECK(loaded.buckets.front().lane.transitions == program.buckets.front().lane.transitions);
}

TEST_CASE("subresources: every range that does not fit is refused where it is named", "[binding][image]") {
  const std::vector<range_refusal> refusals{
      {"overlapping ranges of one image in one node",
       [](auto& doc) {
         chain_node(doc, "node/down1")["access"]["image/bloom"][1]["mips"] = {0, 2};
       },
       errc::duplicate_id, "/nodes/4/access/image~1bloom"},
      {"two whole accesses to one image",
       [](auto& doc) {
         chain_node(doc, "node/light")["access"]["image/out"] = {"storage-write", "storage-read"};
       },
       errc::duplicate_id, "/nodes/6/access/image~1out"},
      {"mip levels past the image's",
       [](auto& doc) {
         chain_node(doc, "node/light")["access"]["image/bloom"]["mips"] = {3, 2};
       },
       errc::invalid_image_access, "/nodes/6/access/image~1bloom"},
      {"a layer past the image's",
       [](auto& doc) {
         chain_node(doc, "node/cascade2")["access"]["image/shadow"]["layers"] = {3, 1};
       },
       errc::invalid_image_access, "/nodes/2/access/image~1shadow"},
      {"an attachment of two mip levels",
       [](auto& doc) {
         chain_node(doc, "node/down0")["access"]["image/bloom"] = {{"access", "color-attachment"}, {"mips", {0, 2}}};
       },
       errc::invalid_image_access, "/nodes/3/access/image~1bloom"},
      {"a mip level read before any node writes it",
       [](auto& doc) {
         chain_node(doc, "node/light")["access"]["image/bloom"]["mips"] = {0, 4};
       },
       errc::image_read_before_write, "/nodes/6/access/image~1bloom"},
      {"a range of an imported image",
       [](auto& doc) {
         doc["resources"][1]["pool"] = "pool/engine";
         doc["pools"] = {{"pool/engine", {{"memory", "imported"}}}};
         doc["buckets"][0]["budgets"].push_back({{"pool", "pool/engine"}, {"min", 0}, {"max", 0}});
       },
       errc::invalid_image_access, "/nodes/3/access/image~1bloom"},
      {"a persistent image left in two layouts",
       [](auto& doc) {
         // Mip 2, written by down2, is left in general; mips 0 and 1 read-only.
         doc["resources"][1]["lifetime"] = "persistent";
         chain_node(doc, "node/light")["access"]["image/bloom"]["mips"] = {0, 2};
       },
       errc::invalid_image_access, "/nodes/6/access/image~1bloom"},
      {"a range of a buffer",
       [](auto& doc) {
         doc["resources"].push_back(
             {{"id", "buffer/x"},
              {"pool", "pool/buffers"},
              {"kind", "workspace"},
              {"demand", {{"fixed", 64}}},
              {"alignment", 16},
              {"lifetime", "invocation"},
              {"usage", "storage"},
              {"element", "u8"},
              {"storage",
               {{"allocator", "linear-arena"}, {"view", "contiguous"}, {"contract", std::string(64, 'a')}}}});
         doc["buckets"][0]["budgets"].push_back({{"pool", "pool/buffers"}, {"min", 0}, {"max", 64}});
         chain_node(doc, "node/light")["resources"].push_back("buffer/x");
         chain_node(doc, "node/light")["access"]["buffer/x"] = {{"access", "read"}, {"mips", {0, 1}}};
       },
       errc::invalid_access, "/nodes/6/access/buffer~1x"},
      {"an empty access array",
       [](auto& doc) { chain_node(doc, "node/light")["access"]["image/out"] = nlohmann::json::array(); },
       errc::invalid_access, "/nodes/6/access/image~1out"},
      {"a range of one number", [](auto& doc) { chain_node(doc, "node/light")["access"]["image/bloom"]["mips"] = {0}; },
       errc::wrong_type, "/nodes/6/access/image~1bloom/mips"},
      {"a range of no levels",
       [](auto& doc) {
         chain_node(doc, "node/light")["access"]["image/bloom"]["mips"] = {0, 0};
       },
       errc::number_out_of_range, "/nodes/6/access/image~1bloom/mips/1"},
      {"an unknown field of an access",
       [](auto& doc) {
         chain_node(doc, "node/light")["access"]["image/bloom"]["levels"] = {0, 1};
       },
       errc::unknown_field, "/nodes/6/access/image~1bloom/levels"},
      {"an access object without its access",
       [](auto& doc) { chain_node(doc, "node/light")["access"]["image/bloom"].erase("access"); }, errc::missing_field,
       "/nodes/6/access/image~1bloom/access"},
  };
  for (const range_refusal& r : refusals) {
    INFO(r.what);
    nlohmann::json doc = chain_plan();
    r.edit(doc);
    const error e = both_parsers::refusal(doc.dump());
    CHECK(e == r.code);
    CHECK(e.path == r.path);
    CHECK_FALSE(e.detail.empty());
  }
}

TEST_CASE("subresources: ranges set in code are checked as a file's are", "[binding][image]") {
  const plan parsed = parse_plan(chain_plan().dump()).value();
  plan p = parsed;
  p.nodes[4].ranges.pop_back();  // not one per resource
  CHECK(validate_plan(p).error() == errc::invalid_access);
  CHECK(validate_plan(p).error().path == "/nodes/4/access");
  // A whole range named explicitly is a range like any other.
  plan explicit_whole = parsed;
  explicit_whole.nodes[6].ranges[0] = {0, 1, 0, 3};
  CHECK(validate_plan(explicit_whole).has_value());
  CHECK(compile(explicit_whole).value().buckets.front().lane.node_uses(6)[0].range.whole());
}

TEST_CASE("subresources: the hash covers each range, and plans without any hash as before", "[binding][image][hash]") {
  const plan p = both_parsers::parsed(chain_plan().dump());
  const plan_hash base = hash_plan(p).value();
  const std::vector<std::function<void(subresource_range&)>> edits{
      [](subresource_range& r) { r.base_mip = 1; }, [](subresource_range& r) { r.mips = 2; },
      [](subresource_range& r) { r.base_layer = 1; }, [](subresource_range& r) { r.layers = 1; }};
  for (const auto& edit : edits) {
    plan changed = p;
    edit(changed.nodes[6].ranges[1]);
    CHECK(hash_plan(changed).value() != base);
  }
  // The access of a ranged listing counts too.
  plan changed = p;
  changed.nodes[6].access[1] = resource_access::storage_read;
  CHECK(hash_plan(changed).value() != base);
  // The order of an access array does not matter.
  nlohmann::json doc = chain_plan();
  auto& down1 = chain_node(doc, "node/down1")["access"]["image/bloom"];
  std::swap(down1[0], down1[1]);
  CHECK(hash_plan(both_parsers::parsed(doc.dump())).value() == base);
  // Ranges that are all whole are no ranges: images.json keeps its pinned hash.
  plan pinned_plan = test::load_source_plan(pinned::images_hash.plan_file);
  for (plan_node& node : pinned_plan.nodes) node.ranges.assign(node.resources.size(), subresource_range{});
  CHECK(hash_plan(pinned_plan).value().str() == pinned::images_hash.digest);
}
