// Tests of frame_builder::reset() and hash() over frames declared again and
// again, and of program_cache: a frame alternating between two shapes
// compiles twice and then only hits; the least recently used program is
// evicted; a refusal is returned and nothing kept.
#include "ferrum/binding/program_cache.hpp"

#include "frame_shapes.hpp"
#include "plan_builder.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace ferrum;

namespace {

// hash_plan of what `f` builds, which must.
plan_hash built_hash(const frame_builder& f) {
  const result<plan> built = f.build();
  INFO((built ? std::string() : built.error().what()));
  REQUIRE(built.has_value());
  return hash_plan(*built).value();
}

// `f`, reset, declaring the chain's first `length` passes.
frame_builder& redeclare(frame_builder& f, const test::chain_names& names, std::size_t length,
                         std::uint64_t width = 64) {
  f.reset();
  test::declare_chain(f, names, length, width);
  return f;
}

}  // namespace

TEST_CASE("frame builder: reset() forgets the frame, its handles, and hashes it again the same", "[frame_builder]") {
  const test::chain_names names(10);
  frame_builder f;
  test::declare_chain(f, names, 8);
  const node_handle before = f.add_pass("node/extra");
  const plan_hash eight = built_hash(f);
  f.reset();
  CHECK(f.pass_count() == 0);
  test::declare_chain(f, names, 8);
  CHECK_FALSE(f.hash().value() == eight);  // node/extra is gone
  const plan_hash chain = built_hash(f);
  CHECK(f.hash().value() == chain);
  // A handle made before reset() is another frame's.
  f.after(f.add_pass("node/late"), before);
  REQUIRE_FALSE(f.hash().has_value());
  CHECK(f.hash().error() == errc::dangling_reference);
  CHECK(f.build().error() == errc::dangling_reference);
  // Two shapes in turn, each hashed as its plan (the encodings kept for
  // them give back each one's own digest).
  const plan_hash nine = built_hash(redeclare(f, names, 9));
  for (int round = 0; round < 4; ++round) {
    const std::size_t length = round % 2 == 0 ? 8 : 9;
    CHECK(redeclare(f, names, length).hash().value() == (length == 8 ? chain : nine));
    CHECK(built_hash(f) == (length == 8 ? chain : nine));
  }
  // Two frames whose encodings are as long, in turn.
  const plan_hash wide = built_hash(redeclare(f, names, 8, 65));
  for (int round = 0; round < 4; ++round) {
    const std::uint64_t width = round % 2 == 0 ? 64 : 65;
    CHECK(redeclare(f, names, 8, width).hash().value() == (width == 64 ? chain : wide));
  }
  // A third shape in between, then the first again.
  const plan_hash ten = redeclare(f, names, 10).hash().value();
  CHECK(ten == built_hash(f));
  CHECK(redeclare(f, names, 8).hash().value() == chain);
}

TEST_CASE("program cache: a frame alternating between two shapes compiles twice, then only hits", "[program_cache]") {
  const test::chain_names names(9);
  program_cache cache(4);
  frame_builder f;
  std::vector<std::shared_ptr<const compiled_program>> programs;
  for (int round = 0; round < 6; ++round) {
    const std::size_t length = round % 2 == 0 ? 8 : 9;
    auto program = cache.get(redeclare(f, names, length));
    REQUIRE(program.has_value());
    CHECK((*program)->hash == built_hash(f));
    CHECK((*program)->node_count == length);
    programs.push_back(*program);
  }
  CHECK(cache.stats() == program_cache::counters{.hits = 4, .misses = 2, .evictions = 0});
  CHECK(programs[4] == programs[0]);  // the very program compiled first
  CHECK(programs[5] == programs[1]);
  CHECK(cache.size() == 2);
  CHECK(cache.find(programs[0]->hash) == programs[0]);
}

TEST_CASE("program cache: past its capacity, the least recently used is evicted", "[program_cache]") {
  const test::chain_names names(10);
  frame_builder f;
  SECTION("capacity 1") {
    program_cache cache(1);
    const auto eight = cache.get(redeclare(f, names, 8)).value();
    const auto nine = cache.get(redeclare(f, names, 9)).value();
    CHECK(cache.find(eight->hash) == nullptr);
    CHECK(cache.find(nine->hash) == nine);
    CHECK(cache.get(redeclare(f, names, 8)).value() != eight);  // compiled again
    CHECK(cache.stats() == program_cache::counters{.hits = 0, .misses = 3, .evictions = 2});
    CHECK(cache.size() == 1);
  }
  SECTION("capacity 2: a hit makes a program the latest") {
    program_cache cache(2);
    const auto eight = cache.get(redeclare(f, names, 8)).value();
    const auto nine = cache.get(redeclare(f, names, 9)).value();
    CHECK(cache.get(redeclare(f, names, 8)).value() == eight);
    const auto ten = cache.get(redeclare(f, names, 10)).value();
    CHECK(cache.find(eight->hash) == eight);
    CHECK(cache.find(nine->hash) == nullptr);
    CHECK(cache.find(ten->hash) == ten);
    CHECK(cache.stats() == program_cache::counters{.hits = 1, .misses = 3, .evictions = 1});
  }
}

TEST_CASE("program cache: a refusal of hash, build or compile is returned, and nothing kept", "[program_cache]") {
  const test::chain_names names(4);
  program_cache cache(4);
  frame_builder f;
  SECTION("hash(): a name twice") {
    test::declare_chain(f, names, 2);
    f.add_pass(names.passes[0]);
    const auto got = cache.get(f);
    REQUIRE_FALSE(got.has_value());
    CHECK(got.error() == errc::duplicate_id);
    CHECK(cache.stats() == program_cache::counters{});
  }
  SECTION("build(): what validate_plan refuses") {
    test::declare_chain(f, names, 2);
    f.add_buffer("resource/unused", {.size = resource_demand::fixed(64)});
    const auto got = cache.get(f);
    REQUIRE_FALSE(got.has_value());
    CHECK(got.error() == errc::unused_resource);
    CHECK(cache.stats().misses == 1);
  }
  SECTION("compile(): a frame over its budget") {
    frame_builder small({.budget_bytes = 1024});
    // Kept: else its pass, whose writes nothing reads, is culled.
    small.access(small.add_pass("node/a"),
                 small.add_buffer("resource/big", {.size = resource_demand::fixed(1 << 20), .kept = true}),
                 resource_access::write);
    REQUIRE(small.build().has_value());
    const auto got = cache.get(small);
    REQUIRE_FALSE(got.has_value());
    CHECK(test::code_of(got.error()) == test::code_of(compile(small.build().value()).error()));
    CHECK(cache.stats().misses == 1);
  }
  CHECK(cache.size() == 0);
  // The same builder, declared well, is compiled and kept.
  REQUIRE(cache.get(redeclare(f, names, 4)).has_value());
  CHECK(cache.size() == 1);
}

TEST_CASE("program cache: a program compiled elsewhere, inserted, is what get() finds", "[program_cache]") {
  const test::chain_names names(4);
  program_cache cache(2);
  frame_builder f;
  test::declare_chain(f, names, 4);
  const auto program = std::make_shared<const compiled_program>(test::compile_ok(f.build().value()));
  CHECK(cache.insert(program) == program);
  // Inserted again (another compile of the plan): the one kept stays.
  CHECK(cache.insert(std::make_shared<const compiled_program>(test::compile_ok(f.build().value()))) == program);
  CHECK(cache.get(f).value() == program);
  CHECK(cache.stats() == program_cache::counters{.hits = 1, .misses = 0, .evictions = 0});
}
