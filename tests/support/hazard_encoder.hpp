// hazard_encoder.hpp — the encoder that proves by data, on any device, that
// every read of a hazard plan's node (hazard_plans.hpp) saw the last write
// before it in the wave.
//
//   const hazard_encoder::encoder encode(device, plan);
//   scheduler->async_submit({"step", {1, 1, 1}}, encode, handler);
//   // once the wave's fence is reached:
//   CHECK(hazard_encoder::mismatches(bucket, lane->arena->bytes()) == 0);
//
// Per listed use, in order: where the node reads and an earlier use in the
// wave wrote the resource, it checks that writer's pattern, adding the words
// that differ to the first word of its slot (check_pattern); where it
// writes, it writes its own pattern (write_pattern). Every command stays in
// the node's own resources, so only the derived barriers order the nodes.
#pragma once

#include "hazard_plans.hpp"

#include "ferrum/gpu/builtin_kernels.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/thread_pool.hpp>
#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

namespace hazard_encoder {

// The encoder (see above); `checks()` counts the checks recorded, so a test
// can show the data proof was exercised. Called on the scheduler's threads:
// trouble is thrown, failing the wave with encoder_failed.
class encoder {
 public:
  encoder(ferrum::gpu::device& device, const ferrum::plan& p) : plan_(&p) {
    writer_ = std::move(device.create_kernel(ferrum::gpu::builtin::write_pattern()).value());
    checker_ = std::move(device.create_kernel(ferrum::gpu::builtin::check_pattern()).value());
    for (const ferrum::plan_node& n : p.nodes) max_listed_ = std::max(max_listed_, n.resources.size());
    // Per use, the earlier use in plan order that last wrote its resource.
    for (std::size_t n = 0; n < p.nodes.size(); ++n) {
      writer_of_.emplace_back();
      for (std::size_t k = 0; k < p.nodes[n].resources.size(); ++k) {
        std::optional<std::array<std::size_t, 2>> last;
        for (std::size_t m = 0; m <= n; ++m)
          for (std::size_t q = 0; q < p.nodes[m].resources.size(); ++q)
            if ((m < n || q < k) && p.nodes[m].resources[q] == p.nodes[n].resources[k] &&
                p.nodes[m].access_of(q) != ferrum::resource_access::read)
              last = std::array{m, q};
        writer_of_.back().push_back(last);
      }
    }
  }

  [[nodiscard]] std::uint32_t seed(std::uint64_t wave, std::size_t node, std::size_t position) const noexcept {
    return static_cast<std::uint32_t>((wave * plan_->nodes.size() + node) * max_listed_ + position);
  }
  [[nodiscard]] std::size_t checks() const noexcept { return checks_.load(); }

  void operator()(const ferrum::encode_context& c) const {
    const auto ok = [](ferrum::result<void> r) {
      if (!r) throw std::runtime_error(r.error().what());
    };
    if (c.binding == nullptr) throw std::runtime_error("a hazard plan's node has no slot");
    // The slot's counter starts at 0: a host write the submission sees.
    const ferrum::node_resource& slot = c.resources[0];
    std::memset(slot.bytes().value().data(), 0, 4);
    const ferrum::plan_node& node = plan_->nodes[c.node_index];
    for (std::size_t k = 1; k < node.resources.size(); ++k) {
      const ferrum::gpu::arena_range range = c.resources[k].range;
      const ferrum::resource_access access = node.access_of(k);
      if (const auto& writer = writer_of_[c.node_index][k]; writer && access != ferrum::resource_access::write) {
        const std::array<std::uint32_t, 1> expected{seed(c.wave, (*writer)[0], (*writer)[1])};
        ok(c.commands.dispatch(*checker_, range, slot.range.arena->range(slot.range.offset, 4), expected));
        checks_.fetch_add(1);
      }
      if (access != ferrum::resource_access::read) {
        const std::array<std::uint32_t, 1> own{seed(c.wave, c.node_index, k)};
        ok(c.commands.dispatch(*writer_, range, {}, own));
      }
    }
  }

 private:
  const ferrum::plan* plan_;
  std::size_t max_listed_ = 1;
  std::vector<std::vector<std::optional<std::array<std::size_t, 2>>>> writer_of_;
  std::unique_ptr<ferrum::gpu::kernel> writer_;
  std::unique_ptr<ferrum::gpu::kernel> checker_;
  mutable std::atomic<std::size_t> checks_{0};
};

// The mismatches the checks of a wave on `lane_bytes` counted: every node's
// slot counter (once the wave's fence is reached).
inline std::uint32_t mismatches(const ferrum::compiled_bucket& bucket, std::span<const std::byte> lane_bytes) {
  std::uint32_t total = 0;
  for (std::size_t n = 0; n + 1 < bucket.lane.use_begin.size(); ++n) {
    std::uint32_t word = 0;
    std::memcpy(&word, lane_bytes.data() + bucket.lane.node_uses(n)[0].offset, 4);
    total += word;
  }
  return total;
}

// What a run saw.
struct outcome {
  std::size_t checks = 0;        // checks recorded
  std::size_t mismatches = 0;    // words the checks found other than the pattern they expected
  std::size_t barriers = 0;      // barriers the waves' lists recorded
  std::size_t lists_opened = 0;  // lists whose first command had a barrier
  std::size_t events = 0;        // event sets, waits and resets the waves' lists recorded
};

// Runs `waves` waves of `program` (compiled from `p`, one bucket "step",
// perhaps with barriers changed) one after another on `device` and checks,
// after each, that each node's list recorded the barriers
// `options.barriers` asks for: before its first command when derived (or
// every_node), between every two of its commands. Counts what the checks
// found.
inline outcome run(ferrum::gpu::device& device, const ferrum::plan& p,
                   std::shared_ptr<const ferrum::compiled_program> program, std::uint64_t waves,
                   ferrum::scheduler_options options = {}) {
  REQUIRE(program->buckets.size() == 1);
  const ferrum::compiled_bucket& bucket = program->buckets[0];
  const encoder encode(device, p);
  boost::asio::thread_pool threads(2);
  options.encoder_tasks = 2;
  auto made = ferrum::scheduler::create(program, device, threads.get_executor(), options);
  if (!made) FAIL(made.error().what());
  std::unique_ptr<ferrum::scheduler> scheduler = std::move(*made);
  // The set the waves open lists by: a compute plan's waves run on one
  // queue, in the bucket's level order unless it is plan order.
  const bool reordered = options.order == ferrum::node_order::levels && !bucket.lane.order.empty();
  const ferrum::split_barriers& split = reordered ? bucket.lane.ordered_split : bucket.lane.one_queue_split;
  const std::vector<bool>& barrier_set = options.split_barriers ? split.barrier_before
                                         : reordered            ? bucket.lane.ordered_barrier_before
                                                                : bucket.lane.barrier_before;
  outcome o;
  for (std::uint64_t w = 0; w < waves; ++w) {
    std::promise<std::pair<boost::system::error_code, ferrum::wave_report>> done;
    auto finished = done.get_future();
    ferrum::wave_readback readback;
    scheduler->async_submit({.bucket_class = "step", .readback = &readback}, encode,
                            [&done](boost::system::error_code ec, ferrum::wave_report r) {
                              done.set_value({ec, std::move(r)});
                            });
    REQUIRE(finished.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
    const auto [ec, report] = finished.get();
    INFO("wave " << report.wave << ": " << report.message);
    REQUIRE_FALSE(ec);
    REQUIRE(readback);
    const ferrum::lane_contents& lane = *readback;
    o.mismatches += mismatches(bucket, lane.arena_of(ferrum::memory_class::upload)->bytes());
    for (std::size_t n = 0; n < p.nodes.size(); ++n) {
      const ferrum::gpu::command_list& list = lane.list(n);
      const bool opens = options.barriers == ferrum::barrier_placement::every_node || barrier_set[n];
      INFO("node " << n << ", " << list.size() << " commands");
      // The list submitted last closes the wave with one more.
      const std::size_t last = reordered ? bucket.lane.order.back() : p.nodes.size() - 1;
      CHECK(list.barriers() == (list.size() == 0 ? 0 : list.size() - 1 + (opens ? 1 : 0)) + (n == last ? 1 : 0));
      o.barriers += list.barriers();
      o.events += list.events();
      o.lists_opened += list.size() != 0 && opens ? 1 : 0;
    }
  }
  o.checks = encode.checks();
  scheduler.reset();
  threads.join();
  return o;
}

}  // namespace hazard_encoder
