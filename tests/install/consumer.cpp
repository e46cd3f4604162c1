// consumer.cpp — the smallest complete use of ferrum, built against the
// installed package (or ferrum added with add_subdirectory) by
// tests/install/run_consumer.cmake: compiles a plan, runs a few waves on the
// null device, each node's encoder filling its slot, and checks that every
// wave succeeded. Exits 0 then, 1 on any failure.
#include <ferrum/binding/compiled_program.hpp>
#include <ferrum/binding/plan_json.hpp>
#include <ferrum/gpu/null_device.hpp>
#include <ferrum/scheduler/scheduler.hpp>

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

// Two nodes, each owning a binding slot (64 and 128 bytes), one bucket, one lane.
constexpr const char* plan_text = R"({
  "format": "ferrum.plan.v1",
  "nodes": [
    {"id": "node/a", "resources": ["resource/a"], "binding": "resource/a"},
    {"id": "node/b", "resources": ["resource/b"], "binding": "resource/b"}],
  "resources": [
    {"id": "resource/a", "pool": "pool/bindings", "kind": "binding", "node": "node/a",
     "demand": {"fixed": 64}, "alignment": 16,
     "lifetime": "invocation", "usage": "binding", "element": "u8",
     "storage": {"allocator": "linear-arena", "view": "contiguous",
                 "contract": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}},
    {"id": "resource/b", "pool": "pool/bindings", "kind": "binding", "node": "node/b",
     "demand": {"fixed": 128}, "alignment": 16,
     "lifetime": "invocation", "usage": "binding", "element": "u8",
     "storage": {"allocator": "linear-arena", "view": "contiguous",
                 "contract": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}],
  "buckets": [{"class": "step", "capacity": [1, 1, 1],
               "budgets": [{"pool": "pool/bindings", "min": 0, "max": 192}]}],
  "lanes": 1,
  "budget_bytes": 1048576
})";

static int fail(const char* step, const std::string& why) {
  std::fprintf(stderr, "consumer: %s failed: %s\n", step, why.c_str());
  return 1;
}

int main() {
  auto plan = ferrum::parse_plan(plan_text);
  if (!plan) return fail("parse_plan", plan.error().what());
  auto program = ferrum::compile(*plan);
  if (!program) return fail("compile", program.error().what());
  auto device = ferrum::gpu::null_device::create({});
  if (!device) return fail("null_device::create", device.error().what());

  boost::asio::io_context io;
  auto shared_program = std::make_shared<const ferrum::compiled_program>(std::move(*program));
  auto scheduler = ferrum::scheduler::create(shared_program, **device, io.get_executor());
  if (!scheduler) return fail("scheduler::create", scheduler.error().what());

  // Called once per node of each wave: records a fill of the node's slot.
  auto encode = [](const ferrum::encode_context& c) {
    c.commands.fill(c.slot, static_cast<std::uint32_t>(c.wave * 100 + c.node_index)).value();
  };
  constexpr int waves = 4;
  int failures = 0;
  // The waves queue for the one lane; async_shutdown completes after the last.
  for (int i = 0; i < waves; ++i)
    (*scheduler)->async_submit({"step", {1, 1, 1}}, encode, [&](boost::system::error_code ec, ferrum::wave_report r) {
      if (ec) failures += fail("wave", r.message.empty() ? ec.message() : ec.message() + ": " + r.message);
    });
  (*scheduler)->async_shutdown([](boost::system::error_code) {});
  io.run();

  const ferrum::scheduler_stats stats = (*scheduler)->stats();
  if (failures != 0 || stats.completed != waves) return fail("waves", std::to_string(stats.completed) + " completed");
  std::printf("consumer: %d waves of %zu nodes completed on the null device\n", waves, shared_program->node_count);
  return 0;
}
