// lane_probe.hpp — what both stress harnesses (stress_harness.hpp and
// asio_contract_run.hpp) share to observe that no lane is used by two waves
// at once: the device-side probe of a node, the token exchange in a node's
// slot at the start of its encoder, and the after-the-fact check of each
// slot's previous writer; with the wave's encoder object, the log of
// violations seen on other threads, and the lookup of a bucket's index.
//
// `Wave` is the harness's wave type; it has
//   * `token` (std::uint64_t, non-zero: what its encoders write into slots);
//   * per node: `probed` (std::atomic<bool>), `probes` (lane_probe<Wave>),
//     `previous` and `completed_at_encode` (std::uint64_t) and
//     `previous_probed` (std::uint8_t);
//   * `bucket` and `lane` (std::atomic<int>, -1 until it encodes);
//   * `report` (ferrum::wave_report, its outcome's);
//   * `void violation(std::string) noexcept`, which records a broken
//     invariant seen on another thread with the wave's run;
//   * `void encode(const ferrum::encode_context&)`.
// The run keeps its waves as std::vector<std::unique_ptr<Wave>>, wave i
// having token i + 1.
#pragma once

#include "ferrum/gpu/null_device.hpp"
#include "ferrum/scheduler/scheduler.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace stress {

// The encoder a wave hands to async_submit: encodes each node through the
// wave.
template <class Wave>
struct wave_encoder {
  Wave* wave;
  void operator()(const ferrum::encode_context& c) const { wave->encode(c); }
};

// The host function the device runs for one node of a wave, before it
// signals the wave's fence.
template <class Wave>
struct lane_probe {
  Wave* wave = nullptr;
  std::size_t node = 0;
  std::byte* slot = nullptr;  // set by the encoder before recording the probe

  void operator()() noexcept {
    // On the device's worker, before the wave's fence is signalled: the slot
    // still holds what this wave's encoder wrote, unless its lane was handed
    // to another wave that wrote it meanwhile.
    std::uint64_t seen = 0;
    std::memcpy(&seen, slot, sizeof seen);
    if (seen != wave->token)
      wave->violation("the probe of node " + std::to_string(node) + " of wave " + std::to_string(wave->token) +
                      " found wave " + std::to_string(seen) + "'s token in its slot before its fence");
    wave->probed[node].store(true, std::memory_order_release);
  }
};

// The token exchange at the start of node `n`'s encoder of `w`: notes what
// the slot's previous writer left (its token, the timeline's completed value
// then, whether that writer's probe of the node had run), writes `w`'s own
// token, and aims the node's probe at the slot. The previous writer's fence
// must be reached by now (checked after the run: check_previous_writers).
template <class Wave>
void take_slot(Wave& w, std::size_t n, std::byte* slot, const ferrum::gpu::timeline& timeline,
               const std::vector<std::unique_ptr<Wave>>& waves) noexcept {
  std::uint64_t before = 0;
  std::memcpy(&before, slot, sizeof before);
  w.previous[n] = before;
  w.completed_at_encode[n] = timeline.completed();
  if (before != 0 && before <= waves.size())
    w.previous_probed[n] = waves[before - 1]->probed[n].load(std::memory_order_acquire) ? 1 : 0;
  std::memcpy(slot, &w.token, sizeof w.token);
  w.probes[n].slot = slot;
}

// After the run: no lane comes back before its fence. For each of `w`'s
// `nodes`, the wave that wrote the slot before `w` ran on `w`'s lane
// (bucket `b`, lane `l`, and `same_device(p)`), and if it submitted, its
// fence was reached and its probe had run when `w` encoded. Each broken
// rule goes to `problem(w, what)`.
template <class Wave, class SameDevice, class Problem>
void check_previous_writers(const Wave& w, const std::vector<std::unique_ptr<Wave>>& waves, std::size_t nodes, int b,
                            int l, SameDevice&& same_device, Problem&& problem) {
  for (std::size_t n = 0; n < nodes; ++n) {
    const std::uint64_t before = w.previous[n];
    if (before == 0) continue;
    if (before > waves.size() || before == w.token) {
      problem(w, "found token " + std::to_string(before) + " in the slot of node " + std::to_string(n));
      continue;
    }
    const Wave& p = *waves[before - 1];
    if (!same_device(p) || p.bucket.load() != b || p.lane.load() != l) {
      problem(w, "found wave " + std::to_string(before) + "'s token, of another lane, in node " + std::to_string(n));
      continue;
    }
    const std::uint64_t pf = p.report.submitted_value;
    if (pf != 0 && w.completed_at_encode[n] < pf)
      problem(w, "got lane " + std::to_string(l) + " while wave " + std::to_string(before) + "'s fence " +
                     std::to_string(pf) + " was not reached (timeline at " + std::to_string(w.completed_at_encode[n]) +
                     ")");
    if (pf != 0 && w.previous_probed[n] == 0)
      problem(w, "got lane " + std::to_string(l) + " before wave " + std::to_string(before) + "'s probe of node " +
                     std::to_string(n) + " ran");
  }
}

// Broken invariants seen on threads other than the test's (encoders,
// probes, handlers): their count and the first few, read by the test's
// thread after the run.
class violation_log {
 public:
  struct seen {
    std::size_t count = 0;
    std::vector<std::string> first;
  };

  void add(std::string message) noexcept {
    const std::lock_guard lock(mutex_);
    ++seen_.count;
    if (seen_.first.size() < 20) seen_.first.push_back(std::move(message));
  }
  [[nodiscard]] seen read() const {
    const std::lock_guard lock(mutex_);
    return seen_;
  }

 private:
  mutable std::mutex mutex_;
  seen seen_;
};

// The index of the bucket `id` names in `program` (compared by address, as
// encode contexts name them); -1 if none.
[[nodiscard]] inline int bucket_index(const ferrum::compiled_program& program, const ferrum::bucket_id& id) noexcept {
  for (std::size_t b = 0; b < program.buckets.size(); ++b)
    if (&program.buckets[b].id == &id) return static_cast<int>(b);
  return -1;
}

}  // namespace stress
