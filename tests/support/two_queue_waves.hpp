// two_queue_waves.hpp — a ferrum.plan.v2 plan over both queues and an
// encoder that proves their order by data, for the scheduler's tests on the
// null device (tests/scheduler/queues_test.cpp) and on Vulkan.
//
// produce (compute) -> copy (transfer) -> keep (compute); upload (transfer)
// -> consume (compute, also after keep). Each wave fills `produced` and
// `uploaded` with values of its own; the copies carry them to the persistent
// `kept` and `consumed`, which the lane's next wave checks on the host.
#pragma once

#include "plan_builder.hpp"

#include "ferrum/scheduler/scheduler.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>

namespace two_queue_waves {

using namespace ferrum;
using ferrum::test::id;

constexpr std::size_t words = 64;

// Every resource is 256 bytes of one
// conservative pool, of readback memory (the host reads it); `kept` and
// `consumed` persist, and produce lists them too, so that its encoder reads
// what the lane's previous wave left there.
inline plan two_queue_plan() {
  ferrum::test::plan_builder b;
  for (const char* n : {"produce", "copy", "keep", "upload", "consume"})
    b.binding_node(std::string("node/") + n, std::string("resource/") + n + ".args", 64);
  for (const char* r : {"produced", "copied", "uploaded", "kept", "consumed"}) {
    resource_descriptor d =
        ferrum::test::workspace_resource(std::string("resource/") + r, "pool/data", resource_demand::fixed(words * 4));
    if (std::strcmp(r, "kept") == 0 || std::strcmp(r, "consumed") == 0) d.lifetime = allocation_lifetime::persistent;
    b.resource(d);
  }
  b.use(0, "resource/produced")
      .use(0, "resource/kept")
      .use(0, "resource/consumed")
      .use(1, "resource/produced")
      .use(1, "resource/copied");
  b.use(2, "resource/copied").use(2, "resource/kept").use(3, "resource/uploaded");
  b.use(4, "resource/uploaded").use(4, "resource/consumed");
  b.bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 1 << 20}, {"pool/data", 0, 1 << 20}});
  plan p = b.lanes(1).budget(std::uint64_t{1} << 30).build();
  p.format = plan_format::v2;
  p.pools.push_back({id<pool_id>("pool/data"), liveness_mode::conservative, memory_class::readback});
  p.nodes[1].queue = queue_kind::transfer;
  p.nodes[1].after = {id<node_id>("node/produce")};
  p.nodes[2].after = {id<node_id>("node/copy")};
  p.nodes[3].queue = queue_kind::transfer;
  p.nodes[4].after = {id<node_id>("node/upload"), id<node_id>("node/keep")};
  return p;
}

inline std::uint32_t produced_value(std::uint64_t wave) { return static_cast<std::uint32_t>(1000 + wave); }
inline std::uint32_t uploaded_value(std::uint64_t wave) { return static_cast<std::uint32_t>(2000000 + wave); }

inline std::size_t words_not(std::span<const std::byte> bytes, std::uint32_t value) {
  std::size_t wrong = 0;
  for (std::size_t w = 0; w < bytes.size() / 4; ++w) {
    std::uint32_t word = 0;
    std::memcpy(&word, bytes.data() + 4 * w, 4);
    if (word != value) ++wrong;
  }
  return wrong;
}

// The encoder: produce and upload fill their resource with the wave's values
// (after holding their queue for `hold_for`, a host function, where it is not
// zero: the null device only), copy, keep and consume copy; produce also
// checks what the lane's previous wave kept and consumed.
struct two_queue_encoder {
  std::chrono::milliseconds hold_for{3};
  std::atomic<std::size_t> wrong_words{0};
  std::atomic<std::size_t> checked_waves{0};

  void operator()(const encode_context& c) {
    auto range = [&](const char* r) { return c.resource(std::string("resource/") + r)->range; };
    auto ok = [](result<void> r) {
      if (!r) throw std::runtime_error(r.error().what());
    };
    // Runs on the device before the producer's fill: a consumer that does
    // not wait for it copies the lane's previous values.
    gpu::host_function held = gpu::host_call(hold_);
    switch (c.node_index) {
      case 0:
        if (c.lane_previous_wave != 0) {
          wrong_words += words_not(c.resource("resource/kept")->bytes().value(), produced_value(c.lane_previous_wave));
          wrong_words +=
              words_not(c.resource("resource/consumed")->bytes().value(), uploaded_value(c.lane_previous_wave));
          ++checked_waves;
        }
        if (hold_for.count() > 0) ok(c.commands.host(held));
        ok(c.commands.fill(range("produced"), produced_value(c.wave)));
        break;
      case 1:
        ok(c.commands.copy(range("produced"), range("copied")));
        break;
      case 2:
        ok(c.commands.copy(range("copied"), range("kept")));
        break;
      case 3:
        if (hold_for.count() > 0) ok(c.commands.host(held));
        ok(c.commands.fill(range("uploaded"), uploaded_value(c.wave)));
        break;
      case 4:
        ok(c.commands.copy(range("uploaded"), range("consumed")));
        break;
      default:
        break;
    }
  }

  struct hold {
    const std::chrono::milliseconds* length;
    void operator()() const noexcept { std::this_thread::sleep_for(*length); }
  };
  hold hold_{&hold_for};
};

}  // namespace two_queue_waves
