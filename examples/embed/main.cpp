// examples/embed/main.cpp — ferrum inside an existing engine.
//
// The engine already owns what ferrum would otherwise make: a VkInstance,
// VkDevice and VkQueue made with plain Vulkan calls (engine_vulkan.hpp), an
// io_context run by its own std::threads, and a frame loop that is not a
// coroutine. ferrum adopts the Vulkan objects and runs its waves on the
// engine's io_context. The loop keeps at most three frames in flight and
// waits for them the two ways such loops do: through a plain callback (the
// first half of the frames) and through a std::future (the second half).
// Each frame's result is read back and checked (frame_work.hpp). At the end
// ferrum shuts down before the engine destroys its Vulkan objects: see the
// end of run_frames, then of main.
//
//   ferrum_embed [PLAN] [--frames N]
//
// Exit codes: 0 every frame right; 1 a failed wave, a wrong result or bad
// usage; 77 no Vulkan device here (1 instead when FERRUM_REQUIRE_VULKAN=1).
#include "engine_vulkan.hpp"
#include "frame_work.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/plan_json.hpp"
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
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;

namespace {

constexpr std::size_t frames_in_flight = 3;
const ferrum::wave_request frame_wave{.bucket_class = "frame", .extent = {1, 1, 1}};

int fail(const std::string& what) {
  std::cerr << "ferrum_embed: error: " << what << '\n';
  return 1;
}

// Whether the frame in ring slot `ring_index`, whose wave completed with
// `ec`, came out right; says what went wrong if not.
bool frame_right(const frame_work& work, std::size_t ring_index, const boost::system::error_code& ec) {
  const std::uint64_t frame = work.frame_of(ring_index);
  if (ec) {
    std::cerr << "frame " << frame << ": wave failed: " << ferrum::error_code_name(ec) << ": " << ec.message() << '\n';
    return false;
  }
  const std::size_t wrong = work.wrong_words(ring_index);
  if (wrong != 0) std::cerr << "frame " << frame << ": " << wrong << " words read back wrong\n";
  return wrong == 0;
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
std::size_t frames_with_callbacks(ferrum::scheduler& s, frame_work& work, asio::io_context& io, callback_ring& ring,
                                  std::uint64_t first, std::uint64_t last) {
  std::size_t wrong = 0;
  auto retire = [&](std::size_t r) {
    std::unique_lock lock(ring.mutex);
    ring.completed.wait(lock, [&] { return !ring.in_flight[r]; });
    const boost::system::error_code ec = ring.outcome[r];
    lock.unlock();
    wrong += frame_right(work, r, ec) ? 0 : 1;
  };
  for (std::uint64_t frame = first; frame < last; ++frame) {
    const std::size_t r = frame % frames_in_flight;
    if (frame >= first + frames_in_flight) retire(r);
    {
      const std::lock_guard lock(ring.mutex);
      ring.in_flight[r] = true;
    }
    s.async_submit(frame_wave, work.arm(r, frame),
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
std::size_t frames_with_futures(ferrum::scheduler& s, frame_work& work, std::uint64_t first, std::uint64_t last) {
  std::array<std::future<ferrum::wave_report>, frames_in_flight> ring;
  std::size_t wrong = 0;
  auto retire = [&](std::size_t r) {
    boost::system::error_code ec;
    try {
      ring[r].get();
    } catch (const boost::system::system_error& e) {
      ec = e.code();
    }
    wrong += frame_right(work, r, ec) ? 0 : 1;
  };
  for (std::uint64_t frame = first; frame < last; ++frame) {
    const std::size_t r = frame % frames_in_flight;
    if (ring[r].valid()) retire(r);
    ring[r] = s.async_submit(frame_wave, work.arm(r, frame), asio::use_future);
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
  callback_ring ring;
  // Waves run on the engine's io_context: its threads encode the nodes.
  auto created = ferrum::scheduler::create(program, *device, io.get_executor(), {.encoder_tasks = 2});
  if (!created) return fail("creating the scheduler: " + created.error().what());
  std::unique_ptr<ferrum::scheduler> scheduler = std::move(*created);

  const std::uint64_t half = frames / 2 + 1;
  std::size_t wrong = frames_with_callbacks(*scheduler, *work, io, ring, 1, half);
  wrong += frames_with_futures(*scheduler, *work, half, frames + 1);

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
  //    command lists), then the frame work (kernel, readback arena).
  scheduler.reset();
  work.reset();
  // 3. ferrum's device. Its timeline semaphore, pipelines and buffers live on
  //    the engine's VkDevice, so it goes before main destroys that.
  device.reset();

  std::cout << frames << " frames on " << vk.name() << " (adopted), at most " << frames_in_flight
            << " in flight: " << frames - wrong << " right, " << wrong << " wrong; ferrum's timeline reached "
            << reached << '\n';
  return wrong == 0 ? 0 : 1;
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
