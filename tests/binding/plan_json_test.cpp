#include "ferrum/binding/plan_json.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "sanitized.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace Catch {
template <>
struct StringMaker<ferrum::error> {
  static std::string convert(const ferrum::error& e) { return e.what(); }
};
}  // namespace Catch

namespace {

using ferrum::errc;
using json = nlohmann::json;

// The example of docs/interfaces.md ("Plan file"), with real contract digests.
constexpr std::string_view example_text = R"({
  "format": "ferrum.plan.v1",
  "nodes": [
    { "id": "node/first",  "resources": ["resource/first"],  "binding": "resource/first" },
    { "id": "node/second", "resources": ["resource/second", "resource/scratch"], "binding": "resource/second" }
  ],
  "resources": [
    { "id": "resource/first", "pool": "pool/bindings", "kind": "binding", "node": "node/first",
      "demand": { "fixed": 64 }, "alignment": 16,
      "lifetime": "invocation", "usage": "binding", "element": "u8",
      "storage": { "allocator": "linear-arena", "view": "contiguous",
                   "contract": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" } },
    { "id": "resource/second", "pool": "pool/bindings", "kind": "binding", "node": "node/second",
      "demand": { "fixed": 128 }, "alignment": 16,
      "lifetime": "invocation", "usage": "binding", "element": "u8",
      "storage": { "allocator": "linear-arena", "view": "contiguous",
                   "contract": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" } },
    { "id": "resource/scratch", "pool": "pool/scratch", "kind": "workspace",
      "demand": { "base": 0, "per_unit": 256, "dimension": 1 }, "alignment": 256,
      "lifetime": "invocation", "usage": "storage", "element": "f32",
      "storage": { "allocator": "linear-arena", "view": "contiguous",
                   "contract": "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210" } }
  ],
  "buckets": [
    { "class": "step", "capacity": [1, 64, 1],
      "budgets": [ { "pool": "pool/bindings", "min": 0, "max": 4096 },
                   { "pool": "pool/scratch",  "min": 0, "max": 1048576 } ] }
  ],
  "pools": { "pool/scratch": { "liveness": "interval" } },
  "lanes": 3,
  "budget_bytes": 67108864
})";

// The example with the value at `pointer` set to `raw`, JSON text written as
// is (so that "1e3" or "-0" reach the loader as typed); a missing member is
// added.
std::string with(const std::string& pointer, std::string_view raw) {
  json doc = json::parse(example_text);
  doc[json::json_pointer(pointer)] = "@raw@";
  std::string text = doc.dump();
  const std::string placeholder = "\"@raw@\"";
  text.replace(text.find(placeholder), placeholder.size(), raw);
  return text;
}

// The example without the object member at `pointer`.
std::string without(const std::string& pointer) {
  json doc = json::parse(example_text);
  const json::json_pointer member(pointer);
  REQUIRE(doc[member.parent_pointer()].erase(member.back()) == 1);
  return doc.dump();
}

// The example text with its first `from` replaced by `to`.
std::string replaced(std::string_view from, std::string_view to) {
  std::string text(example_text);
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

ferrum::plan loads(std::string_view text) {
  auto p = ferrum::parse_plan(text);
  if (!p) FAIL(p.error().what());
  return *p;
}

ferrum::error rejection_of(std::string_view text) {
  auto p = ferrum::parse_plan(text);
  REQUIRE_FALSE(p.has_value());
  return p.error();
}

std::string read_example(const std::string& name) {
  std::ifstream in(std::string(FERRUM_SOURCE_DIR) + "/examples/plans/" + name);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

ferrum::compiled_program compiled(std::string_view text) {
  auto program = ferrum::compile(loads(text));
  if (!program) FAIL(program.error().what());
  return *program;
}

bool printable_ascii(std::string_view text) {
  for (char c : text)
    if (c < 0x20 || c > 0x7e) return false;
  return true;
}

TEST_CASE("plan_json: the interfaces.md example loads with every field in place", "[binding][plan_json]") {
  const ferrum::plan p = loads(example_text);

  REQUIRE(p.nodes.size() == 2);
  CHECK(p.nodes[0].id.str() == "node/first");
  REQUIRE(p.nodes[1].resources.size() == 2);
  CHECK(p.nodes[1].resources[0].str() == "resource/second");
  CHECK(p.nodes[1].resources[1].str() == "resource/scratch");
  REQUIRE(p.nodes[1].binding);
  CHECK(p.nodes[1].binding->str() == "resource/second");

  REQUIRE(p.resources.size() == 3);
  const ferrum::resource_descriptor& first = p.resources[0];
  CHECK(first.id.str() == "resource/first");
  CHECK(first.pool.str() == "pool/bindings");
  CHECK(first.kind == ferrum::allocation_kind::binding);
  REQUIRE(first.node);
  CHECK(first.node->str() == "node/first");
  CHECK(first.demand == ferrum::resource_demand::fixed(64));
  CHECK(first.alignment == 16);
  CHECK(first.usage == ferrum::buffer_usage::binding);
  CHECK(first.element == ferrum::element_type::u8);
  const ferrum::resource_descriptor& scratch = p.resources[2];
  CHECK(scratch.kind == ferrum::allocation_kind::workspace);
  CHECK_FALSE(scratch.node);
  CHECK(scratch.demand == ferrum::resource_demand::scaled(0, 256, 1));
  CHECK(scratch.alignment == 256);
  CHECK(scratch.lifetime == ferrum::allocation_lifetime::invocation);
  CHECK(scratch.usage == ferrum::buffer_usage::storage);
  CHECK(scratch.element == ferrum::element_type::f32);
  CHECK(scratch.storage.allocator == ferrum::storage_allocator::linear_arena);
  CHECK(scratch.storage.view == ferrum::storage_view::contiguous);
  CHECK(scratch.storage.digest == "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210");

  REQUIRE(p.buckets.size() == 1);
  CHECK(p.buckets[0].cls.str() == "step");
  CHECK(p.buckets[0].dims == ferrum::bucket_capacity{1, 64, 1});
  REQUIRE(p.buckets[0].budgets.size() == 2);
  CHECK(p.buckets[0].budgets[1].pool.str() == "pool/scratch");
  CHECK(p.buckets[0].budgets[1].min == 0);
  CHECK(p.buckets[0].budgets[1].max == 1048576);

  REQUIRE(p.pools.size() == 1);
  CHECK(p.pools[0].pool.str() == "pool/scratch");
  CHECK(p.pools[0].liveness == ferrum::liveness_mode::interval);
  CHECK(p.lanes == 3);
  CHECK(p.budget_bytes == 67108864);
}

TEST_CASE("plan_json: optional fields may be left out", "[binding][plan_json]") {
  const ferrum::plan p = loads(without("/pools"));
  CHECK(p.pools.empty());
  CHECK_FALSE(loads(without("/nodes/0/binding")).nodes[0].binding);
}

TEST_CASE("plan_json: the interfaces.md example compiles", "[binding][plan_json]") {
  const ferrum::compiled_program program = compiled(example_text);
  REQUIRE(program.buckets.size() == 1);
  CHECK(program.buckets[0].id.str() == "step@1x64x1");
  REQUIRE(program.buckets[0].binding);
  CHECK(program.buckets[0].binding->physical_size_bytes() == 192);
}

TEST_CASE("plan_json: the two-node example compiles to the original module's layout", "[binding][plan_json]") {
  const ferrum::compiled_program program = compiled(read_example("two_nodes.json"));
  REQUIRE(program.buckets.size() == 1);
  const ferrum::compiled_bucket& bucket = program.buckets[0];
  CHECK(bucket.id.str() == "test.program-binding@1x1x1");
  REQUIRE(bucket.binding);
  CHECK(bucket.binding->physical_size_bytes() == 192);
  const auto& slots = bucket.binding->slots();
  REQUIRE(slots.size() == 2);
  CHECK(slots[0].node.str() == "node/program-binding-first");
  CHECK(slots[0].offset == 0);
  CHECK(slots[0].capacity == 64);
  CHECK(slots[1].node.str() == "node/program-binding-second");
  CHECK(slots[1].offset == 64);
  CHECK(slots[1].capacity == 128);
}

TEST_CASE("plan_json: the multi-bucket example compiles within its memory budget", "[binding][plan_json]") {
  const ferrum::compiled_program program = compiled(read_example("multi_bucket.json"));
  CHECK(program.lanes == 3);
  CHECK(program.buckets.size() == 3);
  CHECK(program.domains.size() == 2);
  CHECK(program.admitted_bytes <= program.budget_bytes);
  for (const ferrum::compiled_bucket& bucket : program.buckets) CHECK(bucket.binding);
}

TEST_CASE("plan_json: the interval example aliases its scratch pool", "[binding][plan_json]") {
  const ferrum::compiled_program program = compiled(read_example("interval_liveness.json"));
  REQUIRE_FALSE(program.buckets.empty());
  for (const ferrum::compiled_bucket& bucket : program.buckets) {
    bool found = false;
    for (const ferrum::capacity_layout& layout : bucket.capacity_layouts) {
      if (layout.pool.str() != "pool/scratch") continue;
      found = true;
      CHECK(layout.liveness == ferrum::liveness_mode::interval);
      CHECK(layout.physical_size_bytes < layout.unaliased_size_bytes);
    }
    CHECK(found);
  }
}

TEST_CASE("plan_json: malformed JSON is a syntax error naming its byte", "[binding][plan_json]") {
  for (std::string_view text : {"", " ", "{", "nul", "{\"format\" 1}", "{\"a\": [1, 2,]}", "{'format': 1}",
                                "{\"a\": 1} // comment", "{\"a\": \"\\x\"}", "{\"a\": 01}"}) {
    INFO(text);
    const ferrum::error e = rejection_of(text);
    CHECK(e == errc::json_syntax);
    CHECK(e.path.empty());
    CHECK(e.detail.find("at byte ") == 0);
  }
}

TEST_CASE("plan_json: content after the document is a syntax error", "[binding][plan_json]") {
  CHECK(rejection_of(std::string(example_text) + " x") == errc::json_syntax);
  CHECK(rejection_of(std::string(example_text) + "{}") == errc::json_syntax);
  const ferrum::error nul = rejection_of(std::string(example_text) + std::string(1, '\0') + "garbage");
  CHECK(nul == errc::json_syntax);
  CHECK(nul.detail.find("at byte ") == 0);
  CHECK(loads(std::string(example_text) + " \n\t").lanes == 3);
}

TEST_CASE("plan_json: a document cut at any byte is rejected, never crashes", "[binding][plan_json]") {
  std::vector<std::size_t> accepted_cuts;
  for (std::size_t cut = 0; cut < example_text.size(); ++cut) {
    auto p = ferrum::parse_plan(example_text.substr(0, cut));
    if (p || !(p.error() == errc::json_syntax)) accepted_cuts.push_back(cut);
  }
  CHECK(accepted_cuts.empty());
}

TEST_CASE("plan_json: corrupted bytes give ferrum errors with printable details", "[binding][plan_json]") {
  std::size_t rejected = 0;
  for (std::size_t at = 0; at < example_text.size(); at += test_support::sanitized_stride) {
    for (char c : {'"', '}', ']', '[', '{', '0', '-', ',', ':', '\0', '\xff', '\xc3'}) {
      std::string text(example_text);
      text[at] = c;
      auto p = ferrum::parse_plan(text);
      if (p) continue;
      ++rejected;
      if (p.error().code.category() != ferrum::ferrum_category() || !printable_ascii(p.error().detail)) {
        FAIL_CHECK("byte " << at << " := " << static_cast<int>(c) << ": " << p.error().what());
        return;
      }
    }
  }
  CHECK(rejected > example_text.size() / test_support::sanitized_stride);
}

TEST_CASE("plan_json: invalid UTF-8 is a syntax error with a printable detail", "[binding][plan_json]") {
  const ferrum::error e = rejection_of(replaced("node/first", "node/\xff\xfe"));
  CHECK(e == errc::json_syntax);
  CHECK(printable_ascii(e.detail));
}

TEST_CASE("plan_json: a repeated key is rejected at its pointer", "[binding][plan_json]") {
  const ferrum::error top = rejection_of(replaced(R"("lanes": 3)", R"("lanes": 3, "lanes": 4)"));
  CHECK(top == errc::duplicate_key);
  CHECK(top.path == "/lanes");

  const ferrum::error nested =
      rejection_of(replaced(R"("view": "contiguous")", R"("view": "contiguous", "view": "strided")"));
  CHECK(nested == errc::duplicate_key);
  CHECK(nested.path == "/resources/0/storage/view");

  const ferrum::error in_array = rejection_of(
      replaced(R"({ "pool": "pool/scratch",  "min": 0)", R"({ "pool": "pool/scratch",  "min": 0, "min": 1)"));
  CHECK(in_array == errc::duplicate_key);
  CHECK(in_array.path == "/buckets/0/budgets/1/min");

  const ferrum::error pool = rejection_of(replaced(R"("pools": { "pool/scratch": { "liveness": "interval" } })",
                                                   R"("pools": { "pool/scratch": { "liveness": "interval" },
                                                                 "pool/scratch": { "liveness": "conservative" } })"));
  CHECK(pool == errc::duplicate_key);
  CHECK(pool.path == "/pools/pool~1scratch");
}

TEST_CASE("plan_json: a repeated key is found even where the schema would reject first", "[binding][plan_json]") {
  const ferrum::error e = rejection_of(R"({"unknown": {"a~b": 1, "a~b": 2}})");
  CHECK(e == errc::duplicate_key);
  CHECK(e.path == "/unknown/a~0b");
}

TEST_CASE("plan_json: nesting beyond the limit is rejected before it is built", "[binding][plan_json]") {
  auto nested = [](std::size_t levels) {
    return R"({"format": "ferrum.plan.v1", "nodes": )" + std::string(levels - 1, '[') + std::string(levels - 1, ']') +
           "}";
  };
  const ferrum::error at_limit = rejection_of(nested(ferrum::max_plan_json_depth));
  CHECK(at_limit == errc::wrong_type);
  CHECK(at_limit.path == "/nodes/0");

  const ferrum::error beyond = rejection_of(nested(ferrum::max_plan_json_depth + 1));
  CHECK(beyond == errc::json_too_deep);
  std::string deepest = "/nodes";
  for (std::size_t level = 2; level <= ferrum::max_plan_json_depth; ++level) deepest += "/0";
  CHECK(beyond.path == deepest);

  const ferrum::error huge = rejection_of(std::string(1'000'000, '['));
  CHECK(huge == errc::json_too_deep);
  std::string keyed;
  for (int i = 0; i < 100'000; ++i) keyed += R"({"a":)";
  CHECK(rejection_of(keyed) == errc::json_too_deep);
}

TEST_CASE("plan_json: a document of another format is unsupported", "[binding][plan_json]") {
  const ferrum::error other = rejection_of(with("/format", R"("ferrum.plan.v3")"));
  CHECK(other == errc::unsupported_format);
  CHECK(other.path == "/format");

  // The format is checked before the fields, so a compiled document is named
  // as such rather than by its first unfamiliar field.
  const ferrum::error compiled_doc =
      rejection_of(R"({"format": "ferrum.compiled.v1", "plan_hash": "x", "buckets": []})");
  CHECK(compiled_doc == errc::unsupported_format);

  const ferrum::error missing = rejection_of(without("/format"));
  CHECK(missing == errc::missing_field);
  CHECK(missing.path == "/format");
}

TEST_CASE("plan_json: unknown fields are rejected at their pointer", "[binding][plan_json]") {
  struct unknown_case {
    std::string pointer;
    std::string expected;
  };
  for (const unknown_case& c : std::vector<unknown_case>{
           {"/lane", "/lane"},
           {"/nodes/0/bindings", "/nodes/0/bindings"},
           {"/resources/2/storage/layout", "/resources/2/storage/layout"},
           {"/resources/2/demand/bytes", "/resources/2/demand/bytes"},
           {"/buckets/0/id", "/buckets/0/id"},
           {"/buckets/0/budgets/1/maximum", "/buckets/0/budgets/1/maximum"},
           {"/pools/pool~1scratch/mode", "/pools/pool~1scratch/mode"},
           {"/resources/0/a~1b", "/resources/0/a~1b"},
       }) {
    INFO(c.pointer);
    const ferrum::error e = rejection_of(with(c.pointer, "1"));
    CHECK(e == errc::unknown_field);
    CHECK(e.path == c.expected);
  }
}

TEST_CASE("plan_json: a workspace resource may not name a node", "[binding][plan_json]") {
  const ferrum::error e = rejection_of(with("/resources/2/node", R"("node/second")"));
  CHECK(e == errc::unknown_field);
  CHECK(e.path == "/resources/2/node");
}

TEST_CASE("plan_json: missing required fields are named where they belong", "[binding][plan_json]") {
  for (const std::string pointer : {"/nodes",
                                    "/resources",
                                    "/buckets",
                                    "/lanes",
                                    "/budget_bytes",
                                    "/nodes/1/id",
                                    "/nodes/0/resources",
                                    "/resources/2/alignment",
                                    "/resources/1/id",
                                    "/resources/1/pool",
                                    "/resources/1/kind",
                                    "/resources/0/node",
                                    "/resources/0/demand",
                                    "/resources/0/lifetime",
                                    "/resources/0/usage",
                                    "/resources/0/element",
                                    "/resources/0/storage",
                                    "/resources/0/storage/allocator",
                                    "/resources/0/storage/view",
                                    "/resources/0/storage/contract",
                                    "/resources/2/demand/dimension",
                                    "/resources/2/demand/base",
                                    "/resources/2/demand/per_unit",
                                    "/resources/0/demand/fixed",
                                    "/buckets/0/class",
                                    "/buckets/0/capacity",
                                    "/buckets/0/budgets",
                                    "/buckets/0/budgets/0/pool",
                                    "/buckets/0/budgets/0/min",
                                    "/buckets/0/budgets/1/max",
                                    "/pools/pool~1scratch/liveness"}) {
    INFO(pointer);
    const ferrum::error e = rejection_of(without(pointer));
    CHECK(e == errc::missing_field);
    CHECK(e.path == pointer);
  }
}

TEST_CASE("plan_json: a demand is either fixed or scaled, never a mix", "[binding][plan_json]") {
  const ferrum::error mixed = rejection_of(with("/resources/0/demand/base", "0"));
  CHECK(mixed == errc::unknown_field);
  CHECK(mixed.path == "/resources/0/demand/base");

  const ferrum::error partial = rejection_of(with("/resources/0/demand", R"({"per_unit": 8})"));
  CHECK(partial == errc::missing_field);
  CHECK(partial.path == "/resources/0/demand/base");

  const ferrum::error scaled_plus_fixed = rejection_of(with("/resources/2/demand/fixed", "64"));
  CHECK(scaled_plus_fixed == errc::unknown_field);
  CHECK(scaled_plus_fixed.path == "/resources/2/demand/base");

  const ferrum::error wrong_key = rejection_of(with("/resources/0/demand", R"({"size": 64})"));
  CHECK(wrong_key == errc::unknown_field);
  CHECK(wrong_key.path == "/resources/0/demand/size");

  const ferrum::error empty = rejection_of(with("/resources/0/demand", "{}"));
  CHECK(empty == errc::missing_field);
  CHECK(empty.path == "/resources/0/demand/fixed");
}

TEST_CASE("plan_json: values of the wrong JSON type are rejected", "[binding][plan_json]") {
  struct type_case {
    std::string pointer;
    std::string raw;
  };
  for (const type_case& c : std::vector<type_case>{
           {"/lanes", R"("3")"},
           {"/budget_bytes", "true"},
           {"/nodes", "{}"},
           {"/nodes/0", R"("node/first")"},
           {"/nodes/0/resources", R"("resource/first")"},
           {"/nodes/0/id", "null"},
           {"/resources/0/demand", "64"},
           {"/resources/0/demand/fixed", R"("64")"},
           {"/resources/0/alignment", "[16]"},
           {"/resources/0/kind", "1"},
           {"/resources/2/storage/contract", "5"},
           {"/buckets/0/capacity", R"("1x64x1")"},
           {"/buckets/0/capacity/1", "null"},
           {"/buckets/0/budgets", "{}"},
           {"/pools", "[]"},
           {"/pools/pool~1scratch", R"("interval")"},
           {"/format", "1"},
       }) {
    INFO(c.pointer << " = " << c.raw);
    const ferrum::error e = rejection_of(with(c.pointer, c.raw));
    CHECK(e == errc::wrong_type);
    CHECK(e.path == c.pointer);
  }
  for (std::string_view root : {"[]", "\"plan\"", "3", "null"}) {
    const ferrum::error e = rejection_of(root);
    CHECK(e == errc::wrong_type);
    CHECK(e.path.empty());
  }
}

TEST_CASE("plan_json: a capacity must hold exactly three dimensions", "[binding][plan_json]") {
  for (std::string_view raw : {"[]", "[1, 64]", "[1, 64, 1, 1]"}) {
    INFO(raw);
    const ferrum::error e = rejection_of(with("/buckets/0/capacity", raw));
    CHECK(e == errc::wrong_type);
    CHECK(e.path == "/buckets/0/capacity");
  }
}

TEST_CASE("plan_json: negative, fractional and oversized numbers are out of range", "[binding][plan_json]") {
  struct number_case {
    std::string pointer;
    std::string raw;
  };
  for (const number_case& c : std::vector<number_case>{
           {"/lanes", "-1"},
           {"/lanes", "-0"},
           {"/lanes", "0"},
           {"/lanes", "4294967296"},
           {"/lanes", "1.0"},
           {"/resources/0/alignment", "1.5"},
           {"/budget_bytes", "1e3"},
           {"/budget_bytes", "18446744073709551616"},
           {"/budget_bytes", "-9223372036854775809"},
           {"/budget_bytes", "1e400"},
           {"/buckets/0/capacity/2", "-1e400"},
           {"/resources/2/demand/dimension", "3"},
           {"/resources/2/demand/per_unit", "-256"},
           {"/resources/0/demand/fixed", "64.5"},
           {"/buckets/0/capacity/1", "0"},
           {"/buckets/0/budgets/0/min", "-5"},
       }) {
    INFO(c.pointer << " = " << c.raw);
    const ferrum::error e = rejection_of(with(c.pointer, c.raw));
    CHECK(e == errc::number_out_of_range);
    CHECK(e.path == c.pointer);
  }
}

TEST_CASE("plan_json: numbers at the edges of their ranges load", "[binding][plan_json]") {
  CHECK(loads(with("/lanes", "4294967295")).lanes == 4294967295u);
  CHECK(loads(with("/lanes", "1")).lanes == 1);
  CHECK(loads(with("/budget_bytes", "18446744073709551615")).budget_bytes == UINT64_MAX);
  CHECK(loads(with("/budget_bytes", "0")).budget_bytes == 0);
  CHECK(loads(with("/resources/2/demand/dimension", "2")).resources[2].demand.dimension == 2);
  CHECK(loads(with("/resources/0/alignment", "3")).resources[0].alignment == 3);
  CHECK(loads(with("/buckets/0/budgets/1/max", "18446744073709551615")).buckets[0].budgets[1].max == UINT64_MAX);
}

TEST_CASE("plan_json: an enum string outside the format's names is an unknown value", "[binding][plan_json]") {
  for (const std::string pointer :
       {"/resources/0/kind", "/resources/0/lifetime", "/resources/0/usage", "/resources/2/element",
        "/resources/2/storage/allocator", "/resources/2/storage/view", "/pools/pool~1scratch/liveness"}) {
    INFO(pointer);
    const ferrum::error e = rejection_of(with(pointer, R"("Binding")"));
    CHECK(e == errc::unknown_value);
    CHECK(e.path == pointer);
  }
  CHECK(rejection_of(with("/resources/2/element", R"("f64")")).detail.find("'f16'") != std::string::npos);
}

TEST_CASE("plan_json: malformed ids are rejected at the string that holds them", "[binding][plan_json]") {
  for (const std::string pointer :
       {"/nodes/0/id", "/nodes/1/resources/1", "/nodes/1/binding", "/resources/0/id", "/resources/0/pool",
        "/resources/0/node", "/buckets/0/class", "/buckets/0/budgets/0/pool"}) {
    INFO(pointer);
    const ferrum::error e = rejection_of(with(pointer, R"("Upper/Case")"));
    CHECK(e == errc::invalid_id);
    CHECK(e.path == pointer);
  }
  CHECK(rejection_of(with("/nodes/0/id", R"("")")).path == "/nodes/0/id");
  CHECK(rejection_of(with("/nodes/0/id", '"' + std::string(129, 'n') + '"')) == errc::invalid_id);
  json longest = json::parse(example_text);
  longest["nodes"][0]["id"] = longest["resources"][0]["node"] = std::string(128, 'n');
  CHECK(loads(longest.dump()).nodes[0].id.str().size() == 128);

  const ferrum::error pool_key = rejection_of(with("/pools/Pool Scratch", R"({"liveness": "interval"})"));
  CHECK(pool_key == errc::invalid_id);
  CHECK(pool_key.path == "/pools/Pool Scratch");

  const ferrum::error bucket_class = rejection_of(with("/buckets/0/class", R"("step@2")"));
  CHECK(bucket_class == errc::invalid_id);
  CHECK(bucket_class.path == "/buckets/0/class");
}

TEST_CASE("plan_json: a long bad id is quoted briefly and printably", "[binding][plan_json]") {
  const ferrum::error e = rejection_of(with("/nodes/0/id", '"' + std::string(200, 'x') + "\\u00e9\""));
  CHECK(e == errc::invalid_id);
  CHECK(e.detail.size() < 160);
  const ferrum::error accented = rejection_of(with("/nodes/0/id", "\"n\\u00e9\""));
  CHECK(accented == errc::invalid_id);
  CHECK(printable_ascii(accented.detail));
}

TEST_CASE("plan_json: validate_plan's errors come back unchanged", "[binding][plan_json]") {
  struct validation_case {
    std::string text;
    errc code;
    std::string path;
  };
  const std::string bad_contract = R"("ABCDEF6789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")";
  for (const validation_case& c : std::vector<validation_case>{
           {with("/nodes", "[]"), errc::empty_plan, "/nodes"},
           {with("/buckets", "[]"), errc::empty_plan, "/buckets"},
           {with("/resources/1/id", R"("resource/first")"), errc::duplicate_id, "/resources/1/id"},
           {with("/nodes/1/id", R"("node/first")"), errc::duplicate_id, "/nodes/1/id"},
           {with("/nodes/0/resources/0", R"("resource/missing")"), errc::dangling_reference, "/nodes/0/resources/0"},
           {with("/pools/pool~1unused", R"({"liveness": "conservative"})"), errc::dangling_reference,
            "/pools/pool~1unused"},
           {with("/nodes/1/resources", R"(["resource/second"])"), errc::unused_resource, "/resources/2"},
           {with("/resources/0/storage/contract", bad_contract), errc::invalid_contract,
            "/resources/0/storage/contract"},
           {with("/buckets/0/budgets/1", R"({"pool": "pool/bindings", "min": 0, "max": 1})"), errc::duplicate_id,
            "/buckets/0/budgets/1"},
           {with("/buckets/0/budgets", R"([{"pool": "pool/bindings", "min": 0, "max": 4096}])"), errc::missing_budget,
            "/buckets/0/budgets"},
           {with("/buckets/0/budgets/0/min", "5000"), errc::invalid_budget, "/buckets/0/budgets/0"},
           {with("/nodes/1/binding", R"("resource/scratch")"), errc::binding_not_owned, "/nodes/1/binding"},
       }) {
    INFO(c.path);
    const ferrum::error e = rejection_of(c.text);
    CHECK(e == c.code);
    CHECK(e.path == c.path);
  }

  json orphan = json::parse(example_text);
  orphan["nodes"][0].erase("binding");
  orphan["resources"][0]["node"] = "node/missing";
  const ferrum::error e = rejection_of(orphan.dump());
  CHECK(e == errc::dangling_reference);
  CHECK(e.path == "/resources/0/node");
}

TEST_CASE("plan_json: schema_only leaves validate_plan to compile, which reports the same error",
          "[binding][plan_json]") {
  for (const std::string& text :
       {with("/resources/1/id", R"("resource/first")"), with("/nodes/0/resources/0", R"("resource/missing")"),
        with("/nodes/1/resources", R"(["resource/second"])")}) {
    const ferrum::error validated = rejection_of(text);
    INFO(validated.what());
    // Both parses: the fast one and the reference one.
    for (const auto& parsed : {ferrum::parse_plan(text, ferrum::plan_checks::schema_only),
                               ferrum::detail::parse_plan_reference(text, ferrum::plan_checks::schema_only)}) {
      REQUIRE(parsed.has_value());
      const auto program = ferrum::compile(*parsed);
      REQUIRE_FALSE(program.has_value());
      CHECK(program.error().code == validated.code);
      CHECK(program.error().path == validated.path);
      CHECK(program.error().detail == validated.detail);
    }
  }
  // The schema's own checks stay.
  const auto unknown = ferrum::parse_plan(with("/nodes/0/colour", R"("red")"), ferrum::plan_checks::schema_only);
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error() == errc::unknown_field);
  CHECK(ferrum::parse_plan(std::string(example_text), ferrum::plan_checks::schema_only).value().nodes.size() == 2);
}

// parse_plan reads a text with simdjson where simdjson accepts it and with the
// reference parser (nlohmann) otherwise; the two must not differ in what a
// text means. `differs` says how they do, or is empty.
std::string difference(std::string_view text) {
  const auto fast = ferrum::parse_plan(text);
  const auto reference = ferrum::detail::parse_plan_reference(text);
  if (fast.has_value() != reference.has_value())
    return fast ? "only the reference rejects: " + reference.error().what()
                : "only the fast parse rejects: " + fast.error().what();
  if (fast) return ferrum::hash_plan(*fast).value() == ferrum::hash_plan(*reference).value() ? "" : "plans differ";
  const ferrum::error& a = fast.error();
  const ferrum::error& b = reference.error();
  return a.code == b.code && a.path == b.path && a.detail == b.detail ? "" : a.what() + " vs " + b.what();
}

TEST_CASE("plan_json: the fast and the reference parse agree on every corrupted byte", "[binding][plan_json]") {
  std::size_t compared = 0;
  for (std::size_t at = 0; at < example_text.size(); at += test_support::sanitized_stride) {
    for (char c : {'"', '}', ']', '[', '{', '0', '-', ',', ':', ' ', '\0', '\xff', 'x'}) {
      std::string text(example_text);
      text[at] = c;
      const std::string diff = difference(text);
      ++compared;
      if (!diff.empty()) {
        FAIL_CHECK("byte " << at << " := " << static_cast<int>(c) << ": " << diff);
        return;
      }
    }
  }
  CHECK(compared == (example_text.size() + test_support::sanitized_stride - 1) / test_support::sanitized_stride * 13);
}

TEST_CASE("plan_json: the fast and the reference parse agree on the example plans and on edge cases",
          "[binding][plan_json]") {
  for (const char* name :
       {"two_nodes.json", "multi_bucket.json", "interval_liveness.json", "history.json", "two_queues.json"}) {
    INFO(name);
    const std::string text = read_example(name);
    CHECK(ferrum::parse_plan(text).has_value());
    CHECK(difference(text).empty());
  }
  for (const std::string& text :
       {with("/lanes", "-0"), with("/budget_bytes", "-0"), with("/budget_bytes", " -0 "), with("/budget_bytes", "-0.0"),
        with("/budget_bytes", "1E2"), with("/budget_bytes", "9223372036854775808"),
        std::string("\xef\xbb\xbf") + std::string(example_text), replaced("node/first", "node/a\\u002d0"),
        replaced("node/first", "node/\\ud800"), replaced("\"lanes\": 3", "\"lanes\": 3, \"x\": \"\\u0000\""),
        std::string(example_text) + "\n\n", std::string(100, '[') + std::string(100, ']'),
        std::string(10'000, '[') + std::string(10'000, ']')}) {
    INFO(text.substr(0, 200));
    CHECK(difference(text).empty());
  }
}

TEST_CASE("plan_json: the integer -0 is a negative number wherever it is", "[binding][plan_json]") {
  for (const std::string& text :
       {with("/budget_bytes", "-0"), with("/buckets/0/budgets/0/min", " -0"), with("/buckets/0/capacity/0", "-0")}) {
    INFO(text);
    const ferrum::error e = rejection_of(text);
    CHECK(e == errc::number_out_of_range);
    CHECK(e.detail == "expected an unsigned integer, got a negative number");
  }
  // "-0" inside ids and strings is just text.
  std::string renamed(example_text);
  for (auto at = renamed.find("node/first"); at != std::string::npos; at = renamed.find("node/first"))
    renamed.replace(at, 10, "node/a-0");
  CHECK(loads(renamed).nodes[0].id.str() == "node/a-0");
}

TEST_CASE("plan_json: a repeated key is found in objects of any size", "[binding][plan_json]") {
  std::string members;
  for (int i = 0; i < 40; ++i) members += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
  for (const std::string& repeated : {std::string("k3"), std::string("k39")}) {
    const std::string text = R"({"unknown": {)" + members + "\"" + repeated + "\": 0}}";
    const ferrum::error e = rejection_of(text);
    CHECK(e == errc::duplicate_key);
    CHECK(e.path == "/unknown/" + repeated);
    CHECK(difference(text).empty());
  }
}

TEST_CASE("plan_json: of several unknown fields, the first in key order is named", "[binding][plan_json]") {
  const ferrum::error e = rejection_of(replaced("\"lanes\": 3", "\"zz\": 1, \"lanes\": 3, \"yy\": 2"));
  CHECK(e == errc::unknown_field);
  CHECK(e.path == "/yy");
}

}  // namespace
