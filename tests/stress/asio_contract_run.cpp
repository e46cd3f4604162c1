// The producers, encoders, probes and drive of a contract_run (see
// asio_contract_run.hpp).
#include "asio_contract_run.hpp"

#include "null_device_support.hpp"
#include "scheduler_support.hpp"
#include "stress_harness.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>

namespace stress {

namespace asio = boost::asio;
using boost::system::error_code;
using clock_type = std::chrono::steady_clock;
using ferrum::errc;
using namespace std::chrono_literals;

namespace {

// How long a hang outlasts the fence timeout: its wave and those stalled
// behind it time out, their lanes are quarantined, and come back when it
// ends.
constexpr auto fence_timeout = 100ms;
constexpr auto hang_duration = 250ms;
// A producer whose wave found every lane of its bucket quarantined (during a
// hang) waits this long: the hang would otherwise eat its waves at once.
constexpr auto quarantine_backoff = 20ms;

bool hangs(const ferrum::gpu::null_fault_options& faults, std::uint64_t submission) {
  const auto f = ferrum::gpu::decide_fault(faults, submission);
  return f && f->kind == ferrum::gpu::fault_kind::hang;
}

std::uint64_t first_loss(const ferrum::gpu::null_fault_options& faults, std::uint64_t span) {
  for (std::uint64_t v = 1; v <= span; ++v) {
    const auto f = ferrum::gpu::decide_fault(faults, v);
    if (f && f->kind == ferrum::gpu::fault_kind::lost) return v;
  }
  return 0;
}

}  // namespace

// --- contexts -----------------------------------------------------------------------

on_io_context::on_io_context(std::size_t threads) : guard_(std::in_place, context_.get_executor()) {
  for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { context_.run(); });
}

void on_io_context::stop() {
  guard_.reset();
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

// --- waves and producers -------------------------------------------------------------

contract_wave::contract_wave(contract_run& owner, std::size_t wave_index) noexcept
    : run(owner), index(wave_index), token(wave_index + 1) {
  for (std::size_t n = 0; n < contract_nodes; ++n) probes[n] = probe{this, n, nullptr};
}

void contract_wave::violation(std::string message) noexcept { run.violation(std::move(message)); }

std::size_t contract_wave::encoded_count() const noexcept {
  std::size_t count = 0;
  for (const auto& e : encoded) count += e.load() ? 1 : 0;
  return count;
}

void contract_wave::post_cancel() {
  asio::post(from->strand, [this] { signal.emit(cancel_type); });
}

void contract_wave::encode(const ferrum::encode_context& c) {
  const std::size_t n = c.node_index;
  const std::string who = "node " + std::to_string(n) + " of wave " + std::to_string(token);
  if (n >= contract_nodes) {
    run.violation("encoder called for " + who);
    return;
  }
  const int b = run.bucket_index(c.bucket);
  int expected = -1;
  if (!bucket.compare_exchange_strong(expected, b) && expected != b) run.violation(who + ": encoded in two buckets");
  expected = -1;
  if (!lane.compare_exchange_strong(expected, static_cast<int>(c.lane)) && expected != static_cast<int>(c.lane))
    run.violation(who + ": encoded on two lanes");
  if (b < 0 || c.lane >= contract_lanes) {
    run.violation(who + ": encoded on unknown bucket " + c.bucket.str() + " or lane " + std::to_string(c.lane));
    return;
  }

  // Whoever else is inside an encoder of this lane now holds it too.
  std::atomic<std::uint64_t>& owner = run.lane_owner(to, b, c.lane);
  const std::uint64_t other = owner.exchange(token, std::memory_order_acq_rel);
  if (other != 0 && other != token)
    run.violation("lane " + std::to_string(c.lane) + " of " + c.bucket.str() + " held by waves " +
                  std::to_string(other) + " and " + std::to_string(token) + " at once");
  struct held {
    std::atomic<std::uint64_t>& owner;
    std::uint64_t token;
    ~held() {
      std::uint64_t mine = token;
      owner.compare_exchange_strong(mine, 0, std::memory_order_acq_rel);
    }
  } const guard{owner, token};

  if (encoded[n].exchange(true)) run.violation(who + ": encoded twice");
  if (c.binding == nullptr || c.binding->bytes().size() < sizeof(std::uint64_t) || c.slot.arena == nullptr ||
      c.slot.size != c.binding->bytes().size() ||
      c.slot.arena->bytes().data() + c.slot.offset != c.binding->bytes().data()) {
    run.violation(who + ": no slot, or a handle and a range that disagree");
    return;
  }

  // The slot's previous writer: its fence must be reached by now (checked
  // after the run).
  take_slot(*this, n, c.binding->bytes().data(), run.device(to).queue().timeline(), run.waves_);
  if (auto r = c.commands.host(ferrum::gpu::host_call(probes[n])); !r)
    run.violation(who + ": recording its probe failed: " + r.error().what());
  if (cancel == cancel_at::encoder && n == cancel_node) post_cancel();
}

producer::producer(contract_run& owner, std::size_t producer_index, const asio::any_io_executor& executor)
    : run(owner), index(producer_index), strand(asio::make_strand(executor)), wake(strand) {}

// g++ 12 sees Asio's frame allocation (aligned_alloc, inlined from
// awaitable_frame_base::operator new) but not its matching operator delete
// (aligned_delete, which calls free) and reports a mismatch that is not
// there: a false positive inside Asio's coroutine frames, silenced for this
// one coroutine.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
asio::awaitable<void> produce(producer* p) {
  contract_run& run = p->run;
  for (contract_wave* w : p->waves) {
    ferrum::scheduler& s = run.scheduler_for(w->to);
    const ferrum::wave_request request{"step", contract_requests[w->request].extent};
    w->submitted = true;
    w->lost_at_submit = run.device(w->to).lost();
    // Both emits run on this strand once this coroutine has suspended in the
    // co_await below, i.e. after async_submit was initiated, and before the
    // delivery of the wave's completion, which is posted to the strand later
    // (the timer's may come after it: the slot is clear then).
    if (w->cancel == cancel_at::submit) w->post_cancel();
    if (w->cancel == cancel_at::timer) {
      w->cancel_timer.emplace(p->strand, w->cancel_delay);
      w->cancel_timer->async_wait([w](error_code ec) {
        if (!ec) w->signal.emit(w->cancel_type);
      });
    }
    switch (w->handler) {
      case handler_kind::awaitable: {
        // The awaitable's handler resumes this coroutine inline: the code
        // after co_await runs where the handler was invoked.
        auto [ec, report] = co_await s.async_submit(
            request, w->encode_fn, asio::bind_cancellation_slot(w->signal.slot(), asio::as_tuple(asio::use_awaitable)));
        run.completed(*w, p->strand.running_in_this_thread(), ec, std::move(report));
        break;
      }
      case handler_kind::strand_callback:
        p->wake.expires_at(asio::steady_timer::time_point::max());
        // Both on the strand: the handler finds `initiating` set only if it
        // runs inside async_submit, which Asio's contract forbids.
        w->initiating = true;
        s.async_submit(
            request, w->encode_fn,
            asio::bind_cancellation_slot(
                w->signal.slot(), asio::bind_executor(p->strand, [p, w](error_code ec, ferrum::wave_report r) {
                  if (w->initiating)
                    p->run.violation("wave " + std::to_string(w->token) + " completed inside async_submit");
                  p->run.completed(*w, p->strand.running_in_this_thread(), ec, std::move(r));
                  p->wake.cancel();
                })));
        w->initiating = false;
        co_await p->wake.async_wait(asio::as_tuple(asio::use_awaitable));
        break;
      case handler_kind::plain_callback:
        // No executor of its own: it runs on the scheduler's, where nothing
        // could emit a cancellation without racing its delivery, so these
        // waves are never cancelled.
        p->wake.expires_at(asio::steady_timer::time_point::max());
        s.async_submit(request, w->encode_fn, [p, w](error_code ec, ferrum::wave_report r) {
          p->run.completed(*w, p->run.context_.running_here(), ec, std::move(r));
          asio::post(p->strand, [p] { p->wake.cancel(); });
        });
        co_await p->wake.async_wait(asio::as_tuple(asio::use_awaitable));
        break;
    }
    if (w->to == target::healthy && w->ec == errc::all_lanes_quarantined) {
      asio::steady_timer backoff(p->strand, quarantine_backoff);
      co_await backoff.async_wait(asio::as_tuple(asio::use_awaitable));
    }
  }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// --- the run --------------------------------------------------------------------------

contract_run::contract_run(execution_kind& context, contract_options options)
    : context_(context),
      options_(std::move(options)),
      plan_(sched_test::make_plan(contract_nodes, contract_lanes, true)),
      program_(std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(plan_))),
      scheduler_options_{.fence_timeout = fence_timeout, .encoder_tasks = 2},
      lane_owners_(std::make_unique<std::atomic<std::uint64_t>[]>(target_count * contract_buckets * contract_lanes)) {
  REQUIRE(program_->buckets.size() == contract_buckets);
  for (std::size_t b = 0; b < contract_buckets; ++b)
    REQUIRE(program_->buckets[b].id.str() == contract_requests[b].bucket);
  make_plans();
  pick_fault_seeds();
  for (std::size_t t = 0; t < target_count; ++t) {
    devices_[t] = ::test::null_device(device_options_[t]);
    auto made = ferrum::scheduler::create(program_, *devices_[t], context_.executor(), scheduler_options_);
    if (!made) FAIL(made.error().what());
    schedulers_[t] = std::move(*made);
  }
}

contract_run::~contract_run() {
  for (auto& s : schedulers_) s.reset();
  context_.stop();
}

void contract_run::make_plans() {
  static constexpr std::array cancel_types{asio::cancellation_type::terminal, asio::cancellation_type::partial,
                                           asio::cancellation_type::total};
  static constexpr std::array cancel_moments{cancel_at::submit, cancel_at::timer, cancel_at::encoder};
  for (std::size_t p = 0; p < options_.producers; ++p)
    producers_.push_back(std::make_unique<producer>(*this, p, context_.executor()));
  const std::size_t total = options_.producers * options_.waves_per_producer;
  waves_.reserve(total);
  for (std::size_t i = 0; i < total; ++i) {
    auto w = std::make_unique<contract_wave>(*this, i);
    const std::uint64_t h = mix(options_.seed * 0x9e3779b97f4a7c15ull ^ mix(i));
    w->from = producers_[i % options_.producers].get();
    w->to = (h & 1) != 0 ? target::lost : target::healthy;
    w->request = static_cast<std::size_t>((h >> 1) & 1);
    const double u = unit(mix(h ^ 1));
    w->handler = u < 0.45  ? handler_kind::awaitable
                 : u < 0.8 ? handler_kind::strand_callback
                           : handler_kind::plain_callback;
    if (w->handler != handler_kind::plain_callback && unit(mix(h ^ 2)) < options_.cancel_rate) {
      w->cancel = cancel_moments[mix(h ^ 3) % cancel_moments.size()];
      w->cancel_type = cancel_types[mix(h ^ 4) % cancel_types.size()];
      const auto most = static_cast<std::uint64_t>(options_.max_cancel_delay.count());
      w->cancel_delay = std::chrono::microseconds(mix(h ^ 5) % (most + 1));
      w->cancel_node = static_cast<std::size_t>(mix(h ^ 6) % contract_nodes);
    }
    w->from->waves.push_back(w.get());
    waves_.push_back(std::move(w));
  }
}

void contract_run::pick_fault_seeds() {
  // Waves that are never cancelled submit once each (unless every lane of
  // their bucket is quarantined, or the device is lost): a lower bound on
  // each device's submissions; every wave submits at most once.
  std::array<std::uint64_t, target_count> sure{};
  std::array<std::uint64_t, target_count> most{};
  for (const auto& w : waves_) {
    ++most[static_cast<std::size_t>(w->to)];
    if (w->cancel == cancel_at::none) ++sure[static_cast<std::size_t>(w->to)];
  }
  const std::uint64_t h_sure = sure[static_cast<std::size_t>(target::healthy)];
  const std::uint64_t h_most = most[static_cast<std::size_t>(target::healthy)];
  const std::uint64_t l_sure = sure[static_cast<std::size_t>(target::lost)];
  REQUIRE(h_sure >= 100);
  REQUIRE(l_sure >= 100);

  // Healthy: one or two hangs over every submission it may get, the first
  // in the first quarter of those it surely gets (a hang makes waves fail
  // without submitting for a while, so later ones might not be reached).
  ferrum::gpu::null_fault_options& healthy = device_options_[static_cast<std::size_t>(target::healthy)].faults;
  healthy = {
      .hang = 1.0 / static_cast<double>(h_sure), .delay = 0.02, .max_delay = 100us, .hang_duration = hang_duration};
  for (healthy.seed = options_.seed;; ++healthy.seed) {
    int count = 0;
    std::uint64_t first = 0;
    for (std::uint64_t v = 1; v <= h_most && count <= 2; ++v) {
      if (!hangs(healthy, v)) continue;
      if (++count == 1) first = v;
    }
    if (count >= 1 && count <= 2 && first >= h_sure / 10 && first <= h_sure / 4) break;
  }
  // Lost: the device is lost at a submission between 80% and 90% of those
  // it surely gets: late in the run, surely reached.
  ferrum::gpu::null_fault_options& lost = device_options_[static_cast<std::size_t>(target::lost)].faults;
  lost = {.lost = 1.0 / static_cast<double>(l_sure), .delay = 0.02, .max_delay = 100us};
  for (lost.seed = options_.seed;; ++lost.seed) {
    const std::uint64_t v = first_loss(lost, l_sure);
    if (v >= l_sure * 8 / 10 && v <= l_sure * 9 / 10) break;
  }
}

int contract_run::bucket_index(const ferrum::bucket_id& id) const noexcept {
  return stress::bucket_index(*program_, id);
}

void contract_run::violation(std::string message) noexcept { violations_.add(std::move(message)); }

void contract_run::completed(contract_wave& w, bool right_executor, error_code ec,
                             ferrum::wave_report report) noexcept {
  if (w.completions.fetch_add(1) != 0) {
    violation("wave " + std::to_string(w.token) + " completed twice (" + outcome_name(ec) + ")");
    return;
  }
  w.right_executor = right_executor;
  w.ec = ec;
  w.report = std::move(report);
  const ferrum::gpu::null_device& d = device(w.to);
  w.lost_at_completion = d.lost();
  if (w.report.submitted_value != 0)
    w.fence_reached_at_completion = d.queue().timeline().reached(w.report.submitted_value);
  for (const auto& p : w.probed) w.probes_at_completion += p.load(std::memory_order_acquire) ? 1 : 0;
}

void contract_run::producer_done(std::exception_ptr e) noexcept {
  // Notified under the lock: the run may be destroyed as soon as the test
  // thread sees the last one.
  const std::lock_guard lock(mutex_);
  if (e && !producer_error_) producer_error_ = e;
  ++producers_done_;
  changed_.notify_all();
}

void contract_run::hung(const char* what) {
  std::size_t pending = 0;
  for (const auto& w : waves_) pending += w->submitted && w->completions.load() == 0 ? 1 : 0;
  std::fprintf(stderr, "stress[%s]: %s within %lld ms; %zu submitted waves not completed\n", options_.name.c_str(),
               what, static_cast<long long>(options_.drain_limit.count()), pending);
  std::size_t shown = 0;
  for (const auto& w : waves_) {
    if (!w->submitted || w->completions.load() != 0 || ++shown > 20) continue;
    std::fprintf(stderr, "  not completed: wave %llu (scheduler %d, handler %d, cancel %d type %u, encoded %zu)\n",
                 static_cast<unsigned long long>(w->token), static_cast<int>(w->to), static_cast<int>(w->handler),
                 static_cast<int>(w->cancel), static_cast<unsigned>(w->cancel_type), w->encoded_count());
  }
  for (std::size_t t = 0; t < target_count; ++t) {
    for (const auto& pool : schedulers_[t]->pools()) {
      const ferrum::lane_counts c = pool->counts();
      std::fprintf(stderr, "  scheduler %zu %s: lanes %u free %u in_flight %u quarantined %u waiting %zu\n", t,
                   pool->bucket().id.str().c_str(), c.lanes, c.free, c.in_flight, c.quarantined, c.waiting);
    }
  }
  std::fflush(stderr);
  // A scheduler whose waves never end cannot be destroyed.
  std::abort();
}

void contract_run::run_all() {
  started_ = clock_type::now();
  for (auto& p : producers_)
    asio::co_spawn(p->strand, produce(p.get()), [this](std::exception_ptr e) { producer_done(e); });
  {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, options_.drain_limit, [&] { return producers_done_ == producers_.size(); })) {
      lock.unlock();
      hung("the producers did not finish");
    }
  }
  elapsed_ = clock_type::now() - started_;

  // Every wave has been delivered: the shutdowns complete once the
  // quarantined lanes' fences are reached (or their device failed).
  const auto shutting = clock_type::now();
  std::array<std::future<error_code>, target_count> shut;
  for (std::size_t t = 0; t < target_count; ++t) {
    auto done = std::make_shared<std::promise<error_code>>();
    shut[t] = done->get_future();
    schedulers_[t]->async_shutdown([done](error_code ec) { done->set_value(ec); });
  }
  for (std::size_t t = 0; t < target_count; ++t) {
    if (shut[t].wait_for(options_.drain_limit) != std::future_status::ready) hung("async_shutdown did not complete");
    shutdown_ec_[t] = shut[t].get();
    for (const auto& pool : schedulers_[t]->pools()) final_counts_[t].push_back(pool->counts());
    final_stats_[t] = schedulers_[t]->stats();
  }
  shutdown_time_ = clock_type::now() - shutting;
}

}  // namespace stress
