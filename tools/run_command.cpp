#include "run_command.hpp"

#include "ferrum/scheduler/lane_image_placement.hpp"

#include "checking_encoder.hpp"
#include "fence_clock.hpp"
#include "json_output.hpp"
#include "progress_bar.hpp"
#include "read_text_file.hpp"
#include "report_error.hpp"
#include "run_accounting.hpp"
#include "run_report.hpp"
#include "trace_output.hpp"
#include "wave_driver.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/compiled_program_file.hpp"
#include "ferrum/binding/plan_json.hpp"
#include "ferrum/gpu/async_wait.hpp"
#include "ferrum/gpu/null_device.hpp"
#include "ferrum/gpu/vulkan_device.hpp"
#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace ferrum::tools {
namespace {

// Everything a run holds, declared so that it is destroyed in a safe order:
// the scheduler (its waves done) before the checks' kernels and arena its
// lanes' lists refer to, the pool's threads before the device, the device
// (which drops or finishes its work) before the fence clock its host
// functions write.
struct run_resources {
  // First: the scheduler records into it until it goes.
  std::unique_ptr<trace_output> trace;
  std::unique_ptr<fence_clock> completion_times;
  // The scheduler's devices, by index; the null ones too, as such.
  std::vector<std::unique_ptr<gpu::device>> devices;
  std::vector<gpu::null_device*> null_devices;
  std::unique_ptr<boost::asio::thread_pool> pool;
  device_checks checks;
  // The engine's buffers the waves import; after the scheduler, so that
  // they outlive its waves.
  std::optional<run_imports> imports;
  std::unique_ptr<scheduler> waves;
};

// The wave of a checks' self-test (run_command.hpp), 0 for none.
std::uint64_t self_test_wave(const char* variable) {
  const char* value = std::getenv(variable);
  if (value == nullptr) return 0;
  char* end = nullptr;
  const unsigned long long wave = std::strtoull(value, &end, 10);
  return end != value && *end == '\0' ? wave : 0;
}

// The null device's faults for `options`: a delay stays well inside the
// fence timeout (it must not fail a wave by itself), a hang outlasts it five
// times (docs/interfaces.md), so that a hung wave always times out and its
// lane comes back afterwards.
gpu::null_fault_options null_faults(const run_options& options) {
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(options.fence_timeout_ms));
  gpu::null_fault_options faults;
  faults.seed = options.seed;
  faults.lost = options.faults.lost;
  faults.hang = options.faults.hang;
  faults.delay = options.faults.delay;
  faults.max_delay = std::min<std::chrono::microseconds>(std::chrono::milliseconds(1), timeout / 2);
  faults.hang_duration = 5 * timeout;
  return faults;
}

// Blocks until the device has run (or, lost, dropped) every submission, on
// every queue. A wave that timed out has completed, but its submission may
// still be stalled behind a hang, with more queued behind it: only once they
// ran are the counters final, the device's injected faults all counted, and
// the quarantined lanes back.
void await_device_idle(gpu::device& device) {
  for (std::size_t q = 0; q < device.queue_count(); ++q) {
    gpu::queue& queue = device.queue_at(q);
    std::future<void> idle = gpu::async_wait(queue.timeline(), queue.last_submitted(), boost::asio::use_future);
    try {
      idle.get();
    } catch (const boost::system::system_error&) {
      // device_lost or device_shut_down: nothing more runs either way.
    }
  }
}

// Each distinct queue of `device`: the kinds it runs and the nodes of
// `graph` placed on it (queue_placement::plan); submissions are filled in
// after the run.
std::vector<queue_use> queue_uses(const gpu::device& device, const dependency_graph& graph) {
  std::vector<queue_use> uses(device.queue_count());
  for (std::size_t q = 0; q < uses.size(); ++q) uses[q].queue = q;
  // Async compute is listed where the plan uses it.
  for (const queue_kind kind : queue_kinds)
    if (kind != queue_kind::async_compute || graph.uses(kind))
      uses[device.queue(kind).index()].kinds.emplace_back(to_string(kind));
  for (std::size_t n = 0; n < graph.size(); ++n) ++uses[device.queue(graph.queue(n)).index()].nodes;
  return uses;
}

latency_figures latencies(run_tally& tally, bool wake_timed, bool gpu_timed) {
  latency_figures figures;
  figures.wave_p50 = percentile(tally.wave_us, 50);
  figures.wave_p99 = percentile(tally.wave_us, 99);
  figures.fence_wake_measured = wake_timed && !tally.fence_wake_us.empty();
  figures.fence_wake_p50 = percentile(tally.fence_wake_us, 50);
  figures.fence_wake_p99 = percentile(tally.fence_wake_us, 99);
  figures.gpu_measured = gpu_timed;
  figures.gpu_p50 = percentile(tally.gpu_us, 50);
  figures.gpu_p99 = percentile(tally.gpu_us, 99);
  return figures;
}

}  // namespace

exit_code run_run(run_options options, std::ostream& out, std::ostream& err) {
  const auto fail = [&](const command_error& e, exit_code code) {
    report_error(e, options.json, out, err);
    return code;
  };
  if (std::string problem = check_run_options(options); !problem.empty())
    return fail(command_error::usage(std::move(problem)), exit_code::usage_or_io);

  // The cold path, as `ferrum compile` runs it.
  const boost::system::result<std::string> text = read_text_file(options.plan_path);
  if (!text)
    return fail(command_error::io("cannot read '" + options.plan_path + "': " + text.error().message()),
                exit_code::usage_or_io);
  const result<plan> parsed = parse_plan(*text);
  if (!parsed) return fail(command_error::from(parsed.error()), exit_code::plan_rejected);
  // With --program, the saved program instead of a compile: loading checks
  // it against the plan, and any rejection is reported as a rejected plan.
  std::string program_bytes;
  if (!options.program_path.empty()) {
    boost::system::result<std::string> bytes = read_text_file(options.program_path);
    if (!bytes)
      return fail(command_error::io("cannot read '" + options.program_path + "': " + bytes.error().message()),
                  exit_code::usage_or_io);
    program_bytes = std::move(*bytes);
  }
  result<compiled_program> compiled =
      options.program_path.empty()
          ? compile(*parsed)
          : load_compiled_program(std::as_bytes(std::span(program_bytes.data(), program_bytes.size())), *parsed);
  if (!compiled) return fail(command_error::from(compiled.error()), exit_code::plan_rejected);
  const auto program = std::make_shared<const compiled_program>(std::move(*compiled));
  // The engine's images (swapchain images, its textures) are an engine's to
  // name; a run has none of its own to stand in for them.
  for (const compiled_bucket& bucket : program->buckets) {
    // History pairs are the scheduler's, kept across waves whatever lane
    // runs them; this command's checks of what waves leave know none yet.
    if (!bucket.lane.histories.empty()) {
      const history_pair& h = bucket.lane.histories.front();
      const resource_id& current =
          h.image ? bucket.lane.images[h.current].resource : bucket.lane.imports[h.current].resource;
      return fail(command_error::usage("the plan has history resources (" + resource_id::quote(current.view()) +
                                       "), which ferrum run does not run yet"),
                  exit_code::usage_or_io);
    }
    for (const lane_image& image : bucket.lane.images)
      if (image.imported)
        return fail(command_error::usage("image " + resource_id::quote(image.resource.view()) +
                                         " is imported: its waves name an engine's image (a swapchain's), which "
                                         "ferrum run does not make; run the plan in an engine "
                                         "(docs/embedding.md, \"Imported images\")"),
                    exit_code::usage_or_io);
  }

  // Two waves per lane of every bucket of every device: each lane has one
  // running and one ready behind it.
  const std::size_t window = std::max<std::size_t>(2 * program->buckets.size() * program->lanes * options.devices, 1);
  run_resources r;
  r.completion_times = std::make_unique<fence_clock>(std::max<std::size_t>(4096, 8 * window));
  std::vector<gpu::null_fault_options> device_faults;
  for (unsigned d = 0; d < options.devices; ++d) {
    if (options.device != "null") {
      gpu::vulkan_device_options vulkan_options;
      vulkan_options.discrete_layout = options.discrete_layout;
      auto made = gpu::create_vulkan_device(vulkan_options);
      if (!made) return fail(command_error::from(made.error()), exit_code::usage_or_io);
      r.devices.push_back(std::move(*made));
      continue;
    }
    gpu::null_device_options device_options;
    device_options.faults = null_faults(options);
    device_options.reorder_unordered = options.reorder;
    device_options.discrete_layout = options.discrete_layout;
    // Each device fails in its own way.
    device_options.faults.seed = options.seed + d;
    // The device's faults are decided per submission, and the accounting
    // finds each wave's by its fence value: that takes one submission per
    // wave. A wave on two queues makes several (run_accounting.hpp), so with
    // device faults every kind runs on one queue, as on lavapipe; transfer
    // nodes still record only copies, and `queues` in the report shows it.
    // A plan with async-compute nodes gets that queue its own worker.
    const bool device_faults_asked = options.faults.delay > 0 || options.faults.hang > 0 || options.faults.lost > 0;
    const bool async = program->dependencies.uses(queue_kind::async_compute);
    if (async) device_options.queues = 3;
    if (device_faults_asked && (program->dependencies.uses_transfer() || async)) device_options.queues = 1;
    auto made = gpu::null_device::create(device_options);
    if (!made) return fail(command_error::from(made.error()), exit_code::usage_or_io);
    r.null_devices.push_back(made->get());
    r.devices.push_back(std::move(*made));
    device_faults.push_back(device_options.faults);
  }
  std::vector<gpu::device*> devices;
  std::vector<const gpu::device*> device_views;
  for (const auto& d : r.devices) {
    devices.push_back(d.get());
    device_views.push_back(d.get());
  }
  gpu::device& first_device = *r.devices.front();
  // Only the null device runs host functions (the fence clock's).
  fence_clock* completion_times = !r.null_devices.empty() ? r.completion_times.get() : nullptr;

  auto trace = trace_output::open(options, trace_spans_for(options.waves, program->node_count, options.gpu_timestamps));
  if (!trace) return fail(command_error::io(trace.error()), exit_code::usage_or_io);
  r.trace = std::move(*trace);

  r.pool = std::make_unique<boost::asio::thread_pool>(options.threads);
  scheduler_options scheduler_settings;
  scheduler_settings.trace = r.trace ? &r.trace->recorder : nullptr;
  scheduler_settings.fence_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(options.fence_timeout_ms));
  scheduler_settings.encoder_tasks = options.threads;
  scheduler_settings.gpu_timestamps = options.gpu_timestamps;
  scheduler_settings.split_barriers = options.split_barriers;
  // The driver keeps `window` waves submitted and submits the next from a
  // completion on its one thread, while each executor thread may be ending
  // a wave's coroutine: no wave or frame is made after warm-up.
  scheduler_settings.reserved_waves = window + 1 + options.threads;
  // Every node on its plan queue: the checks record no dispatch in a
  // transfer node, and follow the dependency graph (checking_encoder.hpp).
  scheduler_settings.queues = queue_placement::plan;
  auto made = scheduler::create(program, devices, r.pool->get_executor(), scheduler_settings);
  if (!made)
    return fail(command_error::from(made.error()),
                made.error() == errc::no_binding_layout ? exit_code::plan_rejected : exit_code::usage_or_io);
  r.waves = std::move(*made);
  auto imports = run_imports::create(first_device, *program);
  if (!imports) return fail(command_error::from(imports.error()), exit_code::usage_or_io);
  r.imports = std::move(*imports);
  if (!r.imports->buffers().empty() && devices.size() != 1)
    return fail(command_error::usage("a plan with imported resources runs on one device: drop --devices"),
                exit_code::usage_or_io);
  for (std::size_t d = 0; d < devices.size(); ++d) {
    auto checks =
        wave_checks::create(*devices[d], d, *parsed, *r.waves, completion_times, &*r.imports,
                            {self_test_wave(corrupt_wave_variable), self_test_wave(corrupt_workspace_wave_variable)});
    if (!checks) return fail(command_error::from(checks.error()), exit_code::usage_or_io);
    r.checks.push_back(std::move(*checks));
  }

  run_accounting accounting(device_views, device_faults, completion_times, options.waves, options.gpu_timestamps,
                            program.get());
  wave_driver driver(*r.waves, r.checks, accounting,
                     {options.waves, window, options.faults, options.seed, r.imports->buffers()});
  // Queue use is the first device's: every device is of one kind.
  std::vector<queue_use> queues = queue_uses(first_device, program->dependencies);
  // Every device's submissions to queue q (each has the first one's queues).
  const auto submitted_to = [&](std::size_t q) {
    std::uint64_t total = 0;
    for (gpu::device* d : devices) total += d->queue_at(q).last_submitted();
    return total;
  };
  std::vector<std::uint64_t> submitted_before;
  for (const queue_use& q : queues) submitted_before.push_back(submitted_to(q.queue));
  std::vector<std::uint64_t> device_submitted_before;
  for (gpu::device* d : devices) device_submitted_before.push_back(d->queue().last_submitted());
  const auto started = std::chrono::steady_clock::now();
  {
    progress_bar bar(options.waves);
    driver.run([&bar](std::uint64_t completed) { bar.update(completed); });
  }
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - started;
  for (gpu::device* d : devices) await_device_idle(*d);

  // Every wave completed, the scheduler shut down and the devices are idle:
  // the GPU wrote its last counter and the devices injected their last
  // fault.
  gpu::fault_counts injected;
  for (const gpu::null_device* d : r.null_devices) {
    const gpu::fault_counts one = d->injected_faults();
    injected.delay += one.delay;
    injected.hang += one.hang;
    injected.lost += one.lost;
  }
  accounting.settle(injected);
  gpu::image_layout_report layouts;
  for (const gpu::null_device* d : r.null_devices) {
    const gpu::image_layout_report one = d->image_layout_errors();
    layouts.count += one.count;
    layouts.first.insert(layouts.first.end(), one.first.begin(), one.first.end());
  }
  run_summary summary;
  summary.plan_path = options.plan_path;
  summary.plan_hash = program->hash.str();
  summary.device_kind = std::string(first_device.kind());
  summary.discrete_layout = options.discrete_layout;
  summary.device_name = first_device.name();
  summary.requested = options.waves;
  summary.threads = options.threads;
  summary.seed = options.seed;
  summary.fence_timeout_ms = options.fence_timeout_ms;
  summary.seconds = elapsed.count();
  summary.buckets = program->buckets.size();
  summary.lanes_per_bucket = program->lanes;
  summary.max_in_flight = r.waves->stats().max_in_flight;
  for (const auto& pool : r.waves->pools()) summary.quarantined += pool->counts().quarantined;
  summary.steady_waves = driver.steady_waves();
  summary.allocations_per_wave = summary.steady_waves == 0 ? 0.0
                                                           : static_cast<double>(driver.steady_allocations()) /
                                                                 static_cast<double>(summary.steady_waves);
  summary.violations = violations(r.checks);
  summary.image_layout_errors = layouts.count;
  if (!layouts.first.empty()) summary.first_image_layout_error = layouts.first.front();
  // Every device's buckets are the same: the first device's describe them.
  const wave_checks& checks = *r.checks.front();
  for (std::size_t b = 0; b < r.waves->pools(0).size(); ++b) {
    bucket_memory& m = summary.memory.emplace_back(bucket_memory_of(
        *parsed, *program, r.waves->pools(0)[b]->bucket(), checks.checked_per_wave(b), checks.unchecked_per_wave(b)));
    // Every lane of the bucket was made with this placement, so it cannot
    // fail now: a bucket whose images a device refuses made no lane.
    if (auto images = lane_image_placement(r.waves->pools(0)[b]->bucket(), first_device); images) {
      m.image_bytes = images->bytes;
      m.unaliased_image_bytes = images->unaliased_bytes;
    }
    for (std::size_t d = 0; d < r.waves->device_count(); ++d) {
      const lane_counts c = r.waves->pools(d)[b]->counts();
      m.lanes_made += c.lanes;
      m.made_bytes += c.bytes;  // buffers and image memory
    }
  }
  summary.v2 = parsed->format == plan_format::v2;
  if (summary.v2) {
    // Every submission takes its queue's next timeline value.
    for (queue_use& q : queues) q.submissions = submitted_to(q.queue) - submitted_before[q.queue];
    summary.queues = std::move(queues);
  }
  summary.unchecked = checks.unchecked();
  if (devices.size() > 1) {
    for (std::size_t d = 0; d < devices.size(); ++d) {
      device_use u;
      u.name = devices[d]->name();
      u.waves = accounting.tally().devices[d];
      u.submissions = devices[d]->queue().last_submitted() - device_submitted_before[d];
      u.lost = devices[d]->lost();
      for (const auto& pool : r.waves->pools(d)) u.quarantined += pool->counts().quarantined;
      summary.devices.push_back(std::move(u));
    }
  }
  summary.tally = accounting.tally();
  summary.latency = latencies(summary.tally, completion_times != nullptr, options.gpu_timestamps);
  for (std::size_t b = 0; b < summary.tally.bucket_gpu.size(); ++b)
    if (summary.tally.bucket_gpu[b].waves != 0)
      summary.gpu_paths.push_back(gpu_path_of(*program, program->buckets[b], *parsed, summary.tally.bucket_gpu[b]));
  if (r.trace) {
    if (std::string problem = r.trace->write(*parsed); !problem.empty())
      return fail(command_error::io(std::move(problem)), exit_code::usage_or_io);
    summary.trace_path = options.trace_path;
    summary.timeline_path = options.timeline_path;
    summary.trace_spans = r.trace->recorder.kept();
    summary.trace_dropped = r.trace->recorder.dropped();
  }

  if (options.json) {
    write_json(out, run_json(summary));
  } else {
    write_run_summary(out, summary);
  }
  out << std::flush;
  if (std::string why = run_failure(summary); !why.empty()) {
    err << error_line(command_error{"run_failed", std::move(why), {}}) << '\n' << std::flush;
    return exit_code::run_failed;
  }
  return exit_code::ok;
}

}  // namespace ferrum::tools
