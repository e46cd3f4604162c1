// Culled nodes on the null device (docs/design.md, "Culling"): the scheduler
// never calls a culled node's encoder, never begins nor submits its list, and
// the live nodes' results are right; a wave report and the trace count only
// the live nodes, and GPU time still reads (the culled nodes' written empty).
#include "scheduler_support.hpp"

#include "ferrum/scheduler/trace.hpp"
#include "ferrum/scheduler/wave_readback.hpp"

#include <atomic>
#include <cstring>

namespace {

using namespace ferrum;
using ferrum::test::id;

constexpr auto RW = resource_access::read_write;
constexpr auto R = resource_access::read;
constexpr auto W = resource_access::write;

// node/produce fills resource/produced; node/scratch (transfer queue) reads
// it and fills resource/scratch, which nothing reads: culled; node/copy
// copies produced into resource/out, of readback memory: live; node/tail
// reads out and fills resource/junk, which nothing reads: culled.
plan culling_plan() {
  test::plan_builder b;
  for (const char* n : {"produce", "scratch", "copy", "tail"})
    b.binding_node(std::string("node/") + n, std::string("resource/") + n + ".args", 16);
  for (const char* r : {"produced", "scratch", "junk"})
    b.resource(test::workspace_resource(std::string("resource/") + r, "pool/work", resource_demand::fixed(256)));
  b.resource(test::workspace_resource("resource/out", "pool/out", resource_demand::fixed(256)));
  b.use(0, "resource/produced").use(1, "resource/produced").use(1, "resource/scratch");
  b.use(2, "resource/produced").use(2, "resource/out").use(3, "resource/out").use(3, "resource/junk");
  b.bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 1 << 20}, {"pool/out", 0, 1 << 20}, {"pool/work", 0, 1 << 20}});
  plan p = b.budget(std::uint64_t{1} << 30).build();
  p.format = plan_format::v2;
  p.pools.push_back({id<pool_id>("pool/out"), liveness_mode::conservative, memory_class::readback});
  p.nodes[0].access = {RW, W};
  p.nodes[1].access = {RW, R, W};
  p.nodes[1].queue = queue_kind::transfer;
  p.nodes[1].after = {id<node_id>("node/produce")};
  p.nodes[2].access = {RW, R, W};
  p.nodes[2].after = {id<node_id>("node/produce")};
  p.nodes[3].access = {RW, R, W};
  return p;
}

std::uint32_t produced(std::uint64_t wave) { return static_cast<std::uint32_t>(5000 + wave); }

struct culling_encoder {
  std::atomic<std::uint32_t> called{0};  // a bit per node index

  void operator()(const encode_context& c) {
    called.fetch_or(1u << c.node_index);
    auto range = [&](const char* r) { return c.resource(r)->range; };
    switch (c.node_index) {
      case 0:
        test::require(c.commands.fill(range("resource/produced"), produced(c.wave)));
        break;
      case 1:
        test::require(c.commands.fill(range("resource/scratch"), 7u));
        break;
      case 2:
        test::require(c.commands.copy(range("resource/produced"), range("resource/out")));
        break;
      default:
        test::require(c.commands.fill(range("resource/junk"), 9u));
        break;
    }
  }
};

std::uint32_t first_word_of(std::span<const std::byte> bytes) {
  std::uint32_t word = 0;
  std::memcpy(&word, bytes.data(), sizeof word);
  return word;
}

}  // namespace

TEST_CASE("culling: the scheduler never encodes nor submits a culled node, and the live ones' results are right",
          "[scheduler][culling]") {
  plan p = culling_plan();
  trace_recorder trace(1 << 10);
  scheduler_options options;
  options.encoder_tasks = 2;
  options.trace = &trace;
  gpu::null_device_options device_options;
  SECTION("two queues") {}
  SECTION("one queue, GPU time") {
    device_options.queues = 1;
    options.gpu_timestamps = true;
  }
  SECTION("one queue, in level order: the culled nodes last, out of the lists submitted") {
    // node/scratch on the compute queue: no transfer node, so a wave on
    // one queue submits in level order.
    p.nodes[1].queue = queue_kind::compute;
    device_options.queues = 1;
  }
  const auto program = std::make_shared<const compiled_program>(test::compile_ok(p));
  REQUIRE(program->culled_nodes == 2);
  REQUIRE(program->culled(1));
  REQUIRE(program->culled(3));
  const lane_recipe& recipe = program->buckets[0].lane;
  if (p.nodes[1].queue == queue_kind::compute) {
    REQUIRE(recipe.order.size() == 4);
    CHECK(std::vector(recipe.order.begin(), recipe.order.begin() + 2) == std::vector<std::size_t>{0, 2});
    CHECK(recipe.level_nodes(2).size() == 1);
    CHECK(recipe.level_nodes(1).size() == 2);
    CHECK(recipe.level_nodes(3).size() == 2);
  }
  const auto device = ::test::null_device(device_options);
  boost::asio::thread_pool threads(2);
  auto s = test::require(scheduler::create(program, *device, threads.get_executor(), options));
  culling_encoder encode;
  for (int wave = 0; wave < 3; ++wave) {
    wave_readback readback;
    auto done = sched_test::submit(*s, encode, {.bucket_class = "step", .readback = &readback});
    const auto [ec, report] = sched_test::get(done);
    REQUIRE_FALSE(ec);
    REQUIRE(readback);
    CHECK(first_word_of(readback.bytes("resource/out").value()) == produced(report.wave));
    // Only the live nodes count.
    CHECK(report.nodes == 2);
    if (options.gpu_timestamps) CHECK(report.gpu_nodes.size() == 4);
    // The culled nodes' lists were never begun nor submitted.
    CHECK(readback->list(1).size() == 0);
    CHECK(readback->list(1).submitted_value() == 0);
    CHECK(readback->list(3).submitted_value() == 0);
    CHECK(readback->list(2).submitted_value() != 0);
    // The last live node closes the wave with a full barrier.
    CHECK(readback->list(2).last_barrier() == barrier_scope::full());
  }
  CHECK(encode.called.load() == 0b0101u);
  s.reset();
  threads.join();
  // The trace draws the live nodes only, on the CPU and the GPU.
  std::size_t node_spans = 0;
  for (const trace_span& span : trace.spans()) {
    if (span.node == trace_span::no_node) continue;
    ++node_spans;
    CHECK((span.node == 0 || span.node == 2));
  }
  CHECK(node_spans == (options.gpu_timestamps ? 12u : 6u));
}
