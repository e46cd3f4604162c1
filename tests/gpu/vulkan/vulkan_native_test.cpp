// Native recording on the Vulkan device (command_list::record_native,
// encode_context::native), validation with synchronization validation on:
// the engine's own commands in a list are ordered against ferrum's before
// and after them, and in a wave against the nodes the plan's hazards order
// them with. The data proves the order; the validation layers prove the
// barriers cover it.
#include "vulkan_test_support.hpp"

#include "dropped_barrier.hpp"
#include "ferrum/binding/plan_json.hpp"
#include "ferrum/scheduler/scheduler.hpp"
#include "plan_builder.hpp"
#include "wave_outcome.hpp"

#include <boost/asio/thread_pool.hpp>

#include <atomic>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace {

using vulkan_test::require;
using vulkan_test::word_at;

// Fills `size` bytes at `offset` of the arena behind `buffer` with `word`,
// as an engine's own command would.
void native_fill(VkCommandBuffer commands, const ferrum::native_buffer& buffer, std::uint64_t offset,
                 std::uint64_t size, std::uint32_t word) {
  vkCmdFillBuffer(commands, ferrum::gpu::vulkan_buffer(buffer.buffer), buffer.offset + offset, size, word);
}

}  // namespace

TEST_CASE("vulkan: a native recording runs in list order between ferrum's commands", "[vulkan][native]") {
  vulkan_test::session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  auto a = require(device.create_arena(1024));
  auto out = require(device.create_arena(1024));
  // lavapipe has bufferDeviceAddress: every arena has an address of its own.
  CHECK(a->device_address() != 0);
  CHECK(out->device_address() != 0);
  CHECK(a->device_address() != out->device_address());
  auto list = require(device.create_command_list());
  const std::uint64_t value = vulkan_test::submit(device, *list, [&](ferrum::gpu::command_list& l) {
    require(l.fill(a->range(0, 512), 1u));
    const ferrum::gpu::native_commands native = require(l.record_native());
    const ferrum::native_buffer whole = ferrum::native_buffer::of(a->range(0, 1024));
    CHECK(whole.device_address == a->device_address());
    // After ferrum's fill (a write after a write), before ferrum's copy.
    native_fill(ferrum::gpu::vulkan_command_buffer(native), whole, 0, 64, 7u);
    native_fill(ferrum::gpu::vulkan_command_buffer(native), whole, 512, 256, 9u);
    require(l.copy(a->range(0, 1024), out->range(0, 1024)));
    CHECK(l.size() == 3);
    CHECK(l.barriers() == 3);  // the opening one, before the native commands, before the copy
  });
  vulkan_test::require_reached(device.queue().timeline(), value);
  for (std::size_t i = 0; i < 256; ++i) {
    INFO("word " << i);
    const std::uint32_t expected = i < 16 ? 7u : i < 128 ? 1u : i < 192 ? 9u : 0u;
    CHECK(word_at(*out, i) == expected);
  }
  list.reset();
  out.reset();
  a.reset();
  s.finish();
}

namespace {

// Runs `waves` waves of `program` (examples/plans/readback.json's, maybe
// changed) on `device`: node/simulate fills resource/state with the wave
// number by a native command, node/shade copies it into resource/image
// with ferrum's. Returns how many words of the copies differ from it, and
// counts failed encodings and waves in `failures`.
std::size_t run_readback_waves(ferrum::gpu::device& device, std::shared_ptr<const ferrum::compiled_program> program,
                               int waves, int& failures) {
  std::atomic<int> failed{0};
  const auto encode = [&](const ferrum::encode_context& c) {
    const ferrum::node_resource* state = c.resource("resource/state");
    if (state == nullptr) return (void)failed.fetch_add(1);
    if (c.node_index == 0) {
      const auto native = c.native();
      if (!native) return (void)failed.fetch_add(1);
      const ferrum::native_buffer target = native->resource(static_cast<std::size_t>(state - c.resources.data()));
      if (target.size != state->range.size || target.buffer == 0 || target.device_address == 0) failed.fetch_add(1);
      native_fill(ferrum::gpu::vulkan_command_buffer(native->command_buffer), target, 0, target.size,
                  static_cast<std::uint32_t>(c.wave));
    } else if (const ferrum::node_resource* image = c.resource("resource/image")) {
      if (!c.commands.copy(state->range, image->range)) failed.fetch_add(1);
    }
  };
  std::size_t wrong = 0;
  boost::asio::thread_pool pool(2);
  auto made = ferrum::scheduler::create(std::move(program), device, pool.get_executor(),
                                        {.fence_timeout = std::chrono::seconds(60), .encoder_tasks = 2});
  REQUIRE(made.has_value());
  std::unique_ptr<ferrum::scheduler> scheduler = std::move(*made);
  for (int i = 0; i < waves; ++i) {
    ferrum::wave_readback readback;
    auto done = sched_test::submit(*scheduler, encode, {.bucket_class = "frame", .readback = &readback});
    const auto [ec, report] = sched_test::get(done, std::chrono::seconds(60));
    INFO(report.message);
    if (ec) {
      failed.fetch_add(1);
      continue;
    }
    // The image holds, word for word, what the native fill wrote in this wave.
    const std::span<const std::byte> bytes = readback.bytes("resource/image").value();
    REQUIRE(bytes.size() == 4096);
    for (std::size_t w = 0; w < bytes.size() / 4; ++w) {
      std::uint32_t word = 0;
      std::memcpy(&word, bytes.data() + w * 4, sizeof word);
      wrong += word == report.wave ? 0 : 1;
    }
  }
  scheduler.reset();
  pool.join();
  failures = failed.load();
  return wrong;
}

std::shared_ptr<const ferrum::compiled_program> readback_program() {
  std::ifstream in(std::string(FERRUM_SOURCE_DIR) + "/examples/plans/readback.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return std::make_shared<const ferrum::compiled_program>(
      ferrum::test::compile_ok(ferrum::test::require(ferrum::parse_plan(text))));
}

}  // namespace

TEST_CASE("vulkan: a wave's native node writes a resource that the next node's ferrum copy reads",
          "[vulkan][native][scheduler]") {
  // examples/plans/readback.json: node/simulate writes resource/state (read
  // and written) with the engine's own command, node/shade copies it into
  // resource/image (readback memory) with ferrum's. The plan's hazard (shade
  // reads what simulate wrote) puts the barrier between them; both layouts,
  // the discrete one with the image read back through the stage-out copy.
  const bool discrete = GENERATE(false, true);
  INFO("discrete_layout " << discrete);
  vulkan_test::session s;
  if (!s.open_layout(discrete)) return;
  int failures = 0;
  CHECK(run_readback_waves(*s.device, readback_program(), 6, failures) == 0);
  CHECK(failures == 0);
  s.finish();
}

TEST_CASE("vulkan: dropping the derived barrier between a native node and a ferrum copy is reported by validation",
          "[vulkan][native][scheduler][validation]") {
  const auto program = readback_program();
  const std::vector<std::size_t> nodes = ferrum::test::barrier_nodes(*program);
  REQUIRE(nodes == std::vector<std::size_t>{1});  // node/shade's: it reads what node/simulate wrote
  const bool discrete = GENERATE(false, true);
  INFO("discrete_layout " << discrete);
  vulkan_test::session s;
  if (!s.open_layout(discrete)) return;
  int failures = 0;
  (void)run_readback_waves(*s.device, ferrum::test::without_barrier(*program, 1), 2, failures);
  const std::string log = s.finish_reported();
  INFO(log);
  CHECK(log.find("SYNC-HAZARD-READ-AFTER-WRITE") != std::string::npos);
}

TEST_CASE("vulkan: the engine's own submissions to the native queue under queue::lock() run beside ferrum's",
          "[vulkan][native]") {
  // A library's set-up work (VkFFT's, say) submitted to ferrum's queue by
  // the engine while ferrum submits on another thread: the queue is
  // externally synchronized, which the lock provides (the validation
  // layers' thread-safety checks are on).
  vulkan_test::session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  const auto native = ferrum::gpu::native_handles(device);
  REQUIRE(native.has_value());
  auto a = require(device.create_arena(256));
  auto list = require(device.create_command_list());
  std::atomic<bool> stop{false};
  std::atomic<int> ferrum_failures{0};
  // No Catch2 assertion on this thread (they are not thread-safe): failures counted.
  std::thread ferrum_side([&] {
    ferrum::gpu::command_list* lists[] = {list.get()};
    for (std::uint32_t i = 0; i < 40 && !stop.load(); ++i) {
      if (!list->begin() || !list->fill(a->range(0, 256), i) || !list->end()) {
        ferrum_failures.fetch_add(1);
        return;
      }
      const auto value = device.queue().submit_next(lists);
      const auto reached = value ? vulkan_test::wait_for(device.queue().timeline(), *value) : std::nullopt;
      if (!reached || *reached) {
        ferrum_failures.fetch_add(1);
        return;
      }
    }
  });
  VkFenceCreateInfo fence_info{};
  fence_info.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  VkFence fence = VK_NULL_HANDLE;
  REQUIRE(vkCreateFence(native->device, &fence_info, nullptr, &fence) == VK_SUCCESS);
  int engine_submissions = 0;
  for (int i = 0; i < 40; ++i) {
    {
      const std::unique_lock<std::mutex> held = device.queue().lock();
      if (vkQueueSubmit(native->queue, 0, nullptr, fence) != VK_SUCCESS) break;
    }
    // Waiting on the engine's own fence needs no lock.
    if (vkWaitForFences(native->device, 1, &fence, VK_TRUE, 10'000'000'000ull) != VK_SUCCESS) break;
    if (vkResetFences(native->device, 1, &fence) != VK_SUCCESS) break;
    ++engine_submissions;
  }
  stop.store(engine_submissions != 40);
  ferrum_side.join();
  vkDestroyFence(native->device, fence, nullptr);
  CHECK(engine_submissions == 40);
  CHECK(ferrum_failures.load() == 0);
  CHECK(device.queue().last_submitted() >= 40);
  CHECK(word_at(*a, 0) == 39u);  // ferrum's last fill
  list.reset();
  a.reset();
  s.finish();
}
