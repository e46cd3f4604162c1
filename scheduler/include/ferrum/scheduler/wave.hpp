// ferrum/scheduler/wave.hpp — what a submission wave is asked to do, what
// its encoders see, and what it reports.
//
//   ferrum::wave_request request{.bucket_class = "step", .extent = {1, 48, 1}};
//   auto encode = [&](const ferrum::encode_context& c) {
//     c.commands.fill(c.slot, 0u).value();   // the node's slot, on its lane
//   };
//   auto [ec, report] = co_await scheduler.async_submit(request, encode, asio::as_tuple(asio::use_awaitable));
#pragma once

#include "ferrum/binding/execution_binding.hpp"
#include "ferrum/gpu/command_list.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ferrum {

// A wave's size class: it runs in the smallest bucket of `bucket_class`
// whose capacity covers `extent` in every dimension (the smallest by the
// product of dimensions, ties by bucket id).
struct wave_request {
  // Must stay valid only until async_submit returns.
  std::string_view bucket_class;
  bucket_capacity extent{1, 1, 1};
};

// What an encoder gets for one node of one wave.
struct encode_context {
  std::size_t node_index;
  // The node's binding: its slot's bytes on the wave's lane, and nothing
  // else; null for a node that owns no binding resource.
  const node_binding* binding;
  // The same slot as a range of the lane's arena, for GPU commands (empty
  // when the node has no slot).
  gpu::arena_range slot;
  // The node's command list on this lane, begun; the scheduler ends and
  // submits it. Recording into it is how an encoder puts GPU work into the
  // wave.
  gpu::command_list& commands;
  std::uint64_t wave;
  const bucket_id& bucket;
  std::uint32_t lane;
  // With scheduler_options::replay: `commands` still holds what this node's
  // encoder recorded in an earlier wave on this lane, and is submitted again
  // as it is. The encoder records nothing (recording fails with
  // command_list_state) and only writes the node's binding bytes, which sit
  // where they sat then. False: record the node's commands afresh.
  bool replay = false;
  // Set once the wave is cancelled (terminal or partial): the remaining
  // nodes are skipped and nothing is submitted, so an encoder that suspends
  // (a coroutine) may stop early. Read it through cancelled().
  const std::atomic<bool>* cancel = nullptr;

  [[nodiscard]] bool cancelled() const noexcept { return cancel != nullptr && cancel->load(std::memory_order_relaxed); }
};

// An encoder is any callable `void(const encode_context&)`, called once per
// node of every wave on the scheduler's executor, for different nodes of a
// wave concurrently. It may throw: the wave then fails with encoder_failed,
// naming the node and the exception's message, and submits nothing.

// The phases of a wave, in order; each stamped when it ends.
enum class wave_phase : std::uint8_t { acquire, bind, encode, submit, fence, release };
inline constexpr std::size_t wave_phase_count = 6;
[[nodiscard]] std::string_view to_string(wave_phase phase) noexcept;

struct wave_report {
  // The wave's id in its scheduler, from 1.
  std::uint64_t wave = 0;
  // The bucket it ran in (owned by the compiled program), or null when none
  // was picked.
  const bucket_id* bucket = nullptr;
  std::uint32_t lane = 0;
  std::size_t nodes = 0;
  // The timeline value its submission signals; 0 when nothing was submitted.
  std::uint64_t submitted_value = 0;
  // When the wave started and when each phase ended (unset: not reached).
  std::chrono::steady_clock::time_point started;
  std::array<std::optional<std::chrono::steady_clock::time_point>, wave_phase_count> ended{};
  // For encoder_failed: the node whose encoder threw, and its message.
  std::optional<std::size_t> failed_node;
  std::string message;
};

}  // namespace ferrum
