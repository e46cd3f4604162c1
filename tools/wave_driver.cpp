#include "wave_driver.hpp"

#include "allocation_counter.hpp"
#include "early_cancellation_slot.hpp"
#include "wave_faults.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <chrono>

namespace ferrum::tools {

namespace asio = boost::asio;

wave_driver::wave_driver(scheduler& s, const device_checks& checks, run_accounting& accounting,
                         const driver_settings& settings)
    : scheduler_(s), accounting_(accounting), settings_(settings), ticker_(context_), nodes_(s.program()->node_count) {
  const std::size_t window = static_cast<std::size_t>(
      std::clamp<std::uint64_t>(settings_.window, 1, std::max<std::uint64_t>(settings_.waves, 1)));
  for (std::size_t i = 0; i < window; ++i) slots_.push_back(std::make_unique<window_entry>(checks));
  // Each bucket's own class and capacity: the scheduler picks the smallest
  // bucket of the class covering the extent, which is that bucket.
  for (const compiled_bucket& bucket : s.program()->buckets)
    requests_.push_back({bucket.spec.cls.str(), bucket.spec.dims, {}, {}, settings_.imports});
  // Allocations are counted after the first tenth of the run (at least a
  // window of waves, in which the scheduler makes its waves, frames and
  // caches), up to the last completion.
  warm_up_ = std::min<std::uint64_t>(settings_.waves - 1, std::max<std::uint64_t>(window, settings_.waves / 10));
}

void wave_driver::run(const std::function<void(std::uint64_t)>& tick) {
  tick_ = &tick;
  asio::post(context_, [this] {
    if (warm_up_ == 0) steady_begin_ = allocations_so_far();
    for (std::size_t i = 0; i < slots_.size(); ++i) submit(i);
  });
  schedule_tick();
  // Returns once the shutdown completed and the ticker stopped: until then
  // the waves' completions hold work on the context.
  context_.run();
  tick_ = nullptr;
}

void wave_driver::schedule_tick() {
  ticker_.expires_after(std::chrono::milliseconds(100));
  ticker_.async_wait([this](boost::system::error_code ec) {
    if (ec || finished_) return;
    (*tick_)(done_);
    schedule_tick();
  });
}

void wave_driver::submit(std::size_t index) {
  if (next_wave_ > settings_.waves) return;
  window_entry& slot = *slots_[index];
  slot.wave = next_wave_++;
  const wave_fault fault = decide_wave_fault(settings_.faults, settings_.seed, slot.wave, nodes_);
  slot.cancel_before_start = fault.kind == wave_fault_kind::cancel && fault.before_start;
  slot.encoder.arm(slot.wave, fault, &slot.signal);
  const wave_request& request = requests_[static_cast<std::size_t>((slot.wave - 1) % requests_.size())];
  scheduler_.async_submit(
      request, slot.encoder,
      asio::bind_cancellation_slot(
          early_cancellation_slot(slot.signal, slot.cancel_before_start),
          asio::bind_executor(context_, [this, index](boost::system::error_code ec, const wave_report& report) {
            completed(index, ec, report);
          })));
}

void wave_driver::completed(std::size_t index, boost::system::error_code ec, const wave_report& report) {
  window_entry& slot = *slots_[index];
  accounting_.record(ec, report,
                     {slot.wave, slot.encoder.threw(), slot.cancel_before_start || slot.encoder.cancelled()});
  ++done_;
  if (done_ == warm_up_) steady_begin_ = allocations_so_far();
  if (done_ < settings_.waves) {
    submit(index);
    return;
  }
  steady_end_ = allocations_so_far();
  scheduler_.async_shutdown(asio::bind_executor(context_, [this](boost::system::error_code) {
    finished_ = true;
    (*tick_)(done_);
    ticker_.cancel();
  }));
}

}  // namespace ferrum::tools
