// event_lists.hpp — a split barrier on a Vulkan device, for the tests that
// check how the device records events (synchronization2, and
// synchronization1 on an adopted device without it): a producer list fills
// and dispatches into [0, 1024) and sets an event, two lists between it and
// the consumer fill ranges of their own, the consumer waits for the event
// and copies [0, 1024) to [2048, 3072); the last list resets the event
// after a barrier. `weak`: the wait's (and set's) `after` names the compute
// stage instead of the copy's transfer stage, which synchronization
// validation should report as a read after write.
#pragma once

#include "vulkan_test_support.hpp"

#include "ferrum/gpu/builtin_kernels.hpp"

#include <array>
#include <memory>

namespace vulkan_test {

// Runs the lists on `device` and returns the copied word (7: the copy came
// after the producer's dispatch).
inline std::uint32_t run_event_lists(ferrum::gpu::device& device, bool weak) {
  namespace stages = ferrum::stages;
  namespace accesses = ferrum::accesses;
  using ferrum::gpu::command_list;
  auto a = require(device.create_arena(4096));
  auto affine = require(device.create_kernel(ferrum::gpu::builtin::affine()));
  auto event = require(device.create_event());
  const std::array granted{a->whole()};
  std::array<std::unique_ptr<command_list>, 4> lists;
  for (auto& l : lists) {
    l = require(device.create_command_list());
    l->grant(granted);
    require(l->begin(ferrum::gpu::list_opening::by_hazards));
  }
  const ferrum::barrier_scope scope{{stages::compute_shader, accesses::storage_write},
                                    {weak ? stages::compute_shader : stages::transfer, accesses::transfer_read}};
  require(lists[0]->fill(a->range(0, 1024), 3u));
  require(lists[0]->dispatch(*affine, a->range(0, 1024), {}, std::array<std::uint32_t, 2>{2, 1}));
  require(lists[0]->set_event(*event, scope));
  require(lists[1]->fill(a->range(1024, 512), 1u));
  require(lists[2]->fill(a->range(1536, 512), 2u));
  require(lists[3]->wait_event(*event, scope));
  require(lists[3]->copy(a->range(0, 1024), a->range(2048, 1024)));
  require(lists[3]->barrier());
  require(lists[3]->reset_event(*event));
  for (auto& l : lists) require(l->end());
  command_list* const submitted[] = {lists[0].get(), lists[1].get(), lists[2].get(), lists[3].get()};
  require_reached(device.queue().timeline(), require(device.queue().submit_next(submitted)));
  return word_at(*a, 512);
}

}  // namespace vulkan_test
