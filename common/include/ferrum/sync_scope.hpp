// ferrum/sync_scope.hpp — what a barrier waits for and what it blocks: the
// pipeline stages and memory accesses on each side of it (docs/design.md,
// "Barriers"). The compiler derives one per barrier from the accesses a plan
// declares (ferrum/binding/barriers.hpp); a command list records it
// (gpu::command_list::begin), a Vulkan device as a synchronization2
// barrier. Shared by binding/ and gpu/, which do not know each other.
//
//   ferrum::barrier_scope b;
//   b.before = {ferrum::stages::compute_shader, ferrum::accesses::storage_write};
//   b.after = {ferrum::stages::fragment_shader, ferrum::accesses::sampled_read};
//   std::string text = ferrum::scope_text(b);  // "compute-shader storage-write -> fragment-shader sampled-read"
#pragma once

#include <cstdint>
#include <string>

namespace ferrum {

// Bits of pipeline stages, in the order a draw passes them; compute and
// transfer stand apart. The values are ferrum's, not Vulkan's.
using stage_mask = std::uint32_t;
namespace stages {
inline constexpr stage_mask draw_indirect = 1U << 0;  // indirect arguments (draws' and dispatches')
inline constexpr stage_mask vertex_input = 1U << 1;
inline constexpr stage_mask vertex_shader = 1U << 2;
inline constexpr stage_mask fragment_shader = 1U << 3;
inline constexpr stage_mask early_fragment_tests = 1U << 4;
inline constexpr stage_mask late_fragment_tests = 1U << 5;
inline constexpr stage_mask color_attachment_output = 1U << 6;
inline constexpr stage_mask compute_shader = 1U << 7;
inline constexpr stage_mask transfer = 1U << 8;
inline constexpr stage_mask host = 1U << 9;
inline constexpr stage_mask count = 10;  // bits in use
// The shader stages of a draw, and every stage a draw passes.
inline constexpr stage_mask draw_shaders = vertex_shader | fragment_shader;
inline constexpr stage_mask fragment_tests = early_fragment_tests | late_fragment_tests;
inline constexpr stage_mask graphics =
    draw_indirect | vertex_input | draw_shaders | fragment_tests | color_attachment_output;
inline constexpr stage_mask all = (1U << count) - 1;
}  // namespace stages

// Bits of memory accesses.
using access_mask = std::uint32_t;
namespace accesses {
inline constexpr access_mask indirect_read = 1U << 0;
inline constexpr access_mask index_read = 1U << 1;
inline constexpr access_mask vertex_read = 1U << 2;
inline constexpr access_mask uniform_read = 1U << 3;
inline constexpr access_mask sampled_read = 1U << 4;
inline constexpr access_mask storage_read = 1U << 5;
inline constexpr access_mask storage_write = 1U << 6;
inline constexpr access_mask color_read = 1U << 7;
inline constexpr access_mask color_write = 1U << 8;
inline constexpr access_mask depth_read = 1U << 9;
inline constexpr access_mask depth_write = 1U << 10;
inline constexpr access_mask transfer_read = 1U << 11;
inline constexpr access_mask transfer_write = 1U << 12;
inline constexpr access_mask host_read = 1U << 13;
inline constexpr access_mask host_write = 1U << 14;
inline constexpr access_mask count = 15;  // bits in use
inline constexpr access_mask writes = storage_write | color_write | depth_write | transfer_write | host_write;
inline constexpr access_mask all = (1U << count) - 1;
}  // namespace accesses

// Stages and the accesses made in them: one side of a barrier.
struct sync_scope {
  stage_mask stages = 0;
  access_mask accesses = 0;

  sync_scope& operator|=(const sync_scope& other) noexcept {
    stages |= other.stages;
    accesses |= other.accesses;
    return *this;
  }
  [[nodiscard]] bool empty() const noexcept { return stages == 0; }
  // Whether every stage and access of `other` is in this scope.
  [[nodiscard]] bool covers(const sync_scope& other) const noexcept {
    return (other.stages & ~stages) == 0 && (other.accesses & ~accesses) == 0;
  }
  friend bool operator==(const sync_scope&, const sync_scope&) = default;
};

// A barrier: every command before it whose stages are in `before` completes
// (and its writes among `before.accesses` are made available) before any
// command after it runs its stages in `after` (those writes visible to the
// accesses of `after`). Commands of other stages pass it either way. Only
// the writes of `before` matter: a read needs waiting for, not flushing.
struct barrier_scope {
  sync_scope before;
  sync_scope after;

  // A barrier that orders everything: every stage and access on both sides.
  [[nodiscard]] static constexpr barrier_scope full() noexcept {
    return {{stages::all, accesses::all}, {stages::all, accesses::all}};
  }
  barrier_scope& operator|=(const barrier_scope& other) noexcept {
    before |= other.before;
    after |= other.after;
    return *this;
  }
  [[nodiscard]] bool empty() const noexcept { return before.empty() && after.empty(); }
  [[nodiscard]] bool covers(const barrier_scope& other) const noexcept {
    return before.covers(other.before) && after.covers(other.after);
  }
  friend bool operator==(const barrier_scope&, const barrier_scope&) = default;
};

// "compute-shader|transfer" ("none" for 0): the names of a mask's bits, in
// bit order; "all" for every bit.
[[nodiscard]] std::string stage_mask_names(stage_mask mask);
// "storage-write|transfer-write" ("none" for 0, "all" for every bit).
[[nodiscard]] std::string access_mask_names(access_mask mask);
// "<stages> <accesses>" of one side ("nothing" where it has neither).
[[nodiscard]] std::string scope_text(const sync_scope& s);
// "<before> -> <after>".
[[nodiscard]] std::string scope_text(const barrier_scope& b);

}  // namespace ferrum
