// Lane memory on the null device: every pool backed per lane, each node's
// resources handed to its encoder, interval aliasing and persistent
// resources proven by data (workspace_probe.hpp), and the lane layout checked
// pair by pair on generated plans.
#include "held_lanes.hpp"
#include "null_device_support.hpp"
#include "plan_builder.hpp"
#include "scheduler_support.hpp"
#include "workspace_probe.hpp"

#include "ferrum/binding/compiled_program_file.hpp"
#include "ferrum/binding/plan_json.hpp"
#include "ferrum/binding/wave_layout.hpp"

#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace ferrum;

namespace {

// [offset, offset + size) in a lane, per plan resource.
struct lane_range {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  [[nodiscard]] bool overlaps(const lane_range& o) const noexcept {
    return offset < o.offset + o.size && o.offset < offset + size;
  }
};

std::vector<lane_range> lane_ranges(const compiled_program& program, const compiled_bucket& bucket,
                                    std::size_t resources) {
  std::vector<lane_range> ranges(resources);
  for (std::size_t d = 0; d < program.domains.size(); ++d)
    for (std::size_t m = 0; m < program.domains[d].members.size(); ++m) {
      const projection& at = bucket.capacity_layouts[d].projections[m];
      ranges[program.domains[d].members[m]] = {bucket.pool_offsets[d] + at.offset, at.capacity};
    }
  return ranges;
}

// A scheduler over `p` on the null device, one executor thread.
struct running_plan {
  explicit running_plan(const plan& p)
      : program(std::make_shared<const compiled_program>(ferrum::test::compile_ok(p))),
        device(::test::null_device()),
        threads(1) {
    auto made = scheduler::create(program, *device, threads.get_executor(), {});
    if (!made) FAIL(made.error().what());
    s = std::move(*made);
  }
  running_plan(const running_plan&) = delete;
  running_plan& operator=(const running_plan&) = delete;
  ~running_plan() {
    s.reset();
    threads.join();
  }

  std::shared_ptr<const compiled_program> program;
  std::unique_ptr<gpu::null_device> device;
  boost::asio::thread_pool threads;
  std::unique_ptr<scheduler> s;
};

}  // namespace

TEST_CASE(
    "lane memory: resources share lane bytes only when both are invocation resources of one interval pool "
    "with disjoint intervals (generated plans, every pair)",
    "[scheduler][workspace]") {
  std::mt19937_64 rng(12);
  std::size_t shared_pairs = 0;
  for (int round = 0; round < 40; ++round) {
    const plan p = workspace_probe::generate(rng, {.nodes = 10, .interval_resources = 16, .persistent_resources = 3});
    const compiled_program program = ferrum::test::compile_ok(p);
    const compiled_bucket& bucket = program.buckets[0];
    const std::vector<lane_range> ranges = lane_ranges(program, bucket, p.resources.size());
    const std::vector<live_interval> intervals = live_intervals(p);
    for (std::size_t a = 0; a < p.resources.size(); ++a) {
      REQUIRE(ranges[a].offset + ranges[a].size <= bucket.lane_bytes());
      for (std::size_t b = a + 1; b < p.resources.size(); ++b) {
        if (!ranges[a].overlaps(ranges[b])) continue;
        ++shared_pairs;
        INFO(p.resources[a].id.str() << " and " << p.resources[b].id.str());
        REQUIRE(p.resources[a].pool == p.resources[b].pool);
        REQUIRE(p.resources[a].pool.str() == "pool/w");
        REQUIRE(p.resources[a].lifetime == allocation_lifetime::invocation);
        REQUIRE(p.resources[b].lifetime == allocation_lifetime::invocation);
        REQUIRE_FALSE(intervals[a].overlaps(intervals[b]));
      }
    }
    // Pools lie side by side, the binding pool first.
    CHECK(bucket.pool_offsets[0] == 0);
    CHECK(bucket.lane_bytes() <= bucket.unaliased_lane_size_bytes);
  }
  CHECK(shared_pairs > 0);  // the generator does make aliasing plans
}

TEST_CASE("lane memory: aliasing and persistence hold by data on the null device (generated plans)",
          "[scheduler][workspace]") {
  // Both layouts: memory the host maps, and a discrete GPU's (device memory
  // unmapped, upload and readback staged).
  const bool discrete = GENERATE(false, true);
  INFO("discrete_layout " << discrete);
  std::mt19937_64 rng(3);
  workspace_probe::outcome total;
  for (int round = 0; round < 8; ++round) {
    const plan p = workspace_probe::generate(rng, {});
    gpu::null_device_options options;
    options.discrete_layout = discrete;
    const auto device = ::test::null_device(options);
    const workspace_probe::outcome o = workspace_probe::run(*device, p, 7);
    total.aliased_words += o.aliased_words;
    total.persistent_first_uses_checked += o.persistent_first_uses_checked;
  }
  // Not vacuous: aliased bytes were really shared and seen, and persistent
  // resources were checked against an earlier wave of their lane.
  CHECK(total.aliased_words > 0);
  CHECK(total.persistent_first_uses_checked > 0);
}

TEST_CASE("lane memory: an encoder gets the resources its node lists, in the plan's order, and finds them by id",
          "[scheduler][workspace]") {
  const plan p =
      ferrum::test::plan_builder()
          .binding_node("node/a", "resource/a.args", 16)
          .binding_node("node/b", "resource/b.args", 16)
          .resource(ferrum::test::workspace_resource("resource/scratch", "pool/w", resource_demand::fixed(256)))
          .resource(ferrum::test::workspace_resource("resource/keep", "pool/w", resource_demand::fixed(64), 64))
          .use(0, "resource/scratch")
          .use(1, "resource/keep")
          .use(1, "resource/scratch")
          .bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 1024}, {"pool/w", 0, 1024}})
          .build();
  running_plan run(p);

  struct seen {
    std::vector<std::string> ids;
    std::vector<gpu::arena_range> ranges;
    const node_resource* scratch = nullptr;
    const node_resource* missing = nullptr;
    std::size_t byte_count = 0;
    bool slot_is_binding = false;
    std::size_t slot_bytes = 0;
    std::optional<ferrum::error> scratch_refused;
  };
  std::array<seen, 2> nodes;
  auto encode = [&](const encode_context& c) {
    seen& n = nodes.at(c.node_index);
    for (const node_resource& r : c.resources) {
      n.ids.push_back(r.id->str());
      n.ranges.push_back(r.range);
      n.byte_count += r.range.size;
    }
    n.scratch = c.resource("resource/scratch");
    n.missing = c.resource("resource/nowhere");
    // Host bytes for the slot (upload memory), none for the workspace
    // (device memory): an error naming the resource and its class.
    n.slot_bytes = c.resources[0].bytes().has_value() ? c.resources[0].bytes()->size() : 0;
    if (auto bytes = n.scratch->bytes(); !bytes) n.scratch_refused = bytes.error();
    n.slot_is_binding =
        c.resource(c.node_index == 0 ? "resource/a.args" : "resource/b.args")->range.offset == c.slot.offset;
    // The node's list may write each of its resources, and nothing else.
    for (const node_resource& r : c.resources) ::test::require(c.commands.fill(r.range, 7u));
  };
  auto done = sched_test::submit(*run.s, encode);
  const sched_test::outcome o = sched_test::get(done);
  REQUIRE_FALSE(o.ec);
  CHECK(nodes[0].ids == std::vector<std::string>{"resource/a.args", "resource/scratch"});
  CHECK(nodes[1].ids == std::vector<std::string>{"resource/b.args", "resource/keep", "resource/scratch"});
  CHECK(nodes[0].byte_count == 16 + 256);
  CHECK(nodes[1].byte_count == 16 + 64 + 256);
  CHECK(nodes[0].missing == nullptr);
  CHECK(nodes[0].slot_bytes == 16);
  REQUIRE(nodes[0].scratch_refused.has_value());
  CHECK(*nodes[0].scratch_refused == errc::no_host_bytes);
  CHECK(nodes[0].scratch_refused->detail.find("'resource/scratch' is device memory") != std::string::npos);
  CHECK(nodes[0].slot_is_binding);
  CHECK(nodes[1].slot_is_binding);
  // The same resource at the same place for both nodes; pool/w in the
  // device arena, the bindings in the upload one.
  const compiled_bucket& bucket = run.program->buckets[0];
  CHECK(nodes[0].ranges[1].arena == nodes[1].ranges[2].arena);
  CHECK(nodes[0].ranges[1].offset == nodes[1].ranges[2].offset);
  CHECK(nodes[0].ranges[0].arena->cls() == memory_class::upload);
  CHECK(nodes[0].ranges[1].arena->cls() == memory_class::device);
  CHECK(nodes[0].ranges[1].offset + bucket.window(memory_class::device).begin >= bucket.pool_offsets[1]);
}

TEST_CASE("lane memory: a node's list cannot write another node's workspace resource", "[scheduler][workspace]") {
  const plan p =
      ferrum::test::plan_builder()
          .binding_node("node/a", "resource/a.args", 16)
          .binding_node("node/b", "resource/b.args", 16)
          .resource(ferrum::test::workspace_resource("resource/mine", "pool/w", resource_demand::fixed(256)))
          .resource(ferrum::test::workspace_resource("resource/theirs", "pool/w", resource_demand::fixed(256)))
          .use(0, "resource/mine")
          .use(1, "resource/theirs")
          .bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 1024}, {"pool/w", 0, 1024}})
          .build();
  running_plan run(p);
  std::atomic<int> refused_code{0};
  auto encode = [&](const encode_context& c) {
    if (c.node_index != 0) return;
    // Node b's resource, reached from node a's list: refused.
    const gpu::arena_range theirs = c.contents->resources(1)[1].range;
    const result<void> r = c.commands.fill(theirs, 1u);
    refused_code.store(r ? 0 : r.error().code.value());
  };
  auto done = sched_test::submit(*run.s, encode);
  const sched_test::outcome o = sched_test::get(done);
  REQUIRE_FALSE(o.ec);
  CHECK(refused_code.load() == static_cast<int>(errc::range_not_granted));
}

TEST_CASE("lane memory: pools are placed at their alignment, and admission counts the padding",
          "[scheduler][workspace]") {
  // pool/bindings ends at 20 bytes; pool/w (alignment 256) starts at 256.
  const auto make = [](std::uint64_t budget) {
    return ferrum::test::plan_builder()
        .binding_node("node/a", "resource/a.args", 20, 4)
        .resource(ferrum::test::workspace_resource("resource/w", "pool/w", resource_demand::fixed(512), 256))
        .use(0, "resource/w")
        .bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 1024}, {"pool/w", 0, 1024}})
        .lanes(2)
        .budget(budget)
        .build();
  };
  const compiled_program program = ferrum::test::compile_ok(make(2 * (256 + 512)));
  const compiled_bucket& bucket = program.buckets[0];
  CHECK(bucket.pool_offsets == std::vector<std::uint64_t>{0, 256});
  CHECK(bucket.lane_bytes() == 256 + 512);
  CHECK(program.admitted_bytes == 2 * (256 + 512));
  // The arenas alone (20 + 512 bytes per lane) would fit this budget; the
  // lane as allocated does not.
  const result<compiled_program> over = compile(make(2 * (256 + 512) - 1));
  CHECK(ferrum::test::code_of(over) == errc::admission_exceeded);
}

TEST_CASE("lane memory: a program loaded from its file makes the lanes the compiled one makes, without the plan",
          "[scheduler][workspace]") {
  // history.json: a persistent pool and an interval pool whose resources
  // share bytes, so every lane offset comes from the recipe, not from a
  // packing the lane pool could redo.
  std::ifstream in(std::string(FERRUM_SOURCE_DIR) + "/examples/plans/history.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const plan p = ferrum::test::require(parse_plan(text));
  const compiled_program compiled = ferrum::test::compile_ok(p);
  const compiled_program loaded =
      ferrum::test::require(load_compiled_program(ferrum::test::require(save_compiled_program(compiled, p)), p));
  const auto device = ::test::null_device();
  for (std::size_t b = 0; b < compiled.buckets.size(); ++b) {
    auto from_compiled = ferrum::test::require(lane_pool::create(compiled, compiled.buckets[b], *device));
    auto from_loaded = ferrum::test::require(lane_pool::create(loaded, loaded.buckets[b], *device));
    const std::vector<held_lane> compiled_lanes = ferrum::test::hold_every_lane(*from_compiled);
    const std::vector<held_lane> loaded_lanes = ferrum::test::hold_every_lane(*from_loaded);
    REQUIRE(compiled_lanes[0]);
    REQUIRE(loaded_lanes[0]);
    const lane_contents& a = *compiled_lanes[0];
    const lane_contents& l = *loaded_lanes[0];
    for (std::size_t n = 0; n < compiled.node_count; ++n) {
      const auto ours = a.resources(n);
      const auto theirs = l.resources(n);
      REQUIRE(ours.size() == theirs.size());
      for (std::size_t r = 0; r < ours.size(); ++r) {
        CHECK(*ours[r].id == *theirs[r].id);
        CHECK(ours[r].range.offset == theirs[r].range.offset);
        CHECK(ours[r].range.size == theirs[r].range.size);
        CHECK(ours[r].kind == theirs[r].kind);
        CHECK(ours[r].lifetime == theirs[r].lifetime);
      }
    }
    CHECK(a.backing().size() == l.backing().size());
  }
}
