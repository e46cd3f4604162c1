// examples/embed/main.cpp — ferrum inside an existing engine.
//
// The engine already owns what ferrum would otherwise make: a VkInstance,
// VkDevice and VkQueue made with plain Vulkan calls (engine_vulkan.hpp), an
// io_context run by its own std::threads, and a frame loop that is not a
// coroutine. ferrum adopts the Vulkan objects and runs its waves on the
// engine's io_context. The loop keeps at most three frames in flight and
// waits for them the two ways such loops do: through a plain callback (the
// first half of the frames) and through a std::future (the second half).
//
// Each frame, data crosses between the engine's own GPU work and ferrum's
// wave both ways, ordered on the GPU by the engine's own timeline
// semaphores (vkCreateSemaphore), which ferrum imports
// (ferrum::gpu::import_vulkan_semaphore):
// 1. The engine records and submits, on its queue, a vkCmdUpdateBuffer of
//    the frame's words into the frame's region of an inbox arena, and
//    signals its `produced` timeline at the frame's number F
//    (engine_frames.hpp).
// 2. ferrum's wave waits on (produced, F) — wave_request::wait, its first
//    submission — and each node copies its part of the inbox into its lane
//    slot, echoes the slot into an outbox arena, writes its own pattern into
//    the slot and copies that out too (frame_work.hpp). It signals
//    (wave_done of the ring slot, F) — wave_request::signal, its last
//    submission.
// 3. The engine's next work on the frame, a vkCmdCopyBuffer of the outbox
//    region into a buffer of the engine's own, waits on (wave_done, F); the
//    engine then checks what it copied.
// Why the inbox and the outbox are arenas of ferrum's rather than the
// engine's buffers or the lane's: a node's commands (command_list) read and
// write only ferrum arenas, and the lane a wave runs on is known only once
// the wave has it and goes back to its pool when the wave completes, so the
// engine can neither write into it beforehand nor read it afterwards. The
// arenas are made once, with a region per ring slot; the engine's commands
// use their VkBuffers (arena::native_handle()).
// Why the engine submits step 3 only once the wave has completed, not right
// after async_submit: the engine and ferrum share one queue, and on one
// queue a wait submitted before its signal holds back the signal (whose
// first scope covers every earlier submission) forever. Its wait on the
// wave's semaphore is then already satisfied, and still what orders the
// copy after the wave's writes and makes them visible to it. An engine with
// a queue of its own could submit it at once. wave_done is one timeline per
// ring slot because waves may submit their signals out of frame order and a
// timeline's value may not go backwards; `produced` is one, as the engine
// submits its writes in frame order.
//
// The frame is right when the outbox echoes the engine's words
// (engine→wave), holds the wave's patterns, and the engine's copy of it is
// the same (wave→engine). At the end ferrum shuts down before the engine
// destroys its Vulkan objects: see the end of run_frames, then of main.
//
//   ferrum_embed [PLAN] [--frames N]
//
// Exit codes: 0 every frame right; 1 a failed wave, a wrong result or bad
// usage; 77 no Vulkan device here (1 instead when FERRUM_REQUIRE_VULKAN=1).
#include "engine_frames.hpp"
#include "engine_vulkan.hpp"
#include "frame_work.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/plan_json.hpp"
#include "ferrum/gpu/semaphore.hpp"
#include "ferrum/gpu/vulkan_device.hpp"
#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iostream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;

namespace {

constexpr std::size_t frames_in_flight = 3;

int fail(const std::string& what) {
  std::cerr << "ferrum_embed: error: " << what << '\n';
  return 1;
}

// What the frame loops use: ferrum's scheduler and frame work, the engine's
// work around each wave and its semaphores as ferrum sees them, and the
// tally of frames whose data crossed.
struct frames_context {
  ferrum::scheduler& scheduler;
  frame_work& work;
  engine_frames& engine;
  ferrum::gpu::semaphore& produced;
  std::array<ferrum::gpu::semaphore*, frames_in_flight> wave_done;
  std::size_t to_wave = 0;    // frames whose outbox echoed the engine's words
  std::size_t to_engine = 0;  // frames whose engine copy held all the wave wrote
};

// The engine's write for `frame` into ring slot `ring_index`'s inbox
// region, then the frame's wave, waiting on it and signalling the slot's
// wave_done; `handler` gets the wave's outcome. The request's semaphore
// spans are copied by async_submit.
template <class Handler>
decltype(auto) submit_frame(frames_context& f, std::size_t ring_index, std::uint64_t frame, Handler&& handler) {
  if (auto produced = f.engine.produce(ring_index, frame, f.work.engine_words(frame)); !produced)
    throw std::runtime_error("frame " + std::to_string(frame) + ": the engine's write: " + produced.error().what());
  const std::array wait{ferrum::gpu::semaphore_op{&f.produced, frame, ferrum::gpu::sync_stage::all}};
  const std::array signal{ferrum::gpu::semaphore_op{f.wave_done[ring_index], frame, ferrum::gpu::sync_stage::all}};
  const ferrum::wave_request request{.bucket_class = "frame", .extent = {1, 1, 1}, .wait = wait, .signal = signal};
  return f.scheduler.async_submit(request, f.work.arm(ring_index, frame), std::forward<Handler>(handler));
}

// Whether the frame in ring slot `ring_index`, whose wave completed with
// `ec`, came out right both ways; says what went wrong if not. On success
// the engine copies the wave's outbox region out (its work after the wave).
bool frame_right(frames_context& f, std::size_t ring_index, const boost::system::error_code& ec) {
  const std::uint64_t frame = f.work.frame_of(ring_index);
  if (ec) {
    std::cerr << "frame " << frame << ": wave failed: " << ferrum::error_code_name(ec) << ": " << ec.message() << '\n';
    return false;
  }
  const std::span<const std::byte> outbox = f.work.outbox(ring_index);
  const std::size_t echo_wrong = f.work.wrong_echo(outbox, ring_index);
  const std::size_t outbox_wrong = f.work.wrong_words(outbox, ring_index);
  if (echo_wrong != 0)
    std::cerr << "frame " << frame << ": " << echo_wrong << " words of the engine's data wrong in the wave\n";
  if (outbox_wrong != echo_wrong)
    std::cerr << "frame " << frame << ": " << outbox_wrong - echo_wrong << " words of the wave's patterns wrong\n";
  f.to_wave += echo_wrong == 0 ? 1 : 0;
  const ferrum::result<bool> copied = f.engine.read_back(ring_index, frame);
  if (!copied) {
    std::cerr << "frame " << frame << ": the engine's copy: " << copied.error().what() << '\n';
    return false;
  }
  if (!*copied) {
    std::cerr << "frame " << frame << ": the engine's copy did not complete in 10 s\n";
    return false;
  }
  // wave→engine: the engine's copy is what the wave left in the outbox, the
  // wave's patterns included; and it is right as a whole.
  const std::span<const std::byte> back = f.engine.readback(ring_index);
  const bool same = std::equal(back.begin(), back.end(), outbox.begin(), outbox.end());
  const std::size_t back_wrong = f.work.wrong_words(back, ring_index);
  if (!same) std::cerr << "frame " << frame << ": the engine's copy differs from the wave's outbox\n";
  if (back_wrong != 0) std::cerr << "frame " << frame << ": " << back_wrong << " words wrong in the engine's copy\n";
  f.to_engine += same && outbox_wrong == echo_wrong ? 1 : 0;
  return echo_wrong == 0 && outbox_wrong == 0 && same && back_wrong == 0;
}

// The frames in flight of the callback loop: which are still running, and
// how each ended. It must outlive the waves whose callbacks use it.
struct callback_ring {
  std::mutex mutex;
  std::condition_variable completed;
  std::array<bool, frames_in_flight> in_flight{};
  std::array<boost::system::error_code, frames_in_flight> outcome{};
};

// Runs frames [first, last) with a plain callback per wave, which runs on one
// of the engine's io threads. The loop waits only to reuse a ring slot whose
// frame is still in flight, as it would wait on a per-frame VkFence.
// Returns the frames that went wrong.
std::size_t frames_with_callbacks(frames_context& f, asio::io_context& io, callback_ring& ring, std::uint64_t first,
                                  std::uint64_t last) {
  std::size_t wrong = 0;
  auto retire = [&](std::size_t r) {
    std::unique_lock lock(ring.mutex);
    ring.completed.wait(lock, [&] { return !ring.in_flight[r]; });
    const boost::system::error_code ec = ring.outcome[r];
    lock.unlock();
    wrong += frame_right(f, r, ec) ? 0 : 1;
  };
  for (std::uint64_t frame = first; frame < last; ++frame) {
    const std::size_t r = frame % frames_in_flight;
    if (frame >= first + frames_in_flight) retire(r);
    {
      const std::lock_guard lock(ring.mutex);
      ring.in_flight[r] = true;
    }
    submit_frame(f, r, frame,
                 asio::bind_executor(io, [&ring, r](boost::system::error_code ec, const ferrum::wave_report&) {
                   const std::lock_guard lock(ring.mutex);
                   ring.in_flight[r] = false;
                   ring.outcome[r] = ec;
                   ring.completed.notify_all();
                 }));
  }
  // The last frames, still in flight.
  for (std::uint64_t frame = last - std::min<std::uint64_t>(last - first, frames_in_flight); frame < last; ++frame)
    retire(frame % frames_in_flight);
  return wrong;
}

// Runs frames [first, last) with a std::future per wave: the loop gets a
// frame's future when it reuses the frame's ring slot. get() returns the
// wave's report, or throws boost::system::system_error with its error.
std::size_t frames_with_futures(frames_context& f, std::uint64_t first, std::uint64_t last) {
  std::array<std::future<ferrum::wave_report>, frames_in_flight> ring;
  std::size_t wrong = 0;
  auto retire = [&](std::size_t r) {
    boost::system::error_code ec;
    try {
      ring[r].get();
    } catch (const boost::system::system_error& e) {
      ec = e.code();
    }
    wrong += frame_right(f, r, ec) ? 0 : 1;
  };
  for (std::uint64_t frame = first; frame < last; ++frame) {
    const std::size_t r = frame % frames_in_flight;
    if (ring[r].valid()) retire(r);
    ring[r] = submit_frame(f, r, frame, asio::use_future);
  }
  // The last frames, still in flight.
  for (std::uint64_t frame = last - std::min<std::uint64_t>(last - first, frames_in_flight); frame < last; ++frame)
    retire(frame % frames_in_flight);
  return wrong;
}

// Everything of ferrum, from adopting the engine's device to shutting down:
// when this returns, nothing of ferrum is left. Returns the exit code.
int run_frames(engine_vulkan& vk, asio::io_context& io, const std::string& plan_path, std::uint64_t frames) {
  // ferrum uses the engine's instance, device and queue, and owns none of them.
  auto adopted = ferrum::gpu::adopt_vulkan_device(vk.adopt_info());
  if (!adopted) return fail("adopting the engine's Vulkan device: " + adopted.error().what());
  std::unique_ptr<ferrum::gpu::device> device = std::move(*adopted);

  std::ifstream file(plan_path, std::ios::binary);
  std::stringstream text;
  if (!(file && text << file.rdbuf())) return fail("cannot read the plan file '" + plan_path + "'");
  ferrum::result<ferrum::plan> plan = ferrum::parse_plan(text.str());
  if (!plan) return fail("plan '" + plan_path + "': " + plan.error().what());
  ferrum::result<ferrum::compiled_program> compiled = ferrum::compile(*plan);
  if (!compiled) return fail("compiling '" + plan_path + "': " + compiled.error().what());
  auto program = std::make_shared<const ferrum::compiled_program>(std::move(*compiled));

  // What the waves use is made before the scheduler, so that it outlives
  // them even when an exception unwinds this function.
  auto made = frame_work::create(*device, program->buckets.front(), frames_in_flight);
  if (!made) return fail("creating the frame's kernel and readback arena: " + made.error().what());
  std::unique_ptr<frame_work> work = std::move(*made);
  // The engine's work around each wave, and its semaphores, which ferrum
  // imports: they stay the engine's, which destroys them after ferrum's
  // device (the wrappers go before it).
  auto engine_made = engine_frames::create(vk, reinterpret_cast<VkBuffer>(work->inbox_handle()),
                                           reinterpret_cast<VkBuffer>(work->outbox_handle()),
                                           work->inbox_region_bytes(), work->outbox_region_bytes(), frames_in_flight);
  if (!engine_made) return fail("creating the engine's frame work: " + engine_made.error().what());
  std::unique_ptr<engine_frames> engine = std::move(*engine_made);
  auto produced =
      ferrum::gpu::import_vulkan_semaphore(*device, engine->produced(), ferrum::gpu::semaphore_kind::timeline);
  if (!produced) return fail("importing the engine's semaphore: " + produced.error().what());
  std::array<std::unique_ptr<ferrum::gpu::semaphore>, frames_in_flight> wave_done;
  for (std::size_t r = 0; r < frames_in_flight; ++r) {
    auto imported =
        ferrum::gpu::import_vulkan_semaphore(*device, engine->wave_done(r), ferrum::gpu::semaphore_kind::timeline);
    if (!imported) return fail("importing the engine's semaphore: " + imported.error().what());
    wave_done[r] = std::move(*imported);
  }
  callback_ring ring;
  // Waves run on the engine's io_context: its threads encode the nodes.
  auto created = ferrum::scheduler::create(program, *device, io.get_executor(), {.encoder_tasks = 2});
  if (!created) return fail("creating the scheduler: " + created.error().what());
  std::unique_ptr<ferrum::scheduler> scheduler = std::move(*created);

  frames_context f{*scheduler, *work, *engine, **produced, {}};
  for (std::size_t r = 0; r < frames_in_flight; ++r) f.wave_done[r] = wave_done[r].get();
  const std::uint64_t half = frames / 2 + 1;
  std::size_t wrong = frames_with_callbacks(f, io, ring, 1, half);
  wrong += frames_with_futures(f, half, frames + 1);

  // The engine can follow ferrum's GPU progress itself, e.g. to make its own
  // submissions wait on it: ferrum's timeline semaphore, on its device.
  std::uint64_t reached = 0;
  const VkResult read =
      vkGetSemaphoreCounterValue(vk.device(), ferrum::gpu::native_handles(*device)->timeline, &reached);
  if (read != VK_SUCCESS) return fail("vkGetSemaphoreCounterValue on ferrum's timeline: " + std::to_string(read));

  // Shutting down, in this order:
  // 1. async_shutdown: no more waves; completes once every accepted wave has
  //    completed and no lane is left to the GPU. Awaited from this thread,
  //    never from an io thread: its completion needs those threads.
  scheduler->async_shutdown(asio::use_future).get();
  // 2. What was made on ferrum's device: the scheduler (lanes: arenas and
  //    command lists), the wrappers of the engine's semaphores, then the
  //    frame work (kernel, inbox and outbox arenas). The engine's work on
  //    them completed: each frame's copy was waited for.
  scheduler.reset();
  for (auto& s : wave_done) s.reset();
  produced->reset();
  work.reset();
  // 3. ferrum's device. Its timeline semaphore, pipelines and buffers live on
  //    the engine's VkDevice, so it goes before main destroys that.
  device.reset();
  // 4. The engine's own objects of the frames: command buffers, semaphores,
  //    readback buffer (after its queue went idle).
  engine.reset();

  std::cout << frames << " frames on " << vk.name() << " (adopted), at most " << frames_in_flight
            << " in flight: " << frames - wrong << " right, " << wrong << " wrong; ferrum's timeline reached "
            << reached << "; engine→wave: " << f.to_wave << '/' << frames << " frames, wave→engine: " << f.to_engine
            << '/' << frames << " frames\n";
  return wrong == 0 && f.to_wave == frames && f.to_engine == frames ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string plan_path = "examples/embed/frame.json";
  std::uint64_t frames = 60;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--frames" && i + 1 < argc) {
      const std::string_view value = argv[++i];
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), frames);
      if (ec == std::errc() && end == value.data() + value.size() && frames >= 2) continue;
    } else if (!arg.starts_with("-") && i == 1) {
      plan_path = arg;
      continue;
    }
    std::cerr << "usage: ferrum_embed [PLAN] [--frames N]  (N >= 2; PLAN defaults to examples/embed/frame.json, "
                 "from the repository root)\n";
    return 1;
  }

  // The engine, as it was before ferrum: its own Vulkan objects...
  auto started = engine_vulkan::create();
  if (!started) {
    const char* required = std::getenv("FERRUM_REQUIRE_VULKAN");
    if (started.error() == ferrum::errc::vulkan_unavailable && !(required && std::string_view(required) == "1")) {
      std::cerr << "ferrum_embed: skipped: no Vulkan device (" << started.error().what() << ")\n";
      return 77;
    }
    return fail("starting the engine's Vulkan: " + started.error().what());
  }
  std::unique_ptr<engine_vulkan> vk = std::move(*started);
  // ...and its own io_context, run by its own threads.
  asio::io_context io;
  auto keep_running = asio::make_work_guard(io);
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) threads.emplace_back([&io] { io.run(); });

  int code = 1;
  try {
    code = run_frames(*vk, io, plan_path, frames);
  } catch (const std::exception& e) {
    code = fail(e.what());
  }
  // ferrum is gone: no wave, handler or fence waiter of it is left. Only now
  // does the engine stop its threads and destroy its Vulkan objects (its
  // queue drained, then device and instance: ~engine_vulkan).
  keep_running.reset();
  for (std::thread& t : threads) t.join();
  vk.reset();
  return code;
}
