// Barriers of a scope (ferrum/sync_scope.hpp) on lavapipe with
// synchronization validation: the barriers a list records between its
// commands (a fill then a dispatch, a dispatch then a copy), a list opened
// with a scope, and layout changes of a sub-range of an image, all precise,
// keep validation silent and the data right; an opening scope without the
// consumer's stage is reported (between two lists of one submission, which
// the layers see with VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT).
#include "vulkan_test_support.hpp"

#include "image_kernel_checks.hpp"
#include "image_range_checks.hpp"

#include "ferrum/gpu/builtin_kernels.hpp"

#include <array>
#include <cstdint>
#include <string>

namespace {

using ferrum::barrier_scope;
using ferrum::gpu::command_list;
using ferrum::gpu::list_opening;
using vulkan_test::require;
namespace stages = ferrum::stages;
namespace accesses = ferrum::accesses;

}  // namespace

TEST_CASE("vulkan barriers: a list's precise barriers (fill then dispatch, dispatch then copy), validation silent",
          "[vulkan][barriers]") {
  vulkan_test::session s;
  if (!s.open()) return;
  {
    auto a = require(s.device->create_arena(4096));
    auto affine = require(s.device->create_kernel(ferrum::gpu::builtin::affine()));
    auto list = require(s.device->create_command_list());
    const std::array granted{a->whole()};
    list->grant(granted);
    require(list->begin(list_opening::by_hazards));
    require(list->fill(a->range(0, 1024), 3u));
    require(list->dispatch(*affine, a->range(0, 1024), {}, std::array<std::uint32_t, 2>{2, 1}));
    CHECK(list->last_barrier() ==
          barrier_scope{{stages::transfer, accesses::transfer_write},
                        {stages::compute_shader, accesses::storage_read | accesses::storage_write}});
    require(list->copy(a->range(0, 1024), a->range(2048, 1024)));
    CHECK(list->last_barrier().after ==
          ferrum::sync_scope{stages::transfer, accesses::transfer_read | accesses::transfer_write});
    require(list->end());
    command_list* const lists[] = {list.get()};
    vulkan_test::require_reached(s.device->queue().timeline(), require(s.device->queue().submit_next(lists)));
    CHECK(vulkan_test::word_at(*a, 0) == 7u);
    CHECK(vulkan_test::word_at(*a, 512) == 7u);
    CHECK(vulkan_test::word_at(*a, 767) == 7u);
  }
  s.finish();
}

TEST_CASE("vulkan barriers: layout changes of each level of an image in precise barriers, validation silent",
          "[vulkan][barriers][image]") {
  vulkan_test::session s;
  if (!s.open()) return;
  {
    namespace gpu = ferrum::gpu;
    using ferrum::image_layout;
    const gpu::image_spec spec{ferrum::image_format::rgba32_float, 4, 4, 2, 1, ferrum::test::kernel_image_usage};
    auto memory = ferrum::test::make_images(*s.device, std::array{spec});
    const gpu::image& img = memory->at(0);
    const std::uint64_t bytes = gpu::copy_bytes(spec);
    auto a = require(s.device->create_arena(4 * bytes));
    for (std::size_t i = 0; i < bytes / 4; ++i) ferrum::test::set_word(*a, i, 100u + static_cast<std::uint32_t>(i));
    auto list = require(s.device->create_command_list());
    const std::array granted{a->whole()};
    list->grant(granted);
    const gpu::image_subresources level0{0, 1, 0, 1};
    require(list->begin(list_opening::by_hazards));
    require(list->transition(img, image_layout::undefined, image_layout::transfer_dst, level0));
    require(list->copy(a->range(0, bytes), img, image_layout::transfer_dst));
    require(list->transition(img, image_layout::transfer_dst, image_layout::transfer_src, level0));
    // Level 1 alone, in the same barrier.
    require(list->transition(img, image_layout::undefined, image_layout::general, {1, 1, 0, 1}));
    require(list->copy(img, image_layout::transfer_src, a->range(2 * bytes, bytes)));
    CHECK(list->last_barrier() ==
          barrier_scope{{stages::transfer, accesses::transfer_read | accesses::transfer_write},
                        {stages::transfer, accesses::transfer_read | accesses::transfer_write}});
    require(list->end());
    command_list* const lists[] = {list.get()};
    vulkan_test::require_reached(s.device->queue().timeline(), require(s.device->queue().submit_next(lists)));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < bytes / 4; ++i)
      wrong += vulkan_test::word_at(*a, bytes / 2 + i) != 100u + static_cast<std::uint32_t>(i) ? 1 : 0;
    CHECK(wrong == 0);
  }
  s.finish();
}

TEST_CASE("vulkan barriers: an opening scope without the consumer's stage is reported, the right one not",
          "[vulkan][barriers][validation]") {
  // A dispatch writes a range in one list; the next list of the submission
  // opens with a scope and copies it.
  const barrier_scope right{{stages::compute_shader, accesses::storage_write},
                            {stages::transfer, accesses::transfer_read}};
  const barrier_scope weakened{{stages::compute_shader, accesses::storage_write},
                               {stages::compute_shader, accesses::storage_read}};
  for (const bool weak : {false, true}) {
    INFO((weak ? "after-scope without the copy's transfer stage" : "the right scope"));
    vulkan_test::session s;
    if (!s.open()) return;
    {
      auto a = require(s.device->create_arena(4096));
      auto writer = require(s.device->create_kernel(ferrum::gpu::builtin::write_pattern()));
      auto produce = require(s.device->create_command_list());
      auto consume = require(s.device->create_command_list());
      const std::array granted{a->whole()};
      produce->grant(granted);
      consume->grant(granted);
      require(produce->begin(list_opening::by_hazards));
      require(produce->dispatch(*writer, a->range(0, 1024), {}, std::array<std::uint32_t, 1>{9}));
      require(produce->end());
      require(consume->begin(weak ? weakened : right));
      require(consume->copy(a->range(0, 1024), a->range(2048, 1024)));
      require(consume->end());
      command_list* const lists[] = {produce.get(), consume.get()};
      vulkan_test::require_reached(s.device->queue().timeline(), require(s.device->queue().submit_next(lists)));
      // lavapipe runs in order: the data is right either way.
      CHECK(vulkan_test::word_at(*a, 512) == ferrum::gpu::builtin::pattern_word(9, 0));
    }
    const std::string log = s.finish_reported();
    INFO(log);
    CHECK((log.find("SYNC-HAZARD-READ-AFTER-WRITE") != std::string::npos) == weak);
    if (!weak) CHECK(log.empty());
  }
}
