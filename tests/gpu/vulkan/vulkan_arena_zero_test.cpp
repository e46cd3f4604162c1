// The Vulkan device's zero-fill on the GPU of memory the host does not map: a
// device arena's, and with discrete_layout a staged arena's device-local
// buffer. lavapipe's memory is host-visible and comes from the heap, so an
// arena made where a freed one was finds its bytes: arenas are made, written
// with a pattern and freed round after round, and every new one must read
// zero. The fills go through the compute queue, one value each.
#include "ferrum/gpu/vulkan_device.hpp"

#include "vulkan_test_support.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

using namespace vulkan_test;
using ferrum::memory_class;

namespace {

constexpr std::uint32_t zero_test_pattern = 0xdeadbeefu;

// Words of `a` from `first` (count) that are not zero.
std::size_t nonzero_words(const ferrum::gpu::arena& a, std::size_t first, std::size_t count) {
  std::size_t found = 0;
  for (std::size_t i = first; i < first + count; ++i)
    if (word_at(a, i) != 0u) ++found;
  return found;
}

// The compute queue's values that making an arena of `cls` submitted.
std::uint64_t fills_made_by(ferrum::gpu::device& device, std::size_t bytes, memory_class cls,
                            std::unique_ptr<ferrum::gpu::arena>& made) {
  const std::uint64_t before = device.queue().last_submitted();
  made = require(device.create_arena(bytes, cls));
  return device.queue().last_submitted() - before;
}

}  // namespace

TEST_CASE("vulkan: device and staged arenas are zero-filled on the GPU, over reused memory, both layouts",
          "[vulkan][arena]") {
  constexpr std::size_t bytes = 4096;
  // Not a multiple of 4: its last two bytes are reached only by the fill of
  // the whole buffer and by stage().
  constexpr std::size_t odd_bytes = bytes - 2;
  constexpr std::size_t words = bytes / 4;
  constexpr int rounds = 24;
  for (const bool discrete : {false, true}) {
    INFO("discrete_layout " << discrete);
    session s;
    if (!s.open_layout(discrete)) return;
    ferrum::gpu::device& device = *s.device;
    // What the GPU reads of each new arena's own buffer, copied here.
    auto seen = require(device.create_arena(3 * bytes));
    auto list = require(device.create_command_list());
    std::size_t nonzero = 0;
    std::size_t nonzero_host_bytes = 0;
    for (int round = 0; round < rounds; ++round) {
      std::unique_ptr<ferrum::gpu::arena> on_device, upload, readback;
      // A fill each where the GPU's buffer is not mapped: a device arena's
      // always, the staged ones' in the discrete layout.
      CHECK(fills_made_by(device, bytes, memory_class::device, on_device) == 1);
      CHECK(fills_made_by(device, bytes, memory_class::upload, upload) == (discrete ? 1 : 0));
      CHECK(fills_made_by(device, odd_bytes, memory_class::readback, readback) == (discrete ? 1 : 0));
      for (std::size_t i = 0; i < 3 * words; ++i) set_word(*seen, i, 0xffffffffu);
      require_reached(device.queue().timeline(), submit(device, *list, [&](ferrum::gpu::command_list& l) {
                        require(l.copy(on_device->whole(), seen->range(0, bytes)));
                        require(l.copy(upload->whole(), seen->range(bytes, bytes)));
                        require(l.copy(readback->range(0, bytes - 4), seen->range(2 * bytes, bytes - 4)));
                        if (readback->staged()) require(l.stage(*readback));
                      }));
      require(readback->invalidate());
      nonzero += nonzero_words(*seen, 0, 3 * words - 1);
      for (std::byte b : readback->bytes())
        if (b != std::byte{0}) ++nonzero_host_bytes;
      // Written whole before they are freed, for the next round's arenas.
      require_reached(device.queue().timeline(), submit(device, *list, [&](ferrum::gpu::command_list& l) {
                        require(l.fill(on_device->whole(), zero_test_pattern));
                        require(l.fill(upload->whole(), zero_test_pattern));
                        require(l.fill(readback->range(0, bytes - 4), zero_test_pattern));
                        if (readback->staged()) require(l.stage(*readback));
                      }));
    }
    CHECK(nonzero == 0);
    CHECK(nonzero_host_bytes == 0);
    list.reset();
    seen.reset();
    s.finish();
  }
}

TEST_CASE("vulkan: arenas made on several threads at once are each zero-filled through the queue", "[vulkan][arena]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  constexpr int threads = 4;
  constexpr int each = 6;
  constexpr std::size_t bytes = 1024;
  const std::uint64_t before = device.queue().last_submitted();
  std::vector<std::size_t> nonzero(threads, 0);
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t) {
    running.emplace_back([&, t] {
      // Catch2's checks are not thread-safe: each thread only counts.
      for (int i = 0; i < each; ++i) {
        auto on_device = device.create_arena(bytes, memory_class::device);
        auto seen = device.create_arena(bytes);
        auto list = device.create_command_list();
        if (!on_device || !seen || !list) {
          ++nonzero[t];
          continue;
        }
        bool ok = (*list)->begin().has_value() && (*list)->copy((*on_device)->whole(), (*seen)->whole()).has_value() &&
                  (*list)->fill((*on_device)->whole(), zero_test_pattern).has_value() && (*list)->end().has_value();
        ferrum::gpu::command_list* lists[] = {list->get()};
        auto value = ok ? device.queue().submit_next(lists) : ferrum::result<std::uint64_t>(std::uint64_t{0});
        ok = ok && value.has_value();
        const auto waited = ok ? wait_for(device.queue().timeline(), *value) : std::nullopt;
        if (!waited || *waited) {
          // Not reached: the GPU may still use them, so they go with the
          // value (or when the device drains), and the round counts as wrong.
          const std::uint64_t until = value ? *value : 0;
          device.retire(std::move(*on_device), until);
          device.retire(std::move(*seen), until);
          device.retire(std::move(*list), until);
          ++nonzero[t];
          continue;
        }
        nonzero[t] += nonzero_words(**seen, 0, bytes / 4);
      }
    });
  }
  for (std::thread& t : running) t.join();
  for (int t = 0; t < threads; ++t) CHECK(nonzero[t] == 0);
  // One value per fill and per copy, none lost or shared.
  CHECK(device.queue().last_submitted() - before == 2 * threads * each);
  s.finish();
}
