// Tests of the compiled-program cache (ferrum.program.v1): a saved program
// loads back equal to a fresh compile, and every kind of bad file — wrong
// magic or version, truncated, tampered, stale, or resealed with unsafe
// layouts — is rejected with its own code, never a crash.
#include "ferrum/binding/compiled_program_file.hpp"
#include "ferrum/binding/plan_json.hpp"

#include "plan_builder.hpp"

#include <openssl/sha.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

using namespace ferrum;
using test::code_of;

namespace {

using bytes_t = std::vector<std::byte>;

plan example_plan(const std::string& name) {
  std::ifstream file(std::string(FERRUM_SOURCE_DIR) + "/examples/plans/" + name, std::ios::binary);
  REQUIRE(file);
  std::stringstream text;
  text << file.rdbuf();
  auto p = parse_plan(text.str());
  if (!p) FAIL(p.error().what());
  return std::move(*p);
}

// Binding nodes, an interval workspace pool with overlapping and disjoint
// intervals, a persistent pool, and three buckets.
plan mixed_plan() {
  using test::workspace_resource;
  resource_descriptor state = workspace_resource("resource/state", "pool/history", resource_demand::fixed(512), 64);
  state.lifetime = allocation_lifetime::persistent;
  state.storage.digest = test::contract_a;
  return test::plan_builder()
      .binding_node("node/a", "resource/a", 64)
      .binding_node("node/b", "resource/b", 96, 32)
      .binding_node("node/c", "resource/c", 128, 64)
      .binding_node("node/d", "resource/d", 16)
      .resource(workspace_resource("resource/tmp.0", "pool/scratch", resource_demand::scaled(256, 512, 1)))
      .resource(workspace_resource("resource/tmp.1", "pool/scratch", resource_demand::scaled(0, 1024, 0), 512))
      .resource(workspace_resource("resource/tmp.2", "pool/scratch", resource_demand::fixed(4096)))
      .resource(state)
      .use(0, "resource/tmp.0")
      .use(1, "resource/tmp.0")
      .use(1, "resource/tmp.1")
      .use(2, "resource/tmp.2")
      .use(3, "resource/tmp.2")
      .use(0, "resource/state")
      .use(3, "resource/state")
      .interval("pool/scratch")
      .bucket("step", {1, 1, 1},
              {{"pool/bindings", 0, 1 << 20}, {"pool/scratch", 0, 1 << 20}, {"pool/history", 0, 4096}})
      .bucket("step", {2, 8, 1},
              {{"pool/bindings", 0, 1 << 20}, {"pool/scratch", 0, 1 << 20}, {"pool/history", 0, 4096}})
      .bucket("frame", {4, 2, 2},
              {{"pool/scratch", 0, 1 << 20}, {"pool/history", 0, 4096}, {"pool/bindings", 0, 1 << 20}})
      .lanes(3)
      .budget(std::uint64_t{1} << 30)
      .build();
}

bytes_t save_ok(const compiled_program& program, const plan& p) {
  auto bytes = save_compiled_program(program, p);
  if (!bytes) FAIL(bytes.error().what());
  return std::move(*bytes);
}

// Every field of two programs, compared.
void check_equal(const compiled_program& a, const compiled_program& b) {
  CHECK(a.hash == b.hash);
  CHECK(a.node_count == b.node_count);
  CHECK(a.dependencies == b.dependencies);
  CHECK(a.lanes == b.lanes);
  CHECK(a.budget_bytes == b.budget_bytes);
  CHECK(a.admitted_bytes == b.admitted_bytes);
  REQUIRE(a.domains.size() == b.domains.size());
  for (std::size_t d = 0; d < a.domains.size(); ++d) {
    CHECK(a.domains[d].pool == b.domains[d].pool);
    CHECK(a.domains[d].liveness == b.domains[d].liveness);
    CHECK(a.domains[d].members == b.domains[d].members);
  }
  REQUIRE(a.wave_layouts.size() == b.wave_layouts.size());
  for (std::size_t d = 0; d < a.wave_layouts.size(); ++d) {
    const wave_domain_layout& x = a.wave_layouts[d];
    const wave_domain_layout& y = b.wave_layouts[d];
    CHECK(x.projection_count == y.projection_count);
    CHECK(x.claim == y.claim);
    CHECK(x.claim.ids() == y.claim.ids());
    REQUIRE(x.intervals.size() == y.intervals.size());
    for (std::size_t i = 0; i < x.intervals.size(); ++i) {
      CHECK(x.intervals[i].first == y.intervals[i].first);
      CHECK(x.intervals[i].last == y.intervals[i].last);
    }
  }
  REQUIRE(a.buckets.size() == b.buckets.size());
  for (std::size_t i = 0; i < a.buckets.size(); ++i) {
    const compiled_bucket& x = a.buckets[i];
    const compiled_bucket& y = b.buckets[i];
    CHECK(x.id == y.id);
    CHECK(x.spec.cls == y.spec.cls);
    CHECK(x.spec.dims == y.spec.dims);
    REQUIRE(x.spec.budgets.size() == y.spec.budgets.size());
    for (std::size_t j = 0; j < x.spec.budgets.size(); ++j) {
      CHECK(x.spec.budgets[j].pool == y.spec.budgets[j].pool);
      CHECK(x.spec.budgets[j].min == y.spec.budgets[j].min);
      CHECK(x.spec.budgets[j].max == y.spec.budgets[j].max);
    }
    CHECK(x.capacity_layouts == y.capacity_layouts);
    CHECK(x.pool_offsets == y.pool_offsets);
    CHECK(x.lane_size_bytes == y.lane_size_bytes);
    CHECK(x.unaliased_lane_size_bytes == y.unaliased_lane_size_bytes);
    REQUIRE((x.binding == nullptr) == (y.binding == nullptr));
    if (x.binding) CHECK(*x.binding == *y.binding);
  }
}

void check_round_trip(const plan& p) {
  const compiled_program compiled = test::compile_ok(p);
  const bytes_t bytes = save_ok(compiled, p);
  auto loaded = load_compiled_program(bytes, p);
  if (!loaded) FAIL(loaded.error().what());
  check_equal(*loaded, compiled);
}

// Recomputes the trailing SHA-256, as someone editing the file would.
void reseal(bytes_t& bytes) {
  REQUIRE(bytes.size() >= 32);
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size() - 32,
         reinterpret_cast<unsigned char*>(bytes.data() + bytes.size() - 32));
}

void put_u64(bytes_t& bytes, std::size_t at, std::uint64_t v) {
  for (std::size_t i = 0; i < 8; ++i) bytes.at(at + i) = static_cast<std::byte>(v >> (8 * i));
}
void put_u32(bytes_t& bytes, std::size_t at, std::uint32_t v) {
  for (std::size_t i = 0; i < 4; ++i) bytes.at(at + i) = static_cast<std::byte>(v >> (8 * i));
}

// Where fields lie in a file of `program` and `p` (docs/interfaces.md,
// "ferrum.program.v1").
struct file_map {
  std::size_t buckets_at;
  std::size_t bucket_bytes;
  std::vector<std::size_t> domain_start;  // first projection index of each domain

  file_map(const compiled_program& program, const plan& p) {
    std::size_t uses = 0;
    for (const plan_node& n : p.nodes) uses += n.resources.size();
    buckets_at = 112 + 4 * p.nodes.size() + 8 * p.resources.size() + 4 * uses;
    bucket_bytes = 56 + 24 * program.domains.size() + 16 * p.resources.size();
    std::size_t start = 0;
    for (const pool_domain& d : program.domains) {
      domain_start.push_back(start);
      start += d.members.size();
    }
  }
  [[nodiscard]] std::size_t bucket(std::size_t b) const { return buckets_at + b * bucket_bytes; }
  [[nodiscard]] std::size_t lane_bytes(std::size_t b) const { return bucket(b) + 8; }
  [[nodiscard]] std::size_t fingerprint(std::size_t b) const { return bucket(b) + 24; }
  [[nodiscard]] std::size_t lane_offset(std::size_t b, std::size_t d) const { return bucket(b) + 56 + 24 * d; }
  [[nodiscard]] std::size_t projection(std::size_t b, std::size_t d, std::size_t m, std::size_t domains) const {
    return bucket(b) + 56 + 24 * domains + 16 * (domain_start[d] + m);
  }
};

error load_error(const bytes_t& bytes, const plan& p) {
  auto loaded = load_compiled_program(bytes, p);
  REQUIRE_FALSE(loaded.has_value());
  return loaded.error();
}

}  // namespace

TEST_CASE("compiled_program_file: every example plan loads back equal to a fresh compile", "[binding][program_file]") {
  for (const char* name : {"two_nodes.json", "multi_bucket.json", "interval_liveness.json", "history.json",
                           "two_queues.json", "frame_chains.json", "taa_history.json", "async_compute.json"}) {
    INFO(name);
    check_round_trip(example_plan(name));
  }
}

TEST_CASE("compiled_program_file: interval, persistent and binding pools in three buckets load back equal",
          "[binding][program_file]") {
  const plan p = mixed_plan();
  const compiled_program compiled = test::compile_ok(p);
  REQUIRE(compiled.buckets.size() == 3);
  REQUIRE(compiled.domains.size() == 3);
  // Interval aliasing is in play: the scratch pool's arena is smaller than unaliased.
  CHECK(std::any_of(compiled.buckets.begin(), compiled.buckets.end(), [](const compiled_bucket& b) {
    return b.capacity_layouts[2].physical_size_bytes < b.capacity_layouts[2].unaliased_size_bytes;
  }));
  check_round_trip(p);
  check_round_trip(test::two_node_plan());
}

TEST_CASE("compiled_program_file: saving is deterministic and refuses another plan", "[binding][program_file]") {
  const plan p = mixed_plan();
  const compiled_program compiled = test::compile_ok(p);
  CHECK(save_ok(compiled, p) == save_ok(test::compile_ok(p), p));
  CHECK(code_of(save_compiled_program(compiled, test::two_node_plan())) == errc::program_plan_mismatch);
}

TEST_CASE("compiled_program_file: a file that does not start with the magic is rejected", "[binding][program_file]") {
  const plan p = test::two_node_plan();
  bytes_t bytes = save_ok(test::compile_ok(p), p);
  bytes[0] = std::byte{'G'};
  CHECK(test::code_of(load_error(bytes, p)) == errc::program_bad_magic);
  const std::string json = "{\"format\": \"ferrum.plan.v1\"}";
  bytes_t text(json.size());
  std::memcpy(text.data(), json.data(), json.size());
  CHECK(test::code_of(load_error(text, p)) == errc::program_bad_magic);
}

TEST_CASE("compiled_program_file: another format version is rejected with its number", "[binding][program_file]") {
  const plan p = test::two_node_plan();
  bytes_t bytes = save_ok(test::compile_ok(p), p);
  put_u32(bytes, 8, 2);
  reseal(bytes);
  const error e = load_error(bytes, p);
  CHECK(test::code_of(e) == errc::program_version_unsupported);
  CHECK(e.detail.find("version 2") != std::string::npos);
}

TEST_CASE("compiled_program_file: a file cut at any byte is rejected as truncated", "[binding][program_file]") {
  const plan p = mixed_plan();
  const bytes_t bytes = save_ok(test::compile_ok(p), p);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    INFO("cut at " << cut);
    const bytes_t prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    CHECK(test::code_of(load_error(prefix, p)) == errc::program_truncated);
  }
}

TEST_CASE("compiled_program_file: flipping any byte is detected, never accepted", "[binding][program_file]") {
  const plan p = mixed_plan();
  const bytes_t bytes = save_ok(test::compile_ok(p), p);
  for (std::size_t at = 0; at < bytes.size(); ++at) {
    INFO("byte " << at);
    bytes_t flipped = bytes;
    flipped[at] ^= std::byte{0x5a};
    const errc c = test::code_of(load_error(flipped, p));
    if (at < 8)
      CHECK(c == errc::program_bad_magic);
    else if (at < 12)
      CHECK(c == errc::program_version_unsupported);
    else if (at >= 16 && at < 24)  // the declared size
      CHECK((c == errc::program_truncated || c == errc::program_malformed));
    else
      CHECK(c == errc::program_checksum_mismatch);
  }
}

TEST_CASE("compiled_program_file: bytes past the declared end are rejected", "[binding][program_file]") {
  const plan p = test::two_node_plan();
  bytes_t bytes = save_ok(test::compile_ok(p), p);
  bytes.push_back(std::byte{0});
  CHECK(test::code_of(load_error(bytes, p)) == errc::program_malformed);
}

TEST_CASE("compiled_program_file: a program of another plan is stale", "[binding][program_file]") {
  const plan a = test::two_node_plan();
  const bytes_t bytes = save_ok(test::compile_ok(a), a);
  // Same shape, one demand changed: only the plan hash tells them apart.
  plan b = a;
  b.resources[1].demand = resource_demand::fixed(112);
  const error e = load_error(bytes, b);
  CHECK(test::code_of(e) == errc::program_stale);
  CHECK(e.detail.find(test::compile_ok(a).hash.str()) != std::string::npos);
  // Another shape altogether.
  CHECK(test::code_of(load_error(bytes, mixed_plan())) == errc::program_stale);
  // A budget differs: the layouts still fit, the hash does not.
  plan c = a;
  c.budget_bytes += 1;
  CHECK(test::code_of(load_error(bytes, c)) == errc::program_stale);
}

TEST_CASE("compiled_program_file: a resealed file with overlapping slots fails the original module's cover check",
          "[binding][program_file]") {
  const plan p = test::two_node_plan();
  const compiled_program compiled = test::compile_ok(p);
  bytes_t bytes = save_ok(compiled, p);
  const file_map map(compiled, p);
  // Slot 1 (128 bytes at 64) moved onto slot 0's second half.
  put_u64(bytes, map.projection(0, 0, 1, 1), 32);
  reseal(bytes);
  CHECK(test::code_of(load_error(bytes, p)) == errc::non_contiguous_slots);
  // Misaligned.
  put_u64(bytes, map.projection(0, 0, 1, 1), 72);
  reseal(bytes);
  CHECK(test::code_of(load_error(bytes, p)) == errc::program_inconsistent);
}

TEST_CASE("compiled_program_file: a resealed file with swapped slots is not compile's layout",
          "[binding][program_file]") {
  const plan p = test::plan_builder()
                     .binding_node("node/a", "resource/a", 64)
                     .binding_node("node/b", "resource/b", 64)
                     .bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 128}})
                     .build();
  const compiled_program compiled = test::compile_ok(p);
  bytes_t bytes = save_ok(compiled, p);
  const file_map map(compiled, p);
  put_u64(bytes, map.projection(0, 0, 0, 1), 64);
  put_u64(bytes, map.projection(0, 0, 1, 1), 0);
  reseal(bytes);
  const error e = load_error(bytes, p);
  CHECK(test::code_of(e) == errc::program_inconsistent);
  CHECK(e.detail.find("not in compile's order") != std::string::npos);
}

TEST_CASE("compiled_program_file: a resealed file with a wrong fingerprint is rejected", "[binding][program_file]") {
  const plan p = mixed_plan();
  const compiled_program compiled = test::compile_ok(p);
  bytes_t bytes = save_ok(compiled, p);
  const file_map map(compiled, p);
  bytes[map.fingerprint(1) + 5] ^= std::byte{1};
  reseal(bytes);
  const error e = load_error(bytes, p);
  CHECK(test::code_of(e) == errc::program_inconsistent);
  CHECK(e.detail.find("fingerprint") != std::string::npos);
}

TEST_CASE("compiled_program_file: a resealed file aliasing two live resources is rejected", "[binding][program_file]") {
  const plan p = mixed_plan();
  const compiled_program compiled = test::compile_ok(p);
  const std::size_t scratch = 2;
  REQUIRE(compiled.domains[scratch].pool.str() == "pool/scratch");
  // tmp.0 [0..1] and tmp.1 [1..1] are live together at node 1.
  const auto& members = compiled.buckets[0].capacity_layouts[scratch].projections;
  REQUIRE(members[0].resource.str() == "resource/tmp.0");
  REQUIRE(members[1].resource.str() == "resource/tmp.1");
  bytes_t bytes = save_ok(compiled, p);
  const file_map map(compiled, p);
  put_u64(bytes, map.projection(0, scratch, 1, 3), members[0].offset);
  reseal(bytes);
  const error e = load_error(bytes, p);
  CHECK(test::code_of(e) == errc::program_inconsistent);
  CHECK(e.detail.find("share bytes") != std::string::npos);
}

TEST_CASE("compiled_program_file: a resealed file aliasing resources of two queues' unordered nodes is rejected",
          "[binding][program_file]") {
  // n1 (compute) and n2 (transfer) both run after n0, not after each other:
  // their interval resources w1 [1..1] and w2 [2..2] may not share bytes, as
  // the nodes may run at once on two queues (docs/design.md, "Lane memory").
  test::plan_builder b;
  for (int i = 0; i < 3; ++i) b.binding_node("node/n" + std::to_string(i), "resource/n" + std::to_string(i), 64);
  b.bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 1 << 20}});
  plan p = b.build();
  p.format = plan_format::v2;
  p.nodes[1].after = {p.nodes[0].id};
  p.nodes[2].after = {p.nodes[0].id};
  p.nodes[2].queue = queue_kind::transfer;
  for (int i : {1, 2}) {
    const std::string w = "resource/w" + std::to_string(i);
    p.resources.push_back(test::workspace_resource(w, "pool/work", resource_demand::fixed(256)));
    p.nodes[static_cast<std::size_t>(i)].resources.push_back(test::id<resource_id>(w));
  }
  p.buckets[0].budgets.push_back({test::id<pool_id>("pool/work"), 0, 1 << 20});
  p.pools.push_back({test::id<pool_id>("pool/work"), liveness_mode::interval});
  const compiled_program compiled = test::compile_ok(p);
  const std::size_t work = 1;
  REQUIRE(compiled.domains[work].pool.str() == "pool/work");
  const auto& members = compiled.buckets[0].capacity_layouts[work].projections;
  REQUIRE(members[0].offset != members[1].offset);
  bytes_t bytes = save_ok(compiled, p);
  put_u64(bytes, file_map(compiled, p).projection(0, work, 1, 2), members[0].offset);
  reseal(bytes);
  const error e = load_error(bytes, p);
  CHECK(test::code_of(e) == errc::program_inconsistent);
  CHECK(e.detail.find("share bytes") != std::string::npos);
}

TEST_CASE("compiled_program_file: resealed capacities, lane offsets and lane bytes must match the plan",
          "[binding][program_file]") {
  const plan p = mixed_plan();
  const compiled_program compiled = test::compile_ok(p);
  const bytes_t bytes = save_ok(compiled, p);
  const file_map map(compiled, p);
  const auto& history = compiled.buckets[0].capacity_layouts[1];
  REQUIRE(history.pool.str() == "pool/history");

  bytes_t capacity = bytes;
  put_u64(capacity, map.projection(0, 1, 0, 3) + 8, history.projections[0].capacity * 2);
  reseal(capacity);
  CHECK(load_error(capacity, p).detail.find("its demand is") != std::string::npos);

  bytes_t offset = bytes;
  put_u64(offset, map.lane_offset(0, 1), compiled.buckets[0].pool_offsets[1] + 64);
  reseal(offset);
  CHECK(test::code_of(load_error(offset, p)) == errc::program_inconsistent);

  bytes_t lane = bytes;
  put_u64(lane, map.lane_bytes(2), compiled.buckets[2].lane_bytes() - 4);
  reseal(lane);
  CHECK(test::code_of(load_error(lane, p)) == errc::program_inconsistent);

  bytes_t admitted = bytes;
  put_u64(admitted, 104, compiled.admitted_bytes + 1);
  reseal(admitted);
  CHECK(test::code_of(load_error(admitted, p)) == errc::program_inconsistent);
}

TEST_CASE("compiled_program_file: resealed resource resolution and id orders are checked against the plan",
          "[binding][program_file]") {
  const plan p = mixed_plan();
  const compiled_program compiled = test::compile_ok(p);
  const bytes_t bytes = save_ok(compiled, p);
  const std::size_t node_order = 112;
  const std::size_t resource_order = node_order + 4 * p.nodes.size();
  const std::size_t resource_domain = resource_order + 4 * p.resources.size();
  const std::size_t uses = resource_domain + 4 * p.resources.size();

  bytes_t nodes = bytes;  // two node indices swapped: not id order
  std::swap_ranges(nodes.begin() + node_order, nodes.begin() + node_order + 4, nodes.begin() + node_order + 4);
  reseal(nodes);
  CHECK(test::code_of(load_error(nodes, p)) == errc::program_inconsistent);

  bytes_t resources = bytes;  // an index out of range
  put_u32(resources, resource_order, 1000);
  reseal(resources);
  CHECK(test::code_of(load_error(resources, p)) == errc::program_inconsistent);

  bytes_t domain = bytes;  // a binding resource put in the history pool's domain
  put_u32(domain, resource_domain, 1);
  reseal(domain);
  CHECK(test::code_of(load_error(domain, p)) == errc::program_inconsistent);

  bytes_t use = bytes;  // node 0's first use resolved to another resource
  put_u32(use, uses, 1);
  reseal(use);
  CHECK(test::code_of(load_error(use, p)) == errc::program_inconsistent);
}

TEST_CASE("compiled_program_file: huge counts are refused before anything is allocated", "[binding][program_file]") {
  const plan p = test::two_node_plan();
  const bytes_t bytes = save_ok(test::compile_ok(p), p);
  for (std::size_t field : {56u, 64u, 72u}) {  // nodes, resources, uses
    bytes_t huge = bytes;
    put_u64(huge, field, std::uint64_t{1} << 31);
    reseal(huge);
    CHECK(test::code_of(load_error(huge, p)) == errc::program_malformed);
    put_u64(huge, field, ~std::uint64_t{0});
    reseal(huge);
    CHECK(test::code_of(load_error(huge, p)) == errc::program_malformed);
  }
  bytes_t buckets = bytes;
  put_u32(buckets, 80, 0xffffffffu);
  put_u32(buckets, 84, 0xffffffffu);
  reseal(buckets);
  CHECK(test::code_of(load_error(buckets, p)) == errc::program_malformed);
}

TEST_CASE("compiled_program_file: a program checked against an invalid plan reports the plan's error",
          "[binding][program_file]") {
  // The file was made for this very plan object, so its hash matches; the
  // plan breaks a rule compile checks before layouts (a budget's min > max).
  plan p = mixed_plan();
  const compiled_program compiled = test::compile_ok(p);
  bytes_t bytes = save_ok(compiled, p);
  // Budgets do not shape the file, so the same bytes describe the edited
  // plan but for the hash: rewrite it, as a forger would.
  p.buckets[0].budgets[0].min = 2;
  p.buckets[0].budgets[0].max = 1;
  const auto hash = hash_plan(p);
  REQUIRE(hash.has_value());
  std::memcpy(bytes.data() + 24, hash->bytes.data(), 32);
  reseal(bytes);
  CHECK(test::code_of(load_error(bytes, p)) == errc::invalid_budget);
}

TEST_CASE("compiled_program_file: a program checked against a plan with an unordered hazard across queues refuses it",
          "[binding][program_file][queues]") {
  // two_queues_access.json without node/readback's wait for node/simulate,
  // whose resource/state it reads: the file of the plan as it should be,
  // its hash rewritten to the edited plan's, as a forger would (dependencies
  // do not shape the file).
  plan p = example_plan("two_queues_access.json");
  bytes_t bytes = save_ok(test::compile_ok(p), p);
  REQUIRE(p.nodes[2].id.view() == "node/readback");
  p.nodes[2].after.clear();
  const auto hash = hash_plan(p);
  REQUIRE(hash.has_value());
  std::memcpy(bytes.data() + 24, hash->bytes.data(), 32);
  reseal(bytes);
  const error e = load_error(bytes, p);
  CHECK(test::code_of(e) == errc::unordered_hazard);
  CHECK(e.path == "/nodes/2/resources/1");
}
