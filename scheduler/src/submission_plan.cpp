#include "submission_plan.hpp"

#include <algorithm>

namespace ferrum::detail {

submission_plan::submission_plan(const dependency_graph& graph, gpu::device& device, queue_placement placement,
                                 const std::vector<bool>& culled)
    : device_(&device), culled_(culled) {
  const std::size_t queues = device.queue_count();
  std::vector<std::size_t> segment_of(graph.size(), none);
  // Per culled node: per queue, the latest segment it would have waited
  // for (its dependencies', through culled ones too); a node after it
  // waits for those instead.
  std::vector<std::vector<std::size_t>> passed_on(graph.size());
  const auto wait_for = [&](std::vector<std::size_t>& waits, std::size_t q, std::size_t on) {
    if (on == none) return;
    waits[q] = waits[q] == none ? on : std::max(waits[q], on);
  };
  for (std::size_t n = 0; n < graph.size(); ++n) {
    gpu::queue* q = &device.queue(placed_queue(graph, n, placement, device));
    node_queues_.push_back(q->kind());
    if (!culled_.empty() && culled_[n]) {
      passed_on[n].assign(queues, none);
      for (std::size_t d : graph.after(n)) {
        if (segment_of[d] != none) wait_for(passed_on[n], segments_[segment_of[d]].queue->index(), segment_of[d]);
        for (std::size_t i = 0; i < passed_on[d].size(); ++i) wait_for(passed_on[n], i, passed_on[d][i]);
      }
      if (!segments_.empty()) {
        segments_.back().end = n + 1;  // its list is left out
        holds_culled_.back() = true;
      }
      continue;
    }
    if (segments_.empty() || segments_.back().queue != q) {
      std::vector<std::size_t> latest = segments_.empty() ? std::vector(queues, none) : segments_.back().latest;
      latest[q->index()] = segments_.size();
      segments_.push_back({q, n, n, std::vector(queues, none), std::move(latest)});
      holds_culled_.push_back(false);
    }
    segment& s = segments_.back();
    s.end = n + 1;
    segment_of[n] = segments_.size() - 1;
    for (std::size_t d : graph.after(n)) {
      for (std::size_t i = 0; i < passed_on[d].size(); ++i)
        if (i != q->index()) wait_for(s.waits_on, i, passed_on[d][i]);
      if (segment_of[d] == none) continue;
      const segment& on = segments_[segment_of[d]];
      if (on.queue == q) continue;  // earlier on the same queue: in order
      wait_for(s.waits_on, on.queue->index(), segment_of[d]);
    }
  }
  if (segments_.empty()) {
    // Every node culled: one empty submission, for the wave's value.
    std::vector<std::size_t> latest(queues, none);
    latest[device.queue().index()] = 0;
    segments_.push_back({&device.queue(), 0, graph.size(), std::vector(queues, none), std::move(latest)});
    holds_culled_.push_back(true);
  }
  // The compute queue's last submission must come after every other
  // queue's: the last segment when it is a compute one waiting for each of
  // them, else a join.
  std::vector<bool> seen(queues, false);
  for (const segment& g : segments_) {
    first_on_queue_.push_back(!seen[g.queue->index()]);
    seen[g.queue->index()] = true;
    one_queue_ = one_queue_ && g.queue == segments_.front().queue;
  }
  const segment& last = segments_.back();
  const std::size_t compute = device.queue().index();
  joins_ = last.queue->index() != compute;
  for (std::size_t q = 0; q < queues; ++q)
    if (q != compute && last.latest[q] != none && last.waits_on[q] != last.latest[q]) joins_ = true;
}

submission_plan::values submission_plan::make_values() const {
  values v;
  v.submitted.assign(segments_.size(), 0);
  // Its waits, and a gate's.
  v.waits.reserve(device_->queue_count() + 1);
  if (!culled_.empty()) v.lists.reserve(culled_.size());
  return v;
}

submission_plan::outcome submission_plan::submit(std::span<gpu::command_list* const> lists, values& v,
                                                 const gpu::external_sync& sync, staging_lists staging,
                                                 std::uint64_t after, bool live_in_order) const noexcept {
  outcome done{std::uint64_t{0}};
  const gpu::queue_wait earlier{&device_->queue(), after};
  const std::span<const gpu::queue_wait> earlier_wait(&earlier, after != 0 ? 1 : 0);
  // The gate: the stage-in copy, the engine's waits and an earlier wave's
  // value before any queue's first segment.
  std::uint64_t gate = 0;
  if (staging.in != nullptr || ((!sync.waits.empty() || after != 0) && !one_queue_)) {
    const std::span<gpu::command_list* const> gate_lists(&staging.in, staging.in != nullptr ? 1 : 0);
    auto value = device_->queue().submit_next(gate_lists, earlier_wait, {sync.waits, {}});
    if (!value) {
      done.value = value.error();
      return done;
    }
    gate = *value;
    done.waited = true;
  }
  const bool joins = joins_ || staging.out != nullptr;
  const std::size_t count = segments_.size();
  for (std::size_t i = 0; i < count; ++i) {
    const segment& s = segments_[i];
    v.waits.clear();
    for (std::size_t q = 0; q < s.waits_on.size(); ++q)
      if (s.waits_on[q] != none) v.waits.push_back({&device_->queue_at(q), v.submitted[s.waits_on[q]]});
    if (gate != 0 && first_on_queue_[i]) v.waits.push_back({&device_->queue(), gate});
    gpu::external_sync own;
    if (i == 0 && gate == 0) {
      own.waits = sync.waits;
      v.waits.insert(v.waits.end(), earlier_wait.begin(), earlier_wait.end());
    }
    if (i + 1 == count && !joins) own.signals = sync.signals;
    std::span<gpu::command_list* const> segment_lists = live_in_order ? lists : lists.subspan(s.begin, s.end - s.begin);
    if (holds_culled_[i] && !live_in_order) {
      // Reserved for every node: no allocation.
      v.lists.clear();
      for (std::size_t n = s.begin; n < s.end; ++n)
        if (!culled_[n]) v.lists.push_back(lists[n]);
      segment_lists = v.lists;
    }
    auto value = s.queue->submit_next(segment_lists, v.waits, own);
    if (!value) {
      // Earlier segments are on the GPU: join them, so that one value on the
      // compute queue still says when the lane is free; the join signals
      // the engine's semaphores once they are done. A stage-in gate alone
      // writes the lane too: the lane waits for it.
      done.value = value.error();
      done.submitted_any = i > 0 || staging.in != nullptr;
      if (staging.in != nullptr) done.covered = gate;
      if (i > 0) {
        if (auto joined = join(v, segments_[i - 1], sync.signals, nullptr)) {
          done.covered = *joined;
          done.signalled = true;
        }
      }
      return done;
    }
    v.submitted[i] = *value;
    done.waited = true;
  }
  if (!joins) {
    done.value = v.submitted.back();
    done.signalled = true;
    return done;
  }
  done.value = join(v, segments_.back(), sync.signals, staging.out);
  done.signalled = done.value.has_value();
  return done;
}

result<std::uint64_t> submission_plan::join(values& v, const segment& last, std::span<const gpu::semaphore_op> signals,
                                            gpu::command_list* out) const noexcept {
  gpu::queue& compute = device_->queue();
  v.waits.clear();
  // A queue's later value implies its earlier ones: its latest segment is enough.
  for (std::size_t q = 0; q < last.latest.size(); ++q)
    if (q != compute.index() && last.latest[q] != none)
      v.waits.push_back({&device_->queue_at(q), v.submitted[last.latest[q]]});
  return compute.submit_next(std::span<gpu::command_list* const>(&out, out != nullptr ? 1 : 0), v.waits, {{}, signals});
}

}  // namespace ferrum::detail
