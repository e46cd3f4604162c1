// mapped_memory_race.cpp — not a test of ferrum but of the ThreadSanitizer
// suppressions (tests/sanitizers/tsan.supp): the host writes an arena's
// mapped bytes while a submission on lavapipe copies them, the race ferrum
// must never have (memory touched before its fence). It must be reported
// with the suppressions in force, which a suppression naming lavapipe's
// library would hide (its queue thread's copy is on one of the stacks).
// Run by ctest in the tsan preset only, which expects the report
// (tests/CMakeLists.txt); exits 77 without a Vulkan driver.
#include "ferrum/gpu/vulkan_device.hpp"

#include <chrono>
#include <cstdio>
#include <thread>

int main() {
  auto made = ferrum::gpu::create_vulkan_device({});
  if (!made) {
    std::fprintf(stderr, "mapped_memory_race: no Vulkan device: %s\n", made.error().what().c_str());
    return 77;
  }
  ferrum::gpu::device& device = **made;
  constexpr std::size_t bytes = std::size_t{1} << 20;
  auto source = device.create_arena(bytes, ferrum::memory_class::upload).value();
  auto target = device.create_arena(bytes, ferrum::memory_class::upload).value();
  auto list = device.create_command_list().value();
  list->begin().value();
  list->copy(source->range(0, bytes), target->range(0, bytes)).value();
  list->end().value();
  ferrum::gpu::command_list* const lists[] = {list.get()};
  const std::uint64_t value = device.queue().submit_next(lists).value();
  // The race: the host writes what the copy reads, before the copy's value.
  volatile unsigned char* host = reinterpret_cast<volatile unsigned char*>(source->bytes().data());
  for (std::size_t i = 0; i < bytes; i += 64) host[i] = 1;
  while (device.queue().timeline().completed() < value) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::printf("mapped_memory_race: no report (the suppressions hid the race, or it was not seen)\n");
  return 0;
}
