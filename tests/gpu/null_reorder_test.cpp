// Barriers at the edges of a list under null_device_options::reorder_unordered:
// a list that ends with a barrier (the scheduler's stage-in list: stage, then
// barrier) orders the next lists of its submission after it; one that opens
// with a barrier (stage-out: barrier, then stage) orders itself after the
// lists before it. Each case also runs without the barrier, which must show
// the reordering, so the checks can fail.
#include "null_device_support.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>

namespace {

using ferrum::gpu::list_opening;

std::unique_ptr<ferrum::gpu::null_device> reordering_device(bool discrete) {
  ferrum::gpu::null_device_options options;
  options.reorder_unordered = true;
  options.discrete_layout = discrete;
  return test::null_device(options);
}

// Lists opened by_hazards over guarded arenas, as the scheduler's nodes are:
// nothing but the barriers the test records orders them.
std::unique_ptr<ferrum::gpu::command_list> hazard_list(ferrum::gpu::device& device,
                                                       std::span<const ferrum::gpu::arena_range> granted) {
  auto list = test::require(device.create_command_list());
  list->grant(granted);
  test::require(list->begin(list_opening::by_hazards));
  return list;
}

// Zeroes the GPU's memory of `arenas` (granted in `granted`) and waits, so
// that the next run sees only its own data.
void zero(ferrum::gpu::device& device, std::span<const ferrum::gpu::arena_range> granted,
          std::initializer_list<const ferrum::gpu::arena*> arenas) {
  auto clear = hazard_list(device, granted);
  for (const ferrum::gpu::arena* a : arenas) test::require(clear->fill(a->whole(), 0u));
  test::require(clear->end());
  ferrum::gpu::command_list* cleared[] = {clear.get()};
  test::require_reached(device.queue().timeline(), test::require(device.queue().submit_next(cleared)));
}

}  // namespace

TEST_CASE("null device: with reorder_unordered a list's trailing barrier orders the next lists after it", "[gpu]") {
  auto device = reordering_device(false);
  auto source = test::require(device->create_arena(64));
  auto target = test::require(device->create_arena(64));
  source->guard();
  target->guard();
  const std::array granted{source->whole(), target->whole()};
  // {fill source with 1; barrier?} then {copy source -> target} in one
  // submission, or in two; what the target's first and last words hold.
  const auto run = [&](bool trailing_barrier, bool one_submission) {
    auto fill = hazard_list(*device, granted);
    test::require(fill->fill(source->whole(), 1u));
    if (trailing_barrier) test::require(fill->barrier());
    test::require(fill->end());
    auto copy = hazard_list(*device, granted);
    test::require(copy->copy(source->whole(), target->whole()));
    test::require(copy->end());
    ferrum::gpu::command_list* both[] = {fill.get(), copy.get()};
    ferrum::gpu::command_list* first[] = {fill.get()};
    ferrum::gpu::command_list* second[] = {copy.get()};
    if (one_submission) {
      test::require_reached(device->queue().timeline(), test::require(device->queue().submit_next(both)));
    } else {
      (void)test::require(device->queue().submit_next(first));
      test::require_reached(device->queue().timeline(), test::require(device->queue().submit_next(second)));
    }
    const std::array words{test::word_at(*target, 0), test::word_at(*target, 15)};
    // Back to zero for the next run, through the device (the arenas are
    // guarded, and the host's writes would race nothing here anyway).
    zero(*device, granted, {source.get(), target.get()});
    return words;
  };
  using words = std::array<std::uint32_t, 2>;
  CHECK(run(true, true) == words{1u, 1u});
  // Without it the copy, unordered, runs first and copies zeros.
  CHECK(run(false, true) == words{0u, 0u});
  // Later submissions run after earlier ones whole, barrier or not.
  CHECK(run(true, false) == words{1u, 1u});
  CHECK(run(false, false) == words{1u, 1u});
}

TEST_CASE("null device: with reorder_unordered stage-in and stage-out lists order the node lists between them",
          "[gpu][arena]") {
  auto device = reordering_device(true);
  constexpr std::size_t words = 16;
  auto upload = test::require(device->create_arena(words * 4, ferrum::memory_class::upload));
  auto readback = test::require(device->create_arena(words * 4, ferrum::memory_class::readback));
  REQUIRE(upload->staged());
  REQUIRE(readback->staged());
  upload->guard();
  readback->guard();
  const std::array granted{upload->whole(), readback->whole()};
  // stage-in {stage(upload); barrier?}, node {copy upload -> readback},
  // stage-out {barrier?; stage(readback)}, one submission; how many words of
  // the readback arena's host bytes came through.
  const auto round_trip = [&](bool in_barrier, bool out_barrier) {
    for (std::size_t i = 0; i < words; ++i) {
      test::set_word(*upload, i, 0x5100u + static_cast<std::uint32_t>(i));
      test::set_word(*readback, i, 0);
    }
    auto stage_in = hazard_list(*device, granted);
    test::require(stage_in->stage(*upload));
    if (in_barrier) test::require(stage_in->barrier());
    test::require(stage_in->end());
    auto node = hazard_list(*device, granted);
    test::require(node->copy(upload->whole(), readback->whole()));
    test::require(node->end());
    auto stage_out = hazard_list(*device, granted);
    if (out_barrier) test::require(stage_out->barrier());
    test::require(stage_out->stage(*readback));
    test::require(stage_out->end());
    ferrum::gpu::command_list* lists[] = {stage_in.get(), node.get(), stage_out.get()};
    test::require_reached(device->queue().timeline(), test::require(device->queue().submit_next(lists)));
    test::require(readback->invalidate());
    std::size_t through = 0;
    for (std::size_t i = 0; i < words; ++i)
      if (test::word_at(*readback, i) == 0x5100u + static_cast<std::uint32_t>(i)) ++through;
    zero(*device, granted, {upload.get(), readback.get()});
    return through;
  };
  CHECK(round_trip(true, true) == words);
  // Without the stage-in barrier the copy runs before the stage-in copy and
  // reads the GPU's zeros; without the stage-out one the stage-out copy runs
  // before the node's copy.
  CHECK(round_trip(false, true) == 0);
  CHECK(round_trip(true, false) == 0);
}
