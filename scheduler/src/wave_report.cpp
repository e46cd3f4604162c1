// wave_report.cpp — what a wave reports: its report (phase ends included), its
// spans for the trace, and its completion (posted to its handler, and
// delivered under a delivery_scope).
#include "program_lanes.hpp"
#include "wave_impl.hpp"

namespace ferrum::detail {

using boost::system::error_code;
using clock_type = std::chrono::steady_clock;

wave_report wave::report_now() const {
  wave_report r;
  r.wave = id_;
  r.bucket = bucket_ != nullptr ? &bucket_->id : nullptr;
  r.device = device_ != nullptr ? device_->index : 0;
  r.lane = lane_index_;
  r.nodes = contexts_.size() - program_->program().culled_nodes;  // the culled never run
  r.program = program_->program().hash;
  r.submitted_value = submitted_value_;
  r.started = started_;
  for (std::size_t phase = 0; phase < wave_phase_count; ++phase) {
    const clock_type::rep ticks = ended_[phase].load(std::memory_order_relaxed);
    if (ticks != 0) r.ended[phase] = clock_type::time_point(clock_type::duration(ticks));
  }
  r.failed_node = failed_node_;
  r.message = message_;
  r.history_wave = history_wave_;
  gpu_time_.report(r);
  for (const wave_import& i : imports_) {
    if (i.image == nullptr || i.history != history_role::none) continue;
    const image_layout left = submitted_value_ != 0 ? i.left : (partly_submitted_ ? image_layout::undefined : i.layout);
    r.final_images[r.final_image_count++] = {i.resource->view(), i.image, left};
  }
  return r;
}

void wave::finish(error_code ec) noexcept {
  if (completed_.exchange(true, std::memory_order_acq_rel)) return;
  if (!ec && readback_ != nullptr) {
    // The readback holds the lane from here, as a lease would: no longer
    // in flight. Its move gives back a lane it held before.
    host_.counters().lane_given_back();
    *readback_ = wave_readback(std::move(held_), id_);
  }
  outcome_.ec = ec;
  outcome_.report = report_now();
  host_.counters().counted(ec);
  host_.posting(1);
  completion.post(outcome_);
  host_.posting(-1);
}

void wave::conclude(error_code ec) noexcept {
  if (trace_recorder* trace = host_.options().trace)
    record_wave(*trace, report_now(), node_spans_,
                program_->submissions(device_ != nullptr ? device_->index : 0).node_queues(), barriers(),
                program_->program().culling);
  finish(ec);
}

void wave::trace_node(std::size_t node, const trace_clock& started) noexcept {
  if (host_.options().trace == nullptr) return;
  trace_span& span = node_spans_[node];
  span.phase = wave_phase::encode;
  span.node = static_cast<std::uint32_t>(node);
  span.wave = id_;
  span.bucket = &bucket_->id;
  span.lane = lane_index_;
  span.thread = started.thread;
  span.begin = started.at;
  span.end = clock_type::now();
}

// --- delivery ------------------------------------------------------------------

namespace {
thread_local const delivery_scope* current_delivery = nullptr;
}  // namespace

delivery_scope::delivery_scope(wave_outcome& outcome) noexcept : outcome_(&outcome), outer_(current_delivery) {
  current_delivery = this;
}

delivery_scope::~delivery_scope() {
  // The thread is done with this wave's handler before the wave (and maybe
  // its scheduler, destroyed from the handler) goes.
  current_delivery = outer_;
  outcome_->delivered(outcome_);
}

const delivery_scope* delivery_scope::current() noexcept { return current_delivery; }

bool wave::delivering_on_this_thread(const wave_host& host) noexcept {
  for (const delivery_scope* d = delivery_scope::current(); d != nullptr; d = d->outer())
    if (&static_cast<const wave*>(d->outcome().context)->host_ == &host) return true;
  return false;
}

}  // namespace ferrum::detail
