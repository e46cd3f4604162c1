// wave_report.cpp — what a wave reports: its phases' stamps, its report,
// its completion (posted to its handler) and its spans for the trace.
#include "scheduler_impl.hpp"
#include "wave.hpp"

namespace ferrum::detail {

using boost::system::error_code;
using clock_type = std::chrono::steady_clock;

void wave::stamp(wave_phase phase) noexcept {
  ended_[static_cast<std::size_t>(phase)].store(clock_type::now().time_since_epoch().count(),
                                                std::memory_order_relaxed);
}

wave_report wave::report_now() const {
  wave_report r;
  r.wave = id_;
  r.bucket = group_ != nullptr ? &group_->bucket().id : nullptr;
  r.device = device_ != nullptr ? device_->index : 0;
  r.lane = held_ != nullptr ? held_->index : 0;
  r.nodes = owner_.program_->node_count;
  r.submitted_value = submitted_value_;
  r.started = started_;
  for (std::size_t phase = 0; phase < wave_phase_count; ++phase) {
    const clock_type::rep ticks = ended_[phase].load(std::memory_order_relaxed);
    if (ticks != 0) r.ended[phase] = clock_type::time_point(clock_type::duration(ticks));
  }
  r.failed_node = failed_node_;
  r.message = message_;
  if (gpu_timed_.load(std::memory_order_acquire)) {
    r.gpu_nodes = gpu_nodes_;
    r.gpu = gpu_span();
  }
  return r;
}

void wave::finish(error_code ec) noexcept {
  if (completed_.exchange(true, std::memory_order_acq_rel)) return;
  outcome_.ec = ec;
  outcome_.report = report_now();
  owner_.counted(ec);
  owner_.posting(1);
  completion.post(outcome_);
  owner_.posting(-1);
}

void wave::conclude(error_code ec) noexcept {
  if (trace_recorder* trace = owner_.options_.trace)
    record_wave(*trace, report_now(), node_spans_,
                (device_ != nullptr ? *device_ : owner_.devices_.front()).submissions.node_queues());
  finish(ec);
}

void wave::trace_node(std::size_t node, const trace_clock& started) noexcept {
  if (owner_.options_.trace == nullptr) return;
  trace_span& span = node_spans_[node];
  span.phase = wave_phase::encode;
  span.node = static_cast<std::uint32_t>(node);
  span.wave = id_;
  span.bucket = &pool_->bucket().id;
  span.lane = held_->index;
  span.thread = started.thread;
  span.begin = started.at;
  span.end = clock_type::now();
}

}  // namespace ferrum::detail
