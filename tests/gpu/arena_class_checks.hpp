// What every device's arenas of a memory class must show (ferrum/gpu/arena.hpp),
// run on the null device and on Vulkan, in the unified and the discrete
// layout: which have host bytes, which are staged, and that host data reaches
// the GPU and back through device memory exactly when the staging copies run.
#pragma once

#include "test_namespace.hpp"

#include "gpu_test_support.hpp"

#include "ferrum/gpu/device.hpp"

#include <cstdint>

namespace ferrum::test {

// Each class's host bytes and staging in `discrete` layout or not.
inline void check_arena_classes(ferrum::gpu::device& device, bool discrete) {
  constexpr std::size_t bytes = 1024;
  auto on_device = require(device.create_arena(bytes, memory_class::device));
  auto upload = require(device.create_arena(bytes, memory_class::upload));
  auto readback = require(device.create_arena(bytes, memory_class::readback));
  auto shared = require(device.create_arena(bytes));
  CHECK(on_device->cls() == memory_class::device);
  CHECK(on_device->bytes().empty());
  CHECK(on_device->size() == bytes);
  CHECK_FALSE(on_device->staged());
  for (auto* a : {upload.get(), readback.get()}) {
    CHECK(a->bytes().size() == bytes);
    CHECK(a->staged() == discrete);
    for (std::size_t i = 0; i < bytes / 4; ++i) REQUIRE(word_at(*a, i) == 0u);  // zero-filled
  }
  CHECK(upload->cls() == memory_class::upload);
  CHECK(readback->cls() == memory_class::readback);
  CHECK(shared->bytes().size() == bytes);
  CHECK_FALSE(shared->staged());
}

// Host words written to an upload arena, copied by the GPU through a device
// arena into a readback arena, read back by the host: equal, with the
// staging copies where the arenas are staged. Without the stage-in copy on a
// staged layout the GPU sees none of them (`skip_stage_in`).
inline void check_round_trip(ferrum::gpu::device& device, bool skip_stage_in = false) {
  constexpr std::size_t words = 256;
  auto upload = require(device.create_arena(words * 4, memory_class::upload));
  auto on_device = require(device.create_arena(words * 4, memory_class::device));
  auto readback = require(device.create_arena(words * 4, memory_class::readback));
  for (std::size_t i = 0; i < words; ++i) set_word(*upload, i, 0xabc00000u + static_cast<std::uint32_t>(i));
  auto list = require(device.create_command_list());
  const std::uint64_t value = submit(device, *list, [&](ferrum::gpu::command_list& l) {
    if (upload->staged() && !skip_stage_in) require(l.stage(*upload));
    require(l.copy(upload->whole(), on_device->whole()));
    require(l.copy(on_device->whole(), readback->whole()));
    if (readback->staged()) require(l.stage(*readback));
  });
  require_reached(device.queue().timeline(), value);
  require(readback->invalidate());
  std::size_t equal = 0;
  for (std::size_t i = 0; i < words; ++i)
    if (word_at(*readback, i) == 0xabc00000u + static_cast<std::uint32_t>(i)) ++equal;
  CHECK(equal == (skip_stage_in ? 0 : words));
}

// stage and barrier's errors, and barrier counted.
inline void check_stage_errors(ferrum::gpu::device& device, bool discrete) {
  auto upload = require(device.create_arena(256, memory_class::upload));
  auto on_device = require(device.create_arena(256, memory_class::device));
  auto list = require(device.create_command_list());
  CHECK(list->stage(*upload).error().code == errc::command_list_state);
  CHECK(list->barrier().error().code == errc::command_list_state);
  require(list->begin());
  CHECK(list->stage(*on_device).error().code == errc::not_staged);
  if (!discrete) CHECK(list->stage(*upload).error().code == errc::not_staged);
  const std::size_t before = list->barriers();
  require(list->barrier());
  CHECK(list->barriers() == before + 1);
  if (discrete) {
    // A guarded arena needs a grant of it whole.
    upload->guard();
    const ferrum::gpu::arena_range half[] = {upload->range(0, 128)};
    list->grant(half);
    const auto refused = list->stage(*upload);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == errc::range_not_granted);
    const ferrum::gpu::arena_range whole[] = {upload->whole()};
    list->grant(whole);
    require(list->stage(*upload));
    CHECK(list->size() == 1);
  }
  require(list->end());
}

}  // namespace ferrum::test
