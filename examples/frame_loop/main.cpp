// examples/frame_loop/main.cpp — ferrum's main example: an engine-style frame
// loop. Every frame is one submission wave of passes over the plan's images
// (an animated HDR pattern, a lit torus drawn over it by the engine's graphics
// pipeline, a box blur as a horizontal then a vertical pass, a tone map) and
// a copy of the frame to the host, with as
// many frames in flight as the plan has lanes (three). The images are in the
// memory the scheduler makes for each lane, which puts each in the layout
// its pass needs; images whose passes do not overlap share memory (interval
// liveness), and the summary says how much that saves. The last frame drawn
// is checked per pixel against the host (frame_check.hpp: the draw's color
// and depth before the blur and tone map, then the post-processing of that
// color; the summary is printed only once every check passed) and written
// as a PNG; the
// waves' trace goes out as Chrome trace JSON and as an SVG timeline. Each
// lane records its passes once and replays them (scheduler_options::replay):
// later frames only write the pattern's and the draw's parameters into their slots.
// With GPU timestamps the summary gives each pass's GPU time, and the
// frame's critical path through them with what a second queue could save
// (its passes are a chain: nothing).
//
// With --present (frame_presenter.hpp) the frames are shown in a window:
// each frame acquires a swapchain image (in frame order) and its wave
// imports it as the plan's image/present: the wave waits on the image's
// acquisition, copies the frame into it, leaves it in present-src and
// signals it presentable, and the frame is presented, in frame order, once
// its wave completed. A lane that meets another swapchain image than its
// last wave's records its lists afresh. With --overlay (frame_overlay.hpp)
// a Dear ImGui window is drawn over each presented frame by a node of its
// wave, showing the numbers the summary prints, live.
//
// Lanes are made when a frame first needs them (lane_making::when_needed),
// so a run holds only its own bucket's. With --resize-at N WxH, frames from
// N on are WxH: a plan for that size is compiled, and its kernels made, on a
// background thread while frames go on, then swapped in
// (scheduler::async_replace); frames from N on run on it, the frames before
// finish on the old one, whose lanes then go.
//
//   ferrum_frame_loop                          # 300 frames on Vulkan (a GPU, or lavapipe)
//   ferrum_frame_loop --device null --frames 60 --out /tmp/frames
//   ferrum_frame_loop --frames 120 --resize-at 60 640x360
//   ferrum_frame_loop --present --frames 600 --resize-at 300 640x360
//   ferrum_frame_loop --present --overlay --width 640 --height 360
//
// The parts: frame_loop.json (the plan: nodes, the pattern's parameter slot,
// the images and their pools, three lanes), frame_plan.hpp (the plan made
// for the frame's size, and for presenting), frame_renderer.hpp (kernels,
// the images' layout and why, the encoder),
// frame_kernels.hpp and shaders/ (the passes), frame_loop_options.hpp (the
// command line), frame_presenter.hpp (--present), frame_overlay.hpp
// (--overlay), png_writer.hpp,
// screenshot_compare.hpp (--compare-screenshot, for the screenshot test).
#include "frame_loop_options.hpp"
#include "frame_overlay.hpp"
#include "frame_plan.hpp"
#include "frame_presenter.hpp"
#include "frame_renderer.hpp"
#include "png_writer.hpp"
#include "screenshot_compare.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/critical_path.hpp"
#include "ferrum/binding/plan_json.hpp"
#include "ferrum/gpu/null_device.hpp"
#include "ferrum/gpu/vulkan_device.hpp"
#include "ferrum/scheduler/async_acquire.hpp"
#include "ferrum/scheduler/scheduler.hpp"
#include "ferrum/scheduler/trace.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace {

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;

// The exit status of a run skipped for want of a Vulkan driver (ctest's
// SKIP_RETURN_CODE in CMakeLists.txt).
constexpr int exit_skipped = 77;
// The largest difference, per 8-bit channel, allowed between the window's
// screenshot and the host's frame away from the torus's edges
// (--compare-screenshot): sin and exp may differ in their last bits on a GPU.
constexpr int allowed_difference = 2;

// Counts the validation layers' messages (on any thread) and prints them.
struct validation_log {
  std::atomic<int> messages{0};
  static void record(void* context, const ferrum::gpu::vulkan_message& m) noexcept {
    static_cast<validation_log*>(context)->messages.fetch_add(1);
    std::cerr << "frame_loop: vulkan " << (m.error ? "error: " : "warning: ") << m.text << '\n';
  }
};

// `surface_extensions`: --present's (presentation on); empty otherwise.
ferrum::result<std::unique_ptr<ferrum::gpu::device>> make_device(const frame_loop::options& o, validation_log& log,
                                                                 const std::vector<std::string>& surface_extensions) {
  if (o.device == "null") {
    ferrum::gpu::null_device_options options;
    options.discrete_layout = o.discrete_layout;
    auto made = ferrum::gpu::null_device::create(options);
    if (!made) return made.error();
    return std::unique_ptr<ferrum::gpu::device>(std::move(*made));
  }
  ferrum::gpu::vulkan_device_options options;
  options.discrete_layout = o.discrete_layout;
  options.validation = o.validate;
  options.sink = &validation_log::record;
  options.sink_context = &log;
  if (!surface_extensions.empty()) {
    options.instance_extensions = surface_extensions;
    options.presentation = true;
  }
  return ferrum::gpu::create_vulkan_device(options);
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in || !text) throw std::runtime_error("cannot read '" + path.string() + "'");
  return std::move(text).str();
}

// Writes a file with `write(stream)`, or throws saying which file failed.
template <class Write>
void write_file(const std::filesystem::path& path, Write write) {
  std::ofstream out(path, std::ios::binary);
  write(out);
  out.close();
  if (!out) throw std::runtime_error("cannot write '" + path.string() + "'");
}

double milliseconds_since(clock_type::time_point since) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - since).count();
}

// --resize-at: the new size's plan and kernels, made on a background thread
// when the first frame at the new size is due, then swapped in on the
// completions' thread. Frames at the new size wait for the swap.
struct frame_resize {
  std::uint64_t at = 0;  // the first frame at the new size
  frame_loop::image_size size;
  std::optional<ferrum::image_format> present;  // --present: the swapchain's format
  std::thread maker;
  // Made by `maker`, or why they could not be.
  std::shared_ptr<const ferrum::compiled_program> program;
  std::optional<frame_loop::frame_renderer> renderer;
  std::string failure;
  double make_ms = 0;
  // On the completions' thread: requested (a frame at the new size was
  // due), made (the maker is done), swapped (frames at the new size may
  // go), the old program gone; and the frames before `at` whose waves were
  // submitted: the swap waits for all of them (with --present a frame's
  // submission waits for its image, so it may come after the next frames
  // asked for the new size).
  bool requested = false;
  bool made = false;
  bool swapped = false;
  std::uint64_t submitted_before = 0;
  bool replaced = false;
  clock_type::time_point requested_at;
  double first_frame_ms = 0;  // from the request to the first frame at the new size completed
  std::uint32_t lanes_before = 0;
  std::uint64_t bytes_before = 0;
  std::uint32_t lanes_after = 0;
  std::uint64_t bytes_after = 0;
  std::optional<asio::steady_timer> swap_done;  // cancelled at the swap, waking the frames that wait

  ~frame_resize() {
    if (maker.joinable()) maker.join();
  }
};

// What the frame chains share; only the io_context's thread touches it.
struct frame_loop_run {
  ferrum::scheduler* scheduler;
  const frame_loop::frame_renderer* renderer;
  std::uint64_t frames;
  std::uint64_t in_flight;
  std::vector<double> frame_ms;                  // per frame: submit to completion
  std::vector<double> gpu_ms;                    // per frame with GPU timestamps: first pass begin to last pass end
  std::vector<std::vector<double>> node_gpu_ms;  // per node, per frame with GPU timestamps: its pass
  // The wave submitted last, and its frame: no later wave ran on its lane,
  // whose output still holds what it drew. Mostly the last frame; frames of
  // different chains may be submitted out of frame order (after a resize,
  // when every chain resumes at once).
  ferrum::wave_report last{};
  std::uint64_t last_frame = 0;
  std::string failure{};  // the first frame that failed, and why
  frame_resize* resize = nullptr;
  // --present: frames acquire their swapchain images in frame order (frame
  // `next_acquire`'s turn) and are presented in frame order (`presented`
  // so far; completed frames wait in `to_present`). `turn` never expires:
  // cancelling it wakes every chain waiting for its turn, which looks again.
  frame_loop::frame_presenter* presenter = nullptr;
  std::optional<asio::steady_timer> turn{};
  std::uint64_t next_acquire = 0;
  std::uint64_t presented = 0;
  std::map<std::uint64_t, ferrum::gpu::swapchain_image> to_present{};
  // --overlay: what it draws with, its names of the passes, and the latest
  // frames' completions (when, and submit to completion) for its numbers.
  const frame_loop::frame_overlay* overlay = nullptr;
  std::vector<std::string> pass_names{};
  struct completion {
    clock_type::time_point at;
    double frame_ms;
  };
  std::deque<completion> recent{};
};

// A pass's name: its node's id without "node/".
std::string_view pass_name(const ferrum::plan_node& n) {
  const std::string_view id = n.id.view();
  return id.substr(id.find('/') + 1);
}

// Frames the overlay's numbers are taken over, at most: about a second at
// lavapipe's rate, a fraction of one on a GPU.
constexpr std::size_t overlay_window = 64;

double percentile(std::vector<double> values, double p);

// The median of the latest `overlay_window` of `values` (0 when none).
double recent_p50(const std::vector<double>& values) {
  const std::size_t from = values.size() > overlay_window ? values.size() - overlay_window : 0;
  return values.empty() ? 0.0 : percentile({values.begin() + static_cast<std::ptrdiff_t>(from), values.end()}, 50);
}

// The numbers --overlay shows on the next frame submitted: the summary's,
// over the latest frames completed.
std::shared_ptr<const frame_loop::overlay_numbers> overlay_numbers_now(const frame_loop_run& run) {
  auto numbers = std::make_shared<frame_loop::overlay_numbers>();
  const ferrum::scheduler_stats stats = run.scheduler->stats();
  numbers->in_flight = stats.in_flight;
  numbers->lanes = stats.lanes;
  numbers->lane_mib = static_cast<double>(stats.lane_bytes) / (1024.0 * 1024.0);
  if (run.recent.size() >= 2) {
    const std::chrono::duration<double> span = run.recent.back().at - run.recent.front().at;
    if (span.count() > 0) numbers->frames_per_second = static_cast<double>(run.recent.size() - 1) / span.count();
  }
  std::vector<double> frame_ms;
  for (const frame_loop_run::completion& c : run.recent) frame_ms.push_back(c.frame_ms);
  numbers->frame_ms = recent_p50(frame_ms);
  numbers->gpu_ms = recent_p50(run.gpu_ms);
  for (std::size_t n = 0; n < run.node_gpu_ms.size() && n < run.pass_names.size(); ++n)
    numbers->passes.push_back({run.pass_names[n], recent_p50(run.node_gpu_ms[n])});
  return numbers;
}

// Wakes the chains waiting for their turn (a frame acquired, presented, or
// failed), and once the run failed, those waiting for the resize's swap
// (when its maker is done; otherwise the swap wakes them).
void wake(frame_loop_run* run) {
  if (run->turn) run->turn->cancel();
  frame_resize* r = run->resize;
  if (!run->failure.empty() && r != nullptr && r->made && !r->swapped) {
    r->maker.join();
    r->swapped = true;
    r->swap_done->cancel();
  }
}

// Frame `frame`'s swapchain image, acquired in its turn; at --resize-at's
// frame, once every frame before it was presented, the window and the
// swapchain are resized first. None when the run failed meanwhile.
asio::awaitable<std::optional<ferrum::gpu::swapchain_image>> acquire_image(frame_loop_run* run, std::uint64_t frame) {
  while (run->failure.empty() && run->next_acquire != frame)
    co_await run->turn->async_wait(asio::as_tuple(asio::use_awaitable));
  // The swapchain is recreated by the next acquisition: no image of the old
  // one may still wait to be presented.
  if (run->resize != nullptr && frame == run->resize->at) {
    while (run->failure.empty() && run->presented != frame)
      co_await run->turn->async_wait(asio::as_tuple(asio::use_awaitable));
    if (run->failure.empty()) run->presenter->resize(run->resize->size);
  }
  if (!run->failure.empty()) co_return std::nullopt;
  auto [ec, image] = co_await run->presenter->swapchain().async_acquire(asio::as_tuple(asio::use_awaitable));
  ++run->next_acquire;
  wake(run);
  if (ec) {
    if (run->failure.empty())
      run->failure = "frame " + std::to_string(frame) +
                     ": acquiring a swapchain image: " + ferrum::error_code_name(ec) + ": " + ec.message();
    co_return std::nullopt;
  }
  co_return image;
}

// Presents the completed frame `frame` and those after it that completed
// already, in frame order (completions may come out of it). Presenting in
// the wave's completion, not as soon as it is submitted: present() must
// come after the submission of the wave that signals the image presentable,
// and async_submit tells the example nothing between its call and its
// completion (after the wave's fence). It costs the window up to a frame of
// latency, not throughput: the next frames are in flight on the GPU
// meanwhile, and the lanes still bound them.
void present_in_order(frame_loop_run* run, std::uint64_t frame, const ferrum::gpu::swapchain_image& image) {
  run->to_present.emplace(frame, image);
  while (run->failure.empty() && !run->to_present.empty() && run->to_present.begin()->first == run->presented) {
    try {
      run->presenter->present(run->to_present.begin()->second);
    } catch (const std::exception& e) {
      run->failure = "frame " + std::to_string(run->presented) + ": presenting: " + e.what();
    }
    run->to_present.erase(run->to_present.begin());
    ++run->presented;
  }
  if (run->presenter->closed() && run->failure.empty()) run->failure = "the window was closed";
  wake(run);
}

// Called on the completions' thread once the maker is done and every frame
// before the new size was submitted (or the run failed): the new program
// replaces the old (frames submitted from here on run on it), and the
// frames that wait go.
void swap_in(frame_loop_run* run, asio::io_context& completions) {
  frame_resize& r = *run->resize;
  if (r.swapped || !r.made || (r.submitted_before != r.at && run->failure.empty())) return;
  r.maker.join();
  if (!run->failure.empty()) {
    // Nothing more runs: only the frames that wait are woken.
  } else if (!r.failure.empty()) {
    run->failure =
        "resizing to " + std::to_string(r.size.width) + "x" + std::to_string(r.size.height) + ": " + r.failure;
  } else {
    const ferrum::scheduler_stats before = run->scheduler->stats();
    r.lanes_before = before.lanes;
    r.bytes_before = before.lane_bytes;
    run->scheduler->async_replace(r.program, asio::bind_executor(completions, [run](boost::system::error_code ec) {
                                    frame_resize& done = *run->resize;
                                    if (ec && run->failure.empty())
                                      run->failure = "replacing the program: " + ferrum::error_code_name(ec);
                                    const ferrum::scheduler_stats after = run->scheduler->stats();
                                    done.lanes_after = after.lanes;
                                    done.bytes_after = after.lane_bytes;
                                    done.replaced = true;
                                  }));
  }
  r.swapped = true;
  r.swap_done->cancel();
}

// Starts making the new size's plan and kernels on a background thread.
void request_resize(frame_loop_run* run, asio::io_context& completions, ferrum::gpu::device& device,
                    const ferrum::plan& base) {
  frame_resize& r = *run->resize;
  r.requested = true;
  r.requested_at = clock_type::now();
  r.maker = std::thread([run, &completions, &device, &base] {
    frame_resize& job = *run->resize;
    try {
      const auto started = clock_type::now();
      const ferrum::plan p = frame_loop::plan_for_size(
          base, job.size, job.present, frame_loop::frame_renderer::draws_natively(device), run->overlay != nullptr);
      job.program = std::make_shared<const ferrum::compiled_program>(ferrum::compile(p).value());
      job.renderer.emplace(device, p, *job.program, job.size, run->renderer->order(), run->overlay);
      job.make_ms = milliseconds_since(started);
    } catch (const std::exception& e) {
      job.failure = e.what();
    }
    asio::post(completions, [run, &completions] {
      run->resize->made = true;
      swap_in(run, completions);
    });
  });
}

// Frames first, first + in_flight, ...: each is submitted when the one before
// it completed, so `in_flight` chains keep that many frames in flight.
// g++ 12 sees Asio's frame allocation (aligned_alloc, inlined from
// awaitable_frame_base::operator new) but not its matching operator delete
// and reports a mismatch that is not there (tests/stress/asio_contract_run.cpp):
// silenced for this one coroutine.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
asio::awaitable<void> frame_chain(frame_loop_run* run, std::uint64_t first, asio::io_context* completions,
                                  ferrum::gpu::device* device, const ferrum::plan* base) {
  for (std::uint64_t frame = first; frame < run->frames && run->failure.empty(); frame += run->in_flight) {
    const frame_loop::frame_renderer* renderer = run->renderer;
    frame_resize* resize = run->resize;
    if (resize != nullptr && frame >= resize->at) {
      if (!resize->requested) request_resize(run, *completions, *device, *base);
      if (!resize->swapped) co_await resize->swap_done->async_wait(asio::as_tuple(asio::use_awaitable));
      if (!run->failure.empty()) co_return;
      renderer = &*resize->renderer;
    }
    ferrum::wave_request request = renderer->request();
    // --present: the wave imports its acquired image as image/present
    // (contents undefined: the frame overwrites them), waits for its
    // acquisition before the copy into it (the passes before it may run),
    // and signals it presentable at its end; a wave that fails still passes
    // both on.
    std::optional<ferrum::gpu::swapchain_image> image;
    std::array<ferrum::imported_image, 1> present{};
    std::array<ferrum::gpu::semaphore_op, 1> wait{};
    std::array<ferrum::gpu::semaphore_op, 1> signal{};
    if (run->presenter != nullptr) {
      image = co_await acquire_image(run, frame);
      if (!image) co_return;
      present = {{{"image/present", image->image, ferrum::image_layout::undefined}}};
      wait = {{{image->acquired, 0, ferrum::gpu::sync_stage::transfer}}};
      signal = {{{image->presentable, 0, ferrum::gpu::sync_stage::all}}};
      request.images = present;
      request.wait = wait;
      request.signal = signal;
    }
    frame_loop::frame_encoder encode{renderer, frame};
    if (run->overlay != nullptr) encode.numbers = overlay_numbers_now(*run);
    // The last frame at the old size lets the swap go, once this wave is
    // submitted (the post runs after the co_await below initiated it).
    if (resize != nullptr && frame < resize->at && ++resize->submitted_before == resize->at)
      asio::post(*completions, [run, completions] { swap_in(run, *completions); });
    const auto submitted = clock_type::now();
    // Completes after the frame's fence, its lane back in the pool.
    auto [ec, report] = co_await run->scheduler->async_submit(request, encode, asio::as_tuple(asio::use_awaitable));
    if (ec) {
      run->failure = "frame " + std::to_string(frame) + " failed: " + ferrum::error_code_name(ec) + ": " +
                     ec.message() + (report.message.empty() ? "" : " (" + report.message + ")");
      wake(run);
      co_return;
    }
    run->frame_ms[frame] = milliseconds_since(submitted);
    if (run->overlay != nullptr) {
      run->recent.push_back({clock_type::now(), run->frame_ms[frame]});
      if (run->recent.size() > overlay_window) run->recent.pop_front();
    }
    if (image) present_in_order(run, frame, *image);
    if (resize != nullptr && frame == resize->at) resize->first_frame_ms = milliseconds_since(resize->requested_at);
    if (report.gpu)
      run->gpu_ms.push_back(std::chrono::duration<double, std::milli>(report.gpu->end - report.gpu->begin).count());
    // The per-pass GPU times are the wave's memory, gone once it is reused.
    if (run->node_gpu_ms.size() < report.gpu_nodes.size()) run->node_gpu_ms.resize(report.gpu_nodes.size());
    for (std::size_t n = 0; n < report.gpu_nodes.size(); ++n)
      run->node_gpu_ms[n].push_back(
          std::chrono::duration<double, std::milli>(report.gpu_nodes[n].end - report.gpu_nodes[n].begin).count());
    report.gpu_nodes = {};
    if (report.wave > run->last.wave) {
      run->last = std::move(report);
      run->last_frame = frame;
    }
  }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

double mebibytes(std::uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

// The summary's `gpu path` line: the frame's critical path through `bucket`'s
// data dependencies with each pass's median GPU time (over every frame: both
// sizes after a resize), and the most a second queue could save
// (ferrum/binding/critical_path.hpp).
void write_gpu_path(std::ostream& out, const ferrum::compiled_program& program, const ferrum::compiled_bucket& bucket,
                    const frame_loop_run& run) {
  std::vector<std::uint64_t> pass_ns;
  for (const std::vector<double>& ms : run.node_gpu_ms)
    pass_ns.push_back(ms.empty() ? 0 : static_cast<std::uint64_t>(std::llround(percentile(ms, 50) * 1e6)));
  const ferrum::critical_path cp =
      ferrum::find_critical_path(ferrum::derive_data_dependencies(bucket.lane, program.dependencies), pass_ns);
  out << std::setprecision(2) << "gpu path:   critical path " << static_cast<double>(cp.critical_path_ns) / 1e6
      << " ms of " << static_cast<double>(cp.serial_ns) / 1e6 << " ms serial (passes";
  for (std::size_t k = 0; k < cp.path.size(); ++k)
    out << (k == 0 ? " " : " -> ") << (cp.path[k] < run.pass_names.size() ? run.pass_names[cp.path[k]] : "?");
  out << "); a second queue could save at most " << static_cast<double>(cp.async_bound_ns) / 1e6 << " ms ("
      << std::lround(cp.serial_ns == 0
                         ? 0.0
                         : 100.0 * static_cast<double>(cp.async_bound_ns) / static_cast<double>(cp.serial_ns))
      << "%)\n"
      << std::setprecision(1);
}

// The edges of a host_frame as a PNG's pixels: white where an edge reaches.
std::vector<std::byte> edge_pixels(const frame_loop::host_frame& frame) {
  std::vector<std::byte> rgba(frame.edges.size() * 4);
  for (std::size_t p = 0; p < frame.edges.size(); ++p) {
    const auto value = std::byte{frame.edges[p] != 0 ? std::uint8_t{255} : std::uint8_t{0}};
    rgba[p * 4] = rgba[p * 4 + 1] = rgba[p * 4 + 2] = value;
    rgba[p * 4 + 3] = std::byte{255};
  }
  return rgba;
}

double percent(std::size_t part, std::size_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

// Runs the frames and checks the last; its summary goes to `summary`, which
// main prints only once every check passed (the validation layers' too).
int run(const frame_loop::options& o, validation_log& log, std::ostream& summary) {
  const ferrum::plan base = ferrum::parse_plan(read_file(o.plan)).value();

  const char* required = std::getenv("FERRUM_REQUIRE_VULKAN");
  const bool skip_without_vulkan = required == nullptr || std::string_view(required) != "1";
  // --present: GLFW first, for the instance extensions its surfaces need;
  // none when no Vulkan driver offers surfaces.
  std::optional<frame_loop::glfw_session> glfw;
  std::vector<std::string> surface_extensions;
  if (o.present) {
    glfw.emplace();
    surface_extensions = glfw->instance_extensions();
    if (surface_extensions.empty()) {
      if (skip_without_vulkan) {
        std::cerr << "frame_loop: skipped: no Vulkan driver makes window surfaces (GLFW finds no surface "
                     "extensions); --device null runs on the CPU, without --present\n";
        return exit_skipped;
      }
      throw std::runtime_error("--present: no Vulkan driver makes window surfaces (GLFW finds no surface extensions)");
    }
  }
  auto made = make_device(o, log, surface_extensions);
  if (!made) {
    if (made.error() == ferrum::errc::vulkan_unavailable && skip_without_vulkan) {
      std::cerr << "frame_loop: skipped: no usable Vulkan driver (" << made.error().what()
                << "); --device null runs on the CPU\n";
      return exit_skipped;
    }
    throw ferrum::error_exception(made.error());
  }
  // Declared so that they go in a safe order: the scheduler (every wave
  // done, then its lanes and their memory) before the kernels its lanes'
  // lists used (the resize's too), the threads before the device; the
  // swapchain (which waits for its frames) after the scheduler, before the
  // device.
  const std::unique_ptr<ferrum::gpu::device> device = std::move(*made);
  asio::thread_pool workers(2);
  // --present: the window, its swapchain at the frame size (an acquisition
  // per frame in flight), whose byte order the tone map writes.
  std::optional<frame_loop::frame_presenter> presenter;
  if (o.present) presenter.emplace(*glfw, *device, o.size, base.lanes);
  const std::optional<ferrum::image_format> present_format =
      presenter ? std::optional(presenter->format()) : std::nullopt;
  // --overlay: ImGui over the window's images (a context per lane, made
  // with the lane; the scheduler's lanes go before it).
  std::optional<frame_loop::frame_overlay> overlay;
  if (o.overlay) overlay.emplace(*device, *present_format);
  // Cold path, once: the plan for the frame's size (and the window's image)
  // compiled into its layouts.
  const ferrum::plan plan = frame_loop::plan_for_size(base, o.size, present_format,
                                                      frame_loop::frame_renderer::draws_natively(*device), o.overlay);
  const auto program = std::make_shared<const ferrum::compiled_program>(ferrum::compile(plan).value());
  const frame_loop::frame_renderer renderer(*device, plan, *program, o.size,
                                            presenter ? presenter->order() : frame_loop::channel_order::rgba,
                                            overlay ? &*overlay : nullptr);
  asio::io_context completions;
  frame_resize resize;
  if (o.resize_at) {
    resize.at = *o.resize_at;
    resize.size = o.resize_to;
    resize.present = present_format;
    resize.swap_done.emplace(completions, asio::steady_timer::time_point::max());
  }
  // GPU time per pass where the device has timestamps.
  const ferrum::gpu::timestamp_clock gpu_clock = device->timestamps();
  const bool gpu_timed = o.gpu_timestamps && gpu_clock.supported;
  // A ring: the spans of the last (up to) 1000 frames (a GPU span per pass
  // too when timed).
  ferrum::trace_recorder trace(std::min<std::uint64_t>(o.frames, 1000) *
                               (ferrum::wave_phase_count + program->node_count * (gpu_timed ? 2 : 1)));
  // Replay: a lane's passes are recorded by its first frame and submitted
  // again by its later frames, which only write the pattern's parameters
  // (not with --overlay: ImGui's draws change every frame).
  // The fence timeout is long because a frame's fence may wait for every
  // frame in flight, and lavapipe, one submission at a time on the CPU,
  // takes seconds for each 1920x1080 frame; it still catches a hung GPU.
  // Lanes made when needed: the run holds its own bucket's alone. With
  // --present a lane records afresh when its wave imports another
  // swapchain image than the lane's last wave did.
  ferrum::scheduler_options settings{.fence_timeout = std::chrono::seconds(60),
                                     .encoder_tasks = 2,
                                     .replay = renderer.replayable(),
                                     .gpu_timestamps = gpu_timed,
                                     .make_lanes = ferrum::lane_making::when_needed,
                                     .trace = &trace};
  if (overlay) settings.make_lane_state = overlay->lane_factory();
  std::unique_ptr<ferrum::scheduler> scheduler =
      ferrum::scheduler::create(program, *device, workers.get_executor(), settings).value();

  // Hot path: the frames, their completions on this thread. Each asks for
  // width x height pixels: the smallest bucket holding them runs it.
  frame_loop_run loop{.scheduler = scheduler.get(),
                      .renderer = &renderer,
                      .frames = o.frames,
                      .in_flight = program->lanes,
                      .frame_ms = std::vector<double>(o.frames),
                      .gpu_ms = {},
                      .node_gpu_ms = {},
                      .resize = o.resize_at ? &resize : nullptr,
                      .presenter = presenter ? &*presenter : nullptr,
                      .overlay = overlay ? &*overlay : nullptr};
  if (presenter) loop.turn.emplace(completions, asio::steady_timer::time_point::max());
  for (const ferrum::plan_node& n : plan.nodes) loop.pass_names.emplace_back(pass_name(n));
  loop.gpu_ms.reserve(o.frames);
  for (std::uint64_t first = 0; first < std::min(loop.in_flight, loop.frames); ++first)
    asio::co_spawn(completions, frame_chain(&loop, first, &completions, device.get(), &base), [](std::exception_ptr e) {
      if (e) std::rethrow_exception(e);
    });
  const auto started = clock_type::now();
  completions.run();
  const std::chrono::duration<double> elapsed = clock_type::now() - started;
  const ferrum::scheduler_stats stats = scheduler->stats();
  if (!loop.failure.empty()) {
    // A failed frame may have left its lane in quarantine, its lists still
    // running the renderer's kernels on the GPU: wait until the GPU holds no
    // lane before the kernels go.
    scheduler->async_shutdown(asio::bind_executor(completions, [](boost::system::error_code) {}));
    completions.restart();
    completions.run();
    throw std::runtime_error(loop.failure);
  }
  // On the null device, which keeps each image's layout: every pass met
  // its images in the layouts the scheduler put them in.
  if (const auto* null = dynamic_cast<const ferrum::gpu::null_device*>(device.get())) {
    const ferrum::gpu::image_layout_report layouts = null->image_layout_errors();
    if (layouts.count != 0)
      throw std::runtime_error(std::to_string(layouts.count) +
                               " commands met an image in another layout than they named" +
                               (layouts.first.empty() ? std::string() : ", the first: " + layouts.first.front()));
  }
  // The last frame's size and renderer.
  const frame_loop::frame_renderer& drew = o.resize_at ? *resize.renderer : renderer;
  const frame_loop::image_size size = drew.size();
  const std::shared_ptr<const ferrum::compiled_program> last_program = scheduler->program();

  // The last wave's lane holds what it drew, in its persistent read-back
  // resources: check it against the host (frame_check.hpp), holding every
  // lane of its bucket through a lease while it is read (no wave runs any
  // more). node/draw's color and depth, before any post-processing, against
  // the host's rasterizer ...
  std::vector<ferrum::lane_lease> leases;
  for (const auto& pool : scheduler->pools())
    if (loop.last.bucket != nullptr && pool->bucket().id == *loop.last.bucket)
      for (std::uint32_t lane = 0; lane < pool->counts().capacity; ++lane)
        leases.push_back(ferrum::async_acquire(*pool, asio::use_future).get());
  const auto last_lane = std::find_if(leases.begin(), leases.end(),
                                      [&](const ferrum::lane_lease& l) { return l.index() == loop.last.lane; });
  if (last_lane == leases.end()) throw std::logic_error("frame_loop: the last wave's lane is not its bucket's");
  const frame_loop::drawn_frame drawn = drew.drawn(**last_lane, loop.last.wave);
  const frame_loop::raster_reference reference = drew.draw_raster_on_host(loop.last_frame);
  const frame_loop::raster_difference raster =
      frame_loop::compare_raster(drawn.color, drawn.depth, reference, size.width, size.height);
  if (!raster.passed())
    throw std::runtime_error("the last frame (" + std::to_string(loop.last_frame) + "): " + raster.failure());
  // ... and the 8-bit frame against the host's blur and tone map of that
  // color, at every pixel. (In the swapchain's order, RGBA or BGRA, both.)
  const std::span<const std::byte> pixels = drew.output(**last_lane, loop.last.wave);
  const frame_loop::post_difference post =
      frame_loop::compare_post(pixels, drew.post_process_on_host(drawn.color), size.width);
  if (!post.passed())
    throw std::runtime_error("the last frame (" + std::to_string(loop.last_frame) + "): " + post.failure());
  // What the window shows after the last frame (presented in frame order).
  const frame_loop::host_frame expected = drew.draw_on_host(o.frames - 1);

  std::filesystem::create_directories(o.out);
  const auto png_path = o.out / "frame.png";
  const auto trace_path = o.out / "trace.json";
  const auto svg_path = o.out / "timeline.svg";
  frame_loop::write_png(png_path, size.width, size.height, drew.to_rgba(pixels));
  // What the window shows after the last frame: for the screenshot test.
  const auto expected_path = o.out / "expected.png";
  const auto expected_edges_path = o.out / "expected-edges.png";
  const auto overlay_path = o.out / "overlay-region.txt";
  if (presenter) {
    frame_loop::write_png(expected_path, size.width, size.height, drew.to_rgba(expected.pixels));
    frame_loop::write_png(expected_edges_path, size.width, size.height, edge_pixels(expected));
  }
  if (overlay) frame_loop::write_region(overlay_path, overlay->latest_region());
  write_file(trace_path, [&](std::ostream& out) { ferrum::write_chrome_trace(out, trace, plan); });
  write_file(svg_path, [&](std::ostream& out) { ferrum::write_timeline_svg(out, trace, plan); });

  // The lane memory of the bucket the last frames ran in (its buffers and
  // its images' texels), and what aliasing saved of it.
  const ferrum::compiled_bucket& bucket = *last_program->find(*loop.last.bucket);
  const std::uint64_t unaliased = bucket.unaliased_lane_size_bytes + bucket.unaliased_image_bytes;
  const auto saved_percent =
      std::lround(100.0 * (1.0 - static_cast<double>(bucket.admitted_lane_bytes()) / static_cast<double>(unaliased)));

  summary << std::fixed << std::setprecision(1) << "device:     " << device->kind() << " (" << device->name()
          << (o.discrete_layout ? "; discrete layout" : "") << ")\n"
          << "frames:     " << o.frames << " of " << o.size.width << "x" << o.size.height
          << (o.resize_at ? ", from frame " + std::to_string(resize.at) + " of " + std::to_string(size.width) + "x" +
                                std::to_string(size.height)
                          : std::string())
          << ", " << stats.max_in_flight << " in flight at most (lanes: " << last_program->lanes << ")\n"
          << "memory:     " << last_program->domains.size() << " pools, " << mebibytes(bucket.admitted_lane_bytes())
          << " MiB per lane (" << mebibytes(bucket.image_window.size) << " MiB of image texels; "
          << mebibytes(unaliased) << " MiB unaliased, " << saved_percent << "% saved); " << stats.lanes
          << " lanes made, as frames needed them\n"
          << "frames/s:   " << static_cast<double>(o.frames) / elapsed.count() << '\n'
          << "frame time: p50 " << percentile(loop.frame_ms, 50) << " ms, p99 " << percentile(loop.frame_ms, 99)
          << " ms (submit to completion)\n";
  if (!loop.gpu_ms.empty()) {
    summary << "gpu time:   p50 " << percentile(loop.gpu_ms, 50) << " ms, p99 " << percentile(loop.gpu_ms, 99)
            << " ms (first pass begin to last pass end; " << gpu_clock.calibration << ")\n"
            << "per pass:   gpu p50";
    for (std::size_t n = 0; n < loop.node_gpu_ms.size() && n < loop.pass_names.size(); ++n) {
      summary << (n == 0 ? " " : ", ") << loop.pass_names[n] << ' ' << std::setprecision(2)
              << percentile(loop.node_gpu_ms[n], 50);
    }
    summary << std::setprecision(1) << " ms\n";
    write_gpu_path(summary, *last_program, bucket, loop);
  } else {
    summary << "gpu time:   not measured ("
            << (o.gpu_timestamps ? "the device has no timestamps: " + std::string(gpu_clock.calibration)
                                 : std::string("--no-gpu-timestamps"))
            << ")\n";
  }
  if (presenter) {
    const std::vector<double>& intervals = presenter->present_intervals_ms();
    summary << "present:    " << presenter->presented() << " frames in a window, "
            << (presenter->order() == frame_loop::channel_order::bgra ? "BGRA" : "RGBA")
            << " swapchain images; present to present p50 " << (intervals.empty() ? 0.0 : percentile(intervals, 50))
            << " ms, p99 " << (intervals.empty() ? 0.0 : percentile(intervals, 99)) << " ms\n"
            << "swapchain recreations: " << presenter->swapchain().recreations() << '\n';
  }
  if (o.resize_at) {
    // The frames in flight when the change came, and those right after it.
    const std::uint64_t from = resize.at > loop.in_flight ? resize.at - loop.in_flight : 0;
    const std::uint64_t to = std::min(o.frames, resize.at + loop.in_flight);
    const double longest = *std::max_element(loop.frame_ms.begin() + static_cast<std::ptrdiff_t>(from),
                                             loop.frame_ms.begin() + static_cast<std::ptrdiff_t>(to));
    summary << "resize:     at frame " << resize.at << " to " << size.width << "x" << size.height
            << ": plan compiled and "
            << "kernels made in " << resize.make_ms << " ms on a background thread; first frame at the new size "
            << resize.first_frame_ms << " ms after the request; longest frame around it " << longest
            << " ms (p50 at the new size "
            << percentile({loop.frame_ms.begin() + static_cast<std::ptrdiff_t>(resize.at), loop.frame_ms.end()}, 50)
            << " ms); memory " << mebibytes(resize.bytes_before) << " MiB (" << resize.lanes_before
            << " lanes) before, " << mebibytes(resize.bytes_after) << " MiB (" << resize.lanes_after
            << " lanes) once the old program went\n";
  }
  const std::size_t frame_pixels = std::size_t{size.width} * size.height;
  summary << "check:      the last frame matches the host's: node/draw's color and depth, read back before the "
             "blur and tone map, against the host's rasterizer at the "
          << frame_pixels - raster.edge_pixels << " pixels no edge of the torus crosses (largest difference: color "
          << std::setprecision(2) << std::scientific << raster.color.difference << " relative, allowed "
          << raster.color.allowed << " there; depth " << raster.depth.difference << ", allowed " << raster.depth.allowed
          << " there" << std::fixed << std::setprecision(1) << "); " << raster.edge_differing << " of the "
          << raster.edge_pixels << " edge pixels (" << percent(raster.edge_pixels, frame_pixels)
          << "% of the frame) differ, allowed " << raster.edge_bound_allowed() << " ("
          << frame_loop::edge_differing_bound * 100 << "%); the 8-bit frame against the host's blur and tone map "
          << "of that color at every pixel: largest difference " << post.largest << "/255 (allowed "
          << frame_loop::post_tolerance << ")\n"
          << "png:        " << png_path.string() << '\n'
          << "trace:      " << trace_path.string() << " (" << trace.kept() << " spans"
          << (trace.dropped() == 0 ? "" : ", the oldest dropped")
          << "; open it in https://ui.perfetto.dev or chrome://tracing)\n"
          << "timeline:   " << svg_path.string() << '\n';
  if (presenter)
    summary << "expected:   " << expected_path.string() << " (what the window shows now; its edges "
            << expected_edges_path.string() << ")\n";
  if (overlay) {
    const frame_loop::pixel_region r = overlay->latest_region();
    summary << "overlay:    a Dear ImGui window at (" << r.x << ", " << r.y << "), " << r.width << "x" << r.height
            << " over the last frame (" << overlay_path.string() << "), drawn by node/overlay in each wave\n";
  }
  if (presenter && !o.hold_until.empty()) {
    // The summary waits for the run's end (main); the screenshot test waits
    // for the presenter's line.
    std::cout.flush();
    presenter->hold_until(o.hold_until, std::chrono::seconds(120));
  }
  return 0;
}

// The share of an overlay's region that must differ from the frame under
// it: ImGui's window darkens all of it but what was black already.
constexpr double overlay_differing_share = 0.5;

// --compare-screenshot SHOT EXPECTED EDGES [OVERLAY]: the screenshot test's
// check, with the tolerance of the frame check; with OVERLAY, the overlay's
// region must differ (at most of its pixels) and is left out of the rest.
int compare_screenshot(const std::vector<std::filesystem::path>& files) {
  const std::filesystem::path& shot = files[0];
  std::optional<frame_loop::pixel_region> region;
  if (files.size() > 3) region = frame_loop::read_region(files[3]);
  const frame_loop::frame_difference d =
      frame_loop::compare_screenshot(shot, files[1], files[2], allowed_difference, region);
  std::cout << "screenshot: " << shot.string() << " against " << files[1].string() << " (" << d.width << "x" << d.height
            << "): largest difference " << d.largest << "/255 in a channel away from the torus's edges"
            << (region ? " and the overlay" : "") << " (allowed: " << allowed_difference << "); " << d.edge_differing
            << " of " << d.edge_pixels << " pixels near an edge differ by more\n";
  if (region)
    std::cout << "overlay:    " << d.region_differing << " of the " << d.region_pixels << " pixels of its region ("
              << percent(d.region_differing, d.region_pixels) << "%) differ from the frame without it\n";
  if (d.largest > allowed_difference) {
    std::cerr
        << "frame_loop: error: the screenshot differs from the last frame drawn on the host, away from the torus's "
           "edges, by up to "
        << d.largest << "/255 in a channel\n";
    return 1;
  }
  if (region &&
      static_cast<double>(d.region_differing) <= overlay_differing_share * static_cast<double>(d.region_pixels)) {
    std::cerr << "frame_loop: error: the overlay's region differs from the frame without it at " << d.region_differing
              << " of its " << d.region_pixels << " pixels, not more than half\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const frame_loop::options o = frame_loop::parse_options(argc, argv);
    if (o.help) {
      std::cout << frame_loop::usage();
      return 0;
    }
    if (!o.compare_screenshot.empty()) return compare_screenshot(o.compare_screenshot);
    // The log outlives the device, whose destruction may report too. (A
    // skipped run's messages are the loader's, about the missing driver.)
    validation_log log;
    std::ostringstream summary;
    const int status = run(o, log, summary);
    if (status == 0 && log.messages.load() != 0) {
      std::cerr << "frame_loop: error: the Vulkan validation layers printed " << log.messages.load() << " messages\n";
      return 1;
    }
    // Every check passed (or the run was skipped): only now the summary,
    // with its check line.
    std::cout << summary.str();
    return status;
  } catch (const std::exception& e) {
    std::cerr << "frame_loop: error: " << e.what() << '\n';
    return 1;
  }
}
