#include "run_accounting.hpp"

#include <boost/asio/error.hpp>

#include <algorithm>
#include <chrono>

namespace ferrum::tools {
namespace {

using boost::system::error_code;

constexpr std::size_t max_examples = 3;

double micros(std::chrono::steady_clock::duration d) noexcept {
  return std::max(0.0, std::chrono::duration<double, std::micro>(d).count());
}

std::optional<std::chrono::steady_clock::time_point> ended(const wave_report& r, wave_phase phase) noexcept {
  return r.ended[static_cast<std::size_t>(phase)];
}

}  // namespace

std::uint64_t run_tally::injected() const noexcept {
  return delay.injected + hang.injected + lost.injected + encoder.injected + cancel.injected;
}

std::uint64_t run_tally::surfaced() const noexcept {
  return delay.surfaced + hang.surfaced + lost.surfaced + encoder.surfaced + cancel.surfaced;
}

bool run_tally::all_surfaced() const noexcept {
  for (const fault_tally* t : {&delay, &hang, &lost, &encoder, &cancel})
    if (t->surfaced != t->injected) return false;
  return true;
}

run_accounting::run_accounting(std::vector<const gpu::device*> devices,
                               std::vector<gpu::null_fault_options> device_faults, const fence_clock* completion_times,
                               std::uint64_t waves, bool gpu_timed, const compiled_program* program)
    : completion_times_(completion_times), program_(gpu_timed ? program : nullptr) {
  for (std::size_t d = 0; d < devices.size(); ++d) {
    devices_.push_back({devices[d], std::nullopt, 0, std::nullopt, std::nullopt});
    if (d < device_faults.size()) devices_.back().faults = device_faults[d];
  }
  tally_.devices.resize(devices.size());
  // Reserved up front: recording a successful wave allocates nothing, so
  // the run's allocation count is the scheduler's and the device's.
  tally_.wave_us.reserve(waves);
  if (completion_times_ != nullptr) tally_.fence_wake_us.reserve(waves);
  if (gpu_timed) tally_.gpu_us.reserve(waves);
  if (program_ != nullptr)
    tally_.bucket_gpu.assign(program_->buckets.size(), {0, std::vector<std::uint64_t>(program_->node_count, 0)});
  tally_.outcomes.reserve(16);
  tally_.unexplained_examples.reserve(max_examples);
}

void run_accounting::device_state::scan(std::uint64_t value) noexcept {
  if (!faults) return;
  for (; scanned < value; ++scanned) {
    const std::uint64_t submission = scanned + 1;
    const auto fault = gpu::decide_fault(*faults, submission);
    if (!fault) continue;
    if (fault->kind == gpu::fault_kind::hang && !first_hang) first_hang = submission;
    if (fault->kind == gpu::fault_kind::lost && !first_lost) first_lost = submission;
  }
}

bool run_accounting::device_state::reached(std::uint64_t value) const noexcept {
  return !first_lost || value <= *first_lost;
}

bool run_accounting::device_state::loss_injected() const noexcept {
  return first_lost && *first_lost <= scanned && device->lost();
}

bool run_accounting::device_state::hang_injected_at_or_below(std::uint64_t value) const noexcept {
  return first_hang && *first_hang <= value && reached(*first_hang);
}

void run_accounting::count_outcome(const error_code& ec) {
  if (!ec) {
    ++tally_.completed;
    return;
  }
  if (ec == boost::asio::error::operation_aborted) {
    ++tally_.cancelled;
  } else {
    ++tally_.failed;
  }
  const std::string name = error_code_name(ec);
  const auto known = std::find_if(tally_.outcomes.begin(), tally_.outcomes.end(),
                                  [&](const auto& entry) { return entry.first == name; });
  if (known != tally_.outcomes.end()) {
    ++known->second;
  } else {
    tally_.outcomes.emplace_back(name, 1);
  }
}

void run_accounting::note_unexplained(const error_code& ec, const wave_report& report, const wave_facts& facts) {
  ++tally_.unexplained;
  if (tally_.unexplained_examples.size() >= max_examples) return;
  std::string line = "wave " + std::to_string(report.wave);
  if (report.wave != facts.wave) line += " (expected id " + std::to_string(facts.wave) + ")";
  if (report.bucket != nullptr) line += " in " + report.bucket->str() + " lane " + std::to_string(report.lane);
  line += ": ";
  line += !ec ? std::string("ok") : error_code_name(ec);
  if (!report.message.empty()) line += " (" + printable(report.message, 200) + ")";
  tally_.unexplained_examples.push_back(std::move(line));
}

void run_accounting::record(error_code ec, const wave_report& report, const wave_facts& facts) {
  count_outcome(ec);
  const std::uint64_t value = report.submitted_value;
  // Everything submitted so far, on every device: a loss or hang at any of
  // those values may explain a wave that never reached the GPU
  // (all_lanes_quarantined). queue::submit counts a submission in
  // last_submitted() only once the device has it, and the device may lose
  // itself on it before that (the null device's worker): on a lost device
  // the value being submitted is scanned too, or a wave that failed by that
  // loss meanwhile would go unexplained.
  for (device_state& d : devices_) d.scan(d.device->queue().last_submitted() + (d.device->lost() ? 1 : 0));
  device_state& on = devices_[std::min(report.device, devices_.size() - 1)];
  on.scan(value);
  if (report.ended[static_cast<std::size_t>(wave_phase::acquire)] && report.device < tally_.devices.size()) {
    device_tally& t = tally_.devices[report.device];
    ++(!ec ? t.completed : ec == boost::asio::error::operation_aborted ? t.cancelled : t.failed);
  }
  // The device's fault on the wave's submission, when the device ran it.
  // (Not an optional: g++ 12 at -O1 sees it as maybe uninitialized.)
  bool device_faulted = false;
  gpu::fault_decision device_fault{gpu::fault_kind::delay, {}};
  if (on.faults && value != 0 && on.reached(value)) {
    if (const auto decided = gpu::decide_fault(*on.faults, value)) {
      device_faulted = true;
      device_fault = *decided;
    }
  }
  const auto device_fault_is = [&](gpu::fault_kind kind) { return device_faulted && device_fault.kind == kind; };

  if (facts.encoder_threw) ++tally_.encoder.injected;
  if (facts.cancel_emitted) ++tally_.cancel.injected;
  // Ids are the driver's submission order; a wave with another id got
  // another wave's faults and seeds.
  const bool id_ok = report.wave == facts.wave;

  if (!ec) {
    if (const auto fence = ended(report, wave_phase::fence), release = ended(report, wave_phase::release);
        fence && release) {
      tally_.wave_us.push_back(micros(*release - report.started));
      if (report.gpu) {
        tally_.gpu_us.push_back(micros(report.gpu->end - report.gpu->begin));
        add_node_times(report);
      }
      if (completion_times_ != nullptr && !device_faulted) {
        if (const auto finished = completion_times_->finished_at(report.wave))
          tally_.fence_wake_us.push_back(micros(*fence - *finished));
      }
      const auto encoded = ended(report, wave_phase::encode);
      if (device_fault_is(gpu::fault_kind::delay) && encoded && *fence - *encoded >= device_fault.delay)
        ++tally_.delay.surfaced;
    }
    if (!id_ok) note_unexplained(ec, report, facts);
    return;
  }

  const bool aborted = ec == boost::asio::error::operation_aborted;
  // A wave that got no lane fails for want of one: any device's loss or hang
  // explains it.
  const bool any_loss =
      std::any_of(devices_.begin(), devices_.end(), [](const device_state& d) { return d.loss_injected(); });
  const bool any_hang = std::any_of(devices_.begin(), devices_.end(),
                                    [](const device_state& d) { return d.hang_injected_at_or_below(d.scanned); });
  // A wave that held a lane failed with device_lost by its own device's loss.
  const bool lane_handed = report.ended[static_cast<std::size_t>(wave_phase::acquire)].has_value();
  const bool by_loss = ec == errc::device_lost ? (lane_handed ? on.loss_injected() : any_loss)
                                               : ec == errc::all_lanes_quarantined && any_loss;
  bool explained = false;
  if (ec == errc::encoder_failed) {
    explained = facts.encoder_threw;
  } else if (aborted) {
    explained = facts.cancel_emitted;
  } else if (ec == errc::fence_timeout) {
    explained = value != 0 && on.hang_injected_at_or_below(value);
  } else if (ec == errc::device_lost) {
    explained = by_loss;
  } else if (ec == errc::all_lanes_quarantined) {
    explained = by_loss || any_hang;
  }
  explained = explained && id_ok;

  if (facts.encoder_threw && (ec == errc::encoder_failed || by_loss)) ++tally_.encoder.surfaced;
  if (facts.cancel_emitted && (aborted || by_loss)) ++tally_.cancel.surfaced;
  if (explained) {
    if (device_fault_is(gpu::fault_kind::delay)) ++tally_.delay.surfaced;
    if (device_fault_is(gpu::fault_kind::hang) && ec == errc::fence_timeout) ++tally_.hang.surfaced;
    if (device_fault_is(gpu::fault_kind::lost)) ++tally_.lost.surfaced;
  } else {
    note_unexplained(ec, report, facts);
  }
}

void run_accounting::add_node_times(const wave_report& report) {
  if (program_ == nullptr || report.bucket == nullptr) return;
  const auto& buckets = program_->buckets;
  const auto bucket =
      std::find_if(buckets.begin(), buckets.end(), [&](const compiled_bucket& b) { return b.id == *report.bucket; });
  if (bucket == buckets.end()) return;
  run_tally::node_gpu_times& times = tally_.bucket_gpu[static_cast<std::size_t>(bucket - buckets.begin())];
  if (report.gpu_nodes.size() != times.node_ns.size()) return;
  ++times.waves;
  for (std::size_t n = 0; n < report.gpu_nodes.size(); ++n) {
    const auto took =
        std::chrono::duration_cast<std::chrono::nanoseconds>(report.gpu_nodes[n].end - report.gpu_nodes[n].begin);
    times.node_ns[n] += static_cast<std::uint64_t>(std::max<std::int64_t>(took.count(), 0));
  }
}

void run_accounting::settle(const gpu::fault_counts& device_injected) noexcept {
  tally_.delay.injected = device_injected.delay;
  tally_.hang.injected = device_injected.hang;
  tally_.lost.injected = device_injected.lost;
}

}  // namespace ferrum::tools
