// The stress harness: wave records, encoders, probes, submitters and the
// run's drive (see stress_harness.hpp).
#include "stress_harness.hpp"

#include "null_device_support.hpp"
#include "plan_builder.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <stdexcept>
#include <thread>

namespace stress {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using clock_type = std::chrono::steady_clock;
using ferrum::errc;

// Nodes own one binding resource each whose size grows with the bucket's
// second dimension, so that the two "step" buckets have arenas of different
// sizes.
ferrum::plan make_plan(std::size_t nodes, std::uint32_t lanes, bool two_queues) {
  ferrum::test::plan_builder b;
  for (std::size_t i = 0; i < nodes; ++i)
    b.binding_node("node/n" + std::to_string(i), "resource/r" + std::to_string(i), 64);
  for (const request_kind& k : request_kinds) {
    const std::string_view cls = k.bucket_class;
    ferrum::bucket_capacity dims{1, 1, 1};
    if (k.bucket == "step@1x4x1") dims = {1, 4, 1};
    b.bucket(cls, dims, {{"pool/bindings", 0, 1 << 20}});
  }
  ferrum::plan p = b.lanes(lanes).budget(std::uint64_t{1} << 30).build();
  for (ferrum::resource_descriptor& r : p.resources) r.demand = ferrum::resource_demand::scaled(64, 16, 1);
  if (!two_queues) return p;
  p.format = ferrum::plan_format::v2;
  for (std::size_t i = 0; i < nodes; ++i) {
    ferrum::plan_node& node = p.nodes[i];
    if (i % 2 == 1) node.queue = ferrum::queue_kind::transfer;
    if (i >= 2) node.after.push_back(p.nodes[i - 2].id);
    if (i % 3 == 0 && i >= 1) node.after.push_back(p.nodes[i - 1].id);
  }
  return p;
}

void spin_for(std::chrono::microseconds d) {
  const auto until = clock_type::now() + d;
  while (clock_type::now() < until) {
  }
}

}  // namespace

std::uint64_t mix(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double unit(std::uint64_t bits) noexcept { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// --- wave_record ------------------------------------------------------------------

wave_record::wave_record(stress_run& owner, std::size_t wave_index, std::size_t nodes)
    : run(owner),
      index(wave_index),
      token(wave_index + 1),
      encoded(std::make_unique<std::atomic<bool>[]>(nodes)),
      probed(std::make_unique<std::atomic<bool>[]>(nodes)),
      probes(nodes),
      previous(nodes, 0),
      completed_at_encode(nodes, 0),
      previous_probed(nodes, 0) {
  for (std::size_t n = 0; n < nodes; ++n) probes[n] = probe{this, n, nullptr};
}

void wave_record::violation(std::string message) noexcept { run.violation(std::move(message)); }

wave_record::lane_guard::~lane_guard() {
  if (owner_ == nullptr) return;
  std::uint64_t mine = token_;
  owner_->compare_exchange_strong(mine, 0, std::memory_order_acq_rel);
}

std::optional<wave_record::lane_guard> wave_record::enter(const ferrum::encode_context& c) {
  const std::size_t n = c.node_index;
  if (n >= probes.size()) {
    run.violation("encoder called for node " + std::to_string(n) + " of " + std::to_string(probes.size()));
    return std::nullopt;
  }
  const int b = run.bucket_index(c.bucket);
  const int l = static_cast<int>(c.lane);
  const int d = run.device_index(c.commands.device());
  int expected = -1;
  if (!bucket.compare_exchange_strong(expected, b) && expected != b)
    run.violation("wave " + std::to_string(token) + " encoded in two buckets");
  expected = -1;
  if (!lane.compare_exchange_strong(expected, l) && expected != l)
    run.violation("wave " + std::to_string(token) + " encoded on two lanes");
  expected = -1;
  if (!device.compare_exchange_strong(expected, d) && expected != d)
    run.violation("wave " + std::to_string(token) + " encoded on two devices");
  if (b < 0 || d < 0 || c.lane >= run.scenario_.lanes) {
    run.violation("wave " + std::to_string(token) + " encoded on unknown bucket " + c.bucket.str() + " or lane " +
                  std::to_string(c.lane));
    return std::nullopt;
  }

  // Held: whoever else is inside an encoder of this lane now holds it too.
  std::atomic<std::uint64_t>& owner = run.lane_owner(d, b, c.lane);
  const std::uint64_t other = owner.exchange(token, std::memory_order_acq_rel);
  if (other != 0 && other != token)
    run.violation("lane " + std::to_string(c.lane) + " of " + c.bucket.str() + " held by waves " +
                  std::to_string(other) + " and " + std::to_string(token) + " at once");
  std::optional<lane_guard> guard(std::in_place, owner, token);

  if (encoded[n].exchange(true))
    run.violation("node " + std::to_string(n) + " of wave " + std::to_string(token) + " encoded twice");
  if (c.binding == nullptr || c.binding->bytes().size() < sizeof(std::uint64_t) || c.slot.arena == nullptr ||
      c.slot.size != c.binding->bytes().size() ||
      c.slot.arena->bytes().data() + c.slot.offset != c.binding->bytes().data()) {
    run.violation("node " + std::to_string(n) + " of wave " + std::to_string(token) +
                  " got no slot, or a handle and a range that disagree");
    return std::nullopt;
  }

  // The slot's previous writer: its fence must be reached by now.
  take_slot(*this, n, c.binding->bytes().data(), c.commands.device().queue().timeline(), run.records_);
  return guard;
}

wave_record::pause wave_record::pause_of(std::size_t node) const noexcept {
  const scenario& s = run.scenario_;
  const std::uint64_t h = mix(s.seed ^ mix(token * 0x100000001b3ull + node));
  const double u = unit(h);
  const auto pick = [&](std::chrono::microseconds most) {
    return std::chrono::microseconds(
        static_cast<std::int64_t>((h >> 8) % static_cast<std::uint64_t>(most.count() + 1)));
  };
  if (u < s.spin_rate) return {pause_kind::spin, pick(s.max_spin)};
  if (u < s.spin_rate + s.sleep_rate) return {pause_kind::sleep, pick(s.max_sleep)};
  return {pause_kind::none, {}};
}

void wave_record::leave(const ferrum::encode_context& c) {
  const std::size_t n = c.node_index;
  if (auto r = c.commands.host(ferrum::gpu::host_call(probes[n])); !r)
    run.violation("recording the probe of node " + std::to_string(n) + " failed: " + r.error().what());
  if (n == fault_node) {
    if (what == disturbance::cancel_in_encoder) signal.emit(cancel_type);
    if (what == disturbance::throws) throw std::runtime_error("stress: node " + std::to_string(n) + " throws");
  }
}

void wave_record::encode(const ferrum::encode_context& c) {
  const std::optional<lane_guard> guard = enter(c);
  if (!guard) return;
  const pause p = pause_of(c.node_index);
  if (p.kind == pause_kind::spin) spin_for(p.length);
  if (p.kind == pause_kind::sleep) std::this_thread::sleep_for(p.length);
  leave(c);
}

asio::awaitable<void> wave_record::co_encode(ferrum::encode_context c) {
  const std::optional<lane_guard> guard = enter(c);
  if (!guard) co_return;
  const pause p = pause_of(c.node_index);
  if (p.kind != pause_kind::none) {
    // Suspends: the node's context must stay valid, its lane held.
    asio::steady_timer timer(co_await asio::this_coro::executor, p.length);
    co_await timer.async_wait(asio::use_awaitable);
  }
  leave(c);
}

// --- stress_run ---------------------------------------------------------------------

stress_run::stress_run(scenario s)
    : scenario_(std::move(s)),
      plan_(make_plan(scenario_.nodes, scenario_.lanes, scenario_.two_queues)),
      program_(std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(plan_))),
      pool_(scenario_.threads),
      lane_owners_(std::make_unique<std::atomic<std::uint64_t>[]>((1 + scenario_.more_devices.size()) *
                                                                  request_kinds.size() * scenario_.lanes)),
      outstanding_(scenario_.submitters, 0) {
  REQUIRE(program_->buckets.size() == request_kinds.size());
  std::vector<ferrum::gpu::device*> devices;
  devices_.push_back(::test::null_device(scenario_.device));
  for (const ferrum::gpu::null_device_options& o : scenario_.more_devices) devices_.push_back(::test::null_device(o));
  for (const auto& d : devices_) devices.push_back(d.get());
  auto made = ferrum::scheduler::create(program_, devices, pool_.get_executor(), scenario_.options);
  if (!made) FAIL(made.error().what());
  scheduler_ = std::move(*made);

  records_.reserve(scenario_.waves);
  const double cancel_end = scenario_.throw_rate + scenario_.cancel_rate;
  static constexpr std::array cancel_types{asio::cancellation_type::terminal, asio::cancellation_type::partial,
                                           asio::cancellation_type::total};
  for (std::size_t i = 0; i < scenario_.waves; ++i) {
    auto w = std::make_unique<wave_record>(*this, i, scenario_.nodes);
    const std::uint64_t h = mix(scenario_.seed * 0x9e3779b97f4a7c15ull ^ mix(i));
    w->request = static_cast<std::size_t>(h % request_kinds.size());
    const double u = unit(mix(h ^ 1));
    if (u < scenario_.throw_rate) {
      w->what = disturbance::throws;
    } else if (u < cancel_end) {
      w->what = (mix(h ^ 4) & 1) != 0 ? disturbance::cancel_at_submit : disturbance::cancel_in_encoder;
    }
    w->fault_node = static_cast<std::size_t>(mix(h ^ 2) % scenario_.nodes);
    w->cancel_type = cancel_types[mix(h ^ 3) % cancel_types.size()];
    w->coroutine = unit(mix(h ^ 5)) < scenario_.coroutine_rate;
    records_.push_back(std::move(w));
  }
}

stress_run::~stress_run() {
  scheduler_.reset();
  pool_.join();
}

int stress_run::bucket_index(const ferrum::bucket_id& id) const noexcept { return stress::bucket_index(*program_, id); }

int stress_run::device_index(const ferrum::gpu::device& d) const noexcept {
  for (std::size_t i = 0; i < devices_.size(); ++i)
    if (devices_[i].get() == &d) return static_cast<int>(i);
  return -1;
}

std::uint64_t stress_run::compute_submissions() const noexcept {
  std::uint64_t total = 0;
  for (const auto& d : devices_) total += d->queue().last_submitted();
  return total;
}

void stress_run::violation(std::string message) noexcept { violations_.add(std::move(message)); }

void stress_run::completed(wave_record& w, error_code ec, ferrum::wave_report report) noexcept {
  if (w.completions.fetch_add(1) != 0) {
    violation("wave " + std::to_string(w.token) + " completed twice (" + ferrum::error_code_name(ec) + ")");
    return;
  }
  w.ec = ec;
  w.report = std::move(report);
  w.completed_at = clock_type::now();
  if (w.report.submitted_value != 0)
    w.fence_reached_at_completion = devices_[w.report.device]->queue().timeline().reached(w.report.submitted_value);
  for (std::size_t n = 0; n < scenario_.nodes; ++n) w.probes_at_completion += w.probed[n].load() ? 1 : 0;
  if (ec == errc::all_lanes_quarantined)
    backoff_until_.store((clock_type::now() + std::chrono::milliseconds(25)).time_since_epoch().count());
  // Notified under the lock: a handler on the system executor may still be
  // here when the run, done waiting, is destroyed.
  const std::lock_guard lock(mutex_);
  ++done_;
  --outstanding_[w.index % scenario_.submitters];
  changed_.notify_all();
}

void stress_run::submitter(std::size_t which) {
  const auto strand = asio::make_strand(pool_.get_executor());
  for (std::size_t i = which; i < records_.size(); i += scenario_.submitters) {
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return outstanding_[which] < scenario_.window || stop_.load(); });
      if (stop_.load() || clock_type::now() - started_ > scenario_.submit_cap) return;
      ++outstanding_[which];
    }
    // While every lane is quarantined, waves fail at once: give the hang a
    // moment instead of burning the wave budget.
    const clock_type::time_point until{clock_type::duration(backoff_until_.load())};
    if (clock_type::now() < until) std::this_thread::sleep_until(until);

    wave_record& w = *records_[i];
    w.submitted = true;
    w.submitted_at = clock_type::now();
    submitted_.fetch_add(1);
    const request_kind& kind = request_kinds[w.request];
    const ferrum::wave_request request{kind.bucket_class, kind.extent};
    auto handler = [this, &w](error_code ec, ferrum::wave_report report) { completed(w, ec, std::move(report)); };
    if (w.what == disturbance::cancel_at_submit || w.what == disturbance::cancel_in_encoder) {
      // Cancellable waves are submitted from the strand their completion is
      // bound to: the emit right after async_submit returns then cannot run
      // concurrently with the delivery of the completion (which clears the
      // slot), even when the wave fails before it ever sees the signal.
      strand_posts_.fetch_add(1);
      asio::post(strand, [this, &w, request, handler, strand] {
        auto token = asio::bind_cancellation_slot(w.signal.slot(), asio::bind_executor(strand, handler));
        w.phase_before = shutdown_phase_.load();
        if (w.coroutine) {
          scheduler_->async_submit(request, w.co_encode_fn, token);
        } else {
          scheduler_->async_submit(request, w.encode_fn, token);
        }
        w.phase_after = shutdown_phase_.load();
        // From here the run may destroy the scheduler; the signal is ours.
        strand_posts_.fetch_sub(1);
        if (w.what != disturbance::cancel_at_submit) return;
        w.signal.emit(w.cancel_type);
        // The wave ran meanwhile: it may have submitted before the signal
        // came, and then even completed. Counted after the emit: a wave that
        // succeeds submitted before it, with every node encoded.
        for (std::size_t n = 0; n < scenario_.nodes; ++n) w.encoded_at_emit += w.encoded[n].load() ? 1 : 0;
      });
      continue;
    }
    // Most other completions run on the pool, every fourth on the system
    // executor.
    const auto submit = [&](auto& encode) {
      w.phase_before = shutdown_phase_.load();
      if (i % 4 != 3) {
        scheduler_->async_submit(request, encode, asio::bind_executor(pool_, handler));
      } else {
        scheduler_->async_submit(request, encode, handler);
      }
      w.phase_after = shutdown_phase_.load();
    };
    if (w.coroutine) {
      submit(w.co_encode_fn);
    } else {
      submit(w.encode_fn);
    }
  }
}

void stress_run::sample_counts() {
  std::uint32_t quarantined = 0;
  for (const auto& pool : scheduler_->pools()) {
    const ferrum::lane_counts c = pool->counts();
    if (c.lanes != scenario_.lanes || c.free + c.in_flight + c.quarantined != c.lanes) ++count_errors_;
    quarantined += c.quarantined;
    most_waiting_ = std::max(most_waiting_, c.waiting);
  }
  most_quarantined_ = std::max(most_quarantined_, quarantined);
}

void stress_run::run_all() {
  started_ = clock_type::now();
  std::vector<std::thread> threads;
  submitters_running_.store(scenario_.submitters);
  for (std::size_t t = 0; t < scenario_.submitters; ++t)
    threads.emplace_back([this, t] {
      submitter(t);
      const std::lock_guard lock(mutex_);
      submitters_running_.fetch_sub(1);
      changed_.notify_all();
    });

  const auto hung = [&](const char* what) {
    std::size_t done = 0;
    {
      const std::lock_guard lock(mutex_);
      done = done_;
    }
    std::fprintf(stderr, "stress[%s]: %s within %lld ms; %zu of %zu submitted waves completed\n",
                 scenario_.name.c_str(), what, static_cast<long long>(scenario_.drain_limit.count()), done,
                 submitted_.load());
    for (const auto& w : records_) {
      if (w->submitted && w->completions.load() == 0)
        std::fprintf(stderr, "  not completed: wave %llu (request %s, plan %d)\n",
                     static_cast<unsigned long long>(w->token), std::string(request_kinds[w->request].bucket).c_str(),
                     static_cast<int>(w->what));
    }
    for (std::size_t b = 0; scheduler_ != nullptr && b < scheduler_->pools().size(); ++b) {
      const auto& pool = scheduler_->pools()[b];
      const ferrum::lane_counts c = pool->counts();
      std::fprintf(stderr, "  %s: lanes %u free %u in_flight %u quarantined %u waiting %zu\n",
                   pool->bucket().id.str().c_str(), c.lanes, c.free, c.in_flight, c.quarantined, c.waiting);
    }
    std::fflush(stderr);
    // A scheduler with waves that never end cannot be destroyed.
    std::abort();
  };

  // Submitters end once their waves are submitted or submit_cap has passed;
  // then every submitted wave must complete within drain_limit.
  const auto deadline = started_ + scenario_.submit_cap + scenario_.drain_limit;
  auto mid_shutdown = std::make_shared<std::promise<error_code>>();
  auto mid_shutdown_done = mid_shutdown->get_future();
  bool mid_shutdown_started = false;
  for (;;) {
    if (scheduler_ != nullptr) sample_counts();
    std::size_t done = 0;
    {
      std::unique_lock lock(mutex_);
      changed_.wait_for(lock, std::chrono::milliseconds(1));
      // submitted_ only grows while a submitter runs.
      if (submitters_running_.load() == 0 && done_ == submitted_.load()) break;
      done = done_;
    }
    const auto now = clock_type::now();
    if (scenario_.shutdown_after && !mid_shutdown_started && done >= *scenario_.shutdown_after) {
      // Waves submitted before this are accepted and run to their end; those
      // submitted after it returns fail with scheduler_shut_down.
      mid_shutdown_started = true;
      shutdown_phase_.store(1);
      scheduler_->async_shutdown([mid_shutdown](error_code ec) { mid_shutdown->set_value(ec); });
      shutdown_phase_.store(2);
    }
    if (scenario_.destroy_after && scheduler_ != nullptr && done >= *scenario_.destroy_after) {
      // Stop submitting, then destroy the scheduler with waves in flight and
      // queued: the destructor fails the queued ones and waits for the rest.
      stop_.store(true);
      changed_.notify_all();
      for (auto& t : threads) t.join();
      threads.clear();
      while (strand_posts_.load() != 0) std::this_thread::yield();
      const auto destroying = clock_type::now();
      scheduler_.reset();
      destroy_time_ = clock_type::now() - destroying;
    }
    if (now > deadline) hung("waves did not complete");
  }
  for (auto& t : threads) t.join();
  elapsed_ = clock_type::now() - started_;
  if (mid_shutdown_started) {
    if (mid_shutdown_done.wait_for(scenario_.drain_limit) != std::future_status::ready)
      hung("the async_shutdown called mid-run did not complete");
    mid_shutdown_ec_ = mid_shutdown_done.get();
    mid_shutdown_completed_ = true;
  }
  if (scheduler_ == nullptr) return;

  auto shut = std::make_shared<std::promise<error_code>>();
  auto shut_done = shut->get_future();
  scheduler_->async_shutdown([shut](error_code ec) { shut->set_value(ec); });
  if (shut_done.wait_for(scenario_.drain_limit) != std::future_status::ready) hung("async_shutdown did not complete");
  const error_code shutdown_ec = shut_done.get();
  CHECK_FALSE(shutdown_ec);
  for (const auto& pool : scheduler_->pools()) final_counts_.push_back(pool->counts());
  final_stats_ = scheduler_->stats();
}

}  // namespace stress
