// What the Vulkan device's commands compute: the built-in kernels, fills and
// copies, and the order of commands and submissions.
#include "ferrum/gpu/builtin_kernels.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include "vulkan_test_support.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

using ferrum::gpu::builtin::pattern_word;
using namespace vulkan_test;

TEST_CASE("vulkan: a compute kernel writes its pattern into exactly its range", "[vulkan]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  auto arena = require(device.create_arena(8192));
  auto writer = require(device.create_kernel(ferrum::gpu::builtin::write_pattern()));
  auto list = require(device.create_command_list());
  for (std::size_t i = 0; i < arena->size() / 4; ++i) REQUIRE(word_at(*arena, i) == 0u);  // zero-filled

  // 1000 words from byte 256: 16 workgroups of 64, the last one partial.
  constexpr std::uint32_t seed = 0x5eed;
  constexpr std::size_t first = 64, count = 1000;
  const std::array<std::uint32_t, 1> push{seed};
  const std::uint64_t value = submit(device, *list, [&](ferrum::gpu::command_list& l) {
    require(l.dispatch(*writer, arena->range(first * 4, count * 4), {}, push));
  });
  require_reached(device.queue().timeline(), value);

  std::size_t wrong = 0;
  for (std::size_t i = 0; i < arena->size() / 4; ++i) {
    const bool inside = i >= first && i < first + count;
    const std::uint32_t expected = inside ? pattern_word(seed, static_cast<std::uint32_t>(i - first)) : 0u;
    if (word_at(*arena, i) != expected) ++wrong;
  }
  CHECK(wrong == 0);
  list.reset();
  writer.reset();
  arena.reset();
  s.finish();
}

TEST_CASE("vulkan: check_pattern counts the corrupted words into another arena", "[vulkan]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  auto data = require(device.create_arena(16384));
  auto counters = require(device.create_arena(256));
  auto writer = require(device.create_kernel(ferrum::gpu::builtin::write_pattern()));
  auto checker = require(device.create_kernel(ferrum::gpu::builtin::check_pattern()));
  auto list = require(device.create_command_list());
  constexpr std::uint32_t seed = 77;
  const std::array<std::uint32_t, 1> push{seed};

  // Written and checked in one list: the barrier between the two dispatches
  // makes the check see the pattern, so the count is 0.
  std::uint64_t value = submit(device, *list, [&](ferrum::gpu::command_list& l) {
    require(l.dispatch(*writer, data->whole(), {}, push));
    require(l.dispatch(*checker, data->whole(), counters->range(64, 4), push));
  });
  require_reached(device.queue().timeline(), value);
  CHECK(word_at(*counters, 16) == 0u);

  // The host corrupts k words; a second check counts them.
  const std::array<std::size_t, 5> corrupted{0, 1, 63, 64, 4095};
  for (std::size_t word : corrupted) set_word(*data, word, ~word_at(*data, word));
  value = submit(device, *list, [&](ferrum::gpu::command_list& l) {
    require(l.dispatch(*checker, data->whole(), counters->range(64, 4), push));
  });
  require_reached(device.queue().timeline(), value);
  CHECK(word_at(*counters, 16) == corrupted.size());
  for (std::size_t i = 0; i < counters->size() / 4; ++i) {
    if (i != 16) CHECK(word_at(*counters, i) == 0u);
  }
  list.reset();
  checker.reset();
  writer.reset();
  counters.reset();
  data.reset();
  s.finish();
}

TEST_CASE("vulkan: fills and copies run in recording order", "[vulkan]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  auto a = require(device.create_arena(1024));
  auto b = require(device.create_arena(512));
  auto list = require(device.create_command_list());
  const std::uint64_t value = submit(device, *list, [&](ferrum::gpu::command_list& l) {
    require(l.fill(a->range(0, 256), 0xdeadbeefu));
    require(l.copy(a->range(0, 256), a->range(512, 256)));  // within one arena
    require(l.fill(a->range(64, 64), 7u));                  // after the copy read it
    require(l.copy(a->range(0, 256), b->range(128, 256)));  // across arenas, after the fill
  });
  require_reached(device.queue().timeline(), value);

  for (std::size_t i = 0; i < 256; ++i) {
    INFO("word " << i);
    const bool seven = i >= 16 && i < 32;
    const std::uint32_t expected_a = i < 64 ? (seven ? 7u : 0xdeadbeefu) : (i >= 128 && i < 192 ? 0xdeadbeefu : 0u);
    CHECK(word_at(*a, i) == expected_a);
    if (i < 128) {
      const std::uint32_t expected_b = i >= 32 && i < 96 ? ((i - 32 >= 16 && i - 32 < 32) ? 7u : 0xdeadbeefu) : 0u;
      CHECK(word_at(*b, i) == expected_b);
    }
  }
  list.reset();
  b.reset();
  a.reset();
  s.finish();
}

TEST_CASE("vulkan: 64 submissions of a non-commutative kernel run in submission order", "[vulkan]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  constexpr std::size_t words = 1024;
  constexpr std::uint64_t submissions = 64;
  auto arena = require(device.create_arena(words * 4));
  auto affine = require(device.create_kernel(ferrum::gpu::builtin::affine()));
  std::vector<std::uint32_t> expected(words);
  for (std::size_t i = 0; i < words; ++i) {
    set_word(*arena, i, static_cast<std::uint32_t>(i));
    expected[i] = static_cast<std::uint32_t>(i);
  }

  // Each submission its own list (a list is in flight until its value), all
  // submitted before any is awaited.
  std::vector<std::unique_ptr<ferrum::gpu::command_list>> lists;
  for (std::uint64_t k = 1; k <= submissions; ++k) {
    const std::array<std::uint32_t, 2> push{static_cast<std::uint32_t>(2 * k + 1),
                                            static_cast<std::uint32_t>(7 * k + 3)};
    for (std::uint32_t& x : expected) x = x * push[0] + push[1];
    lists.push_back(require(device.create_command_list()));
    ferrum::gpu::command_list& list = *lists.back();
    require(list.begin());
    require(list.dispatch(*affine, arena->whole(), {}, push));
    require(list.end());
    ferrum::gpu::command_list* one[] = {&list};
    require(device.queue().submit(one, k));
  }
  require_reached(device.queue().timeline(), submissions);

  std::size_t wrong = 0;
  for (std::size_t i = 0; i < words; ++i) wrong += word_at(*arena, i) != expected[i] ? 1 : 0;
  CHECK(wrong == 0);
  // Every list's value is reached: each can be submitted again as recorded
  // (replay), then recorded anew.
  for (std::size_t k = 0; k < lists.size(); ++k) {
    const std::array<std::uint32_t, 2> push{static_cast<std::uint32_t>(2 * (k + 1) + 1),
                                            static_cast<std::uint32_t>(7 * (k + 1) + 3)};
    for (std::uint32_t& x : expected) x = x * push[0] + push[1];
    resubmit(device, *lists[k]);
  }
  require_reached(device.queue().timeline(), 2 * submissions);
  wrong = 0;
  for (std::size_t i = 0; i < words; ++i) wrong += word_at(*arena, i) != expected[i] ? 1 : 0;
  CHECK(wrong == 0);
  for (auto& list : lists) require(list->begin());
  lists.clear();
  affine.reset();
  arena.reset();
  s.finish();
}

TEST_CASE("vulkan: arenas past the first descriptor pool's capacity bind and run", "[vulkan]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  auto writer = require(device.create_kernel(ferrum::gpu::builtin::write_pattern()));
  // More arenas than one pool holds, some freed in between, so that sets come
  // from several pools and from freed slots.
  std::vector<std::unique_ptr<ferrum::gpu::arena>> arenas;
  for (int i = 0; i < 40; ++i) arenas.push_back(require(device.create_arena(256)));
  for (std::size_t i = 0; i < arenas.size(); i += 2) arenas[i].reset();
  for (int i = 0; i < 30; ++i) arenas.push_back(require(device.create_arena(256)));
  std::erase(arenas, nullptr);

  auto list = require(device.create_command_list());
  const std::uint64_t value = submit(device, *list, [&](ferrum::gpu::command_list& l) {
    for (std::size_t i = 0; i < arenas.size(); ++i) {
      const std::array<std::uint32_t, 1> push{static_cast<std::uint32_t>(i)};
      require(l.dispatch(*writer, arenas[i]->whole(), {}, push));
    }
  });
  require_reached(device.queue().timeline(), value);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < arenas.size(); ++i) {
    for (std::size_t w = 0; w < 64; ++w)
      wrong += word_at(*arenas[i], w) != pattern_word(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(w));
  }
  CHECK(wrong == 0);
  list.reset();
  arenas.clear();
  writer.reset();
  s.finish();
}

TEST_CASE("vulkan: lists recorded on several threads at once run correctly", "[vulkan]") {
  session s;
  if (!s.open()) return;
  ferrum::gpu::device& device = *s.device;
  constexpr int threads = 4;
  constexpr int lists_per_thread = 6;
  constexpr std::size_t region = 1024;
  auto arena = require(device.create_arena(region * threads * lists_per_thread));
  auto writer = require(device.create_kernel(ferrum::gpu::builtin::write_pattern()));
  std::mutex submit_mutex;  // values must rise in submission order
  std::vector<std::thread> recorders;
  std::vector<std::vector<std::unique_ptr<ferrum::gpu::command_list>>> lists(threads);
  for (int t = 0; t < threads; ++t) {
    for (int i = 0; i < lists_per_thread; ++i) lists[t].push_back(require(device.create_command_list()));
  }
  std::atomic<int> failures{0};
  for (int t = 0; t < threads; ++t) {
    recorders.emplace_back([&, t] {
      for (int i = 0; i < lists_per_thread; ++i) {
        ferrum::gpu::command_list& list = *lists[t][i];
        const auto slot = static_cast<std::size_t>(t * lists_per_thread + i);
        const std::array<std::uint32_t, 1> push{static_cast<std::uint32_t>(slot)};
        // Recorded outside any lock: each list has its own command pool.
        bool ok = list.begin() && list.fill(arena->range(slot * region, region), 1u) &&
                  list.dispatch(*writer, arena->range(slot * region, region), {}, push) && list.end();
        if (ok) {
          const std::lock_guard lock(submit_mutex);
          ferrum::gpu::command_list* one[] = {&list};
          ok = device.queue().submit(one, device.queue().last_submitted() + 1).has_value();
        }
        if (!ok) failures.fetch_add(1);
      }
    });
  }
  for (std::thread& r : recorders) r.join();
  REQUIRE(failures.load() == 0);
  require_reached(device.queue().timeline(), threads * lists_per_thread);
  std::size_t wrong = 0;
  for (std::size_t slot = 0; slot < threads * lists_per_thread; ++slot) {
    for (std::size_t w = 0; w < region / 4; ++w)
      wrong += word_at(*arena, slot * region / 4 + w) !=
               pattern_word(static_cast<std::uint32_t>(slot), static_cast<std::uint32_t>(w));
  }
  CHECK(wrong == 0);
  lists.clear();
  writer.reset();
  arena.reset();
  s.finish();
}
