// ferrum/queue_kind.hpp — the kinds of GPU queue a node may run on.
//
// A plan's node names one (`"queue": "transfer"` or `"async-compute"` in a
// ferrum.plan.v2 file; compute when absent), and a device maps each kind onto
// one of the queues it has: the null device gives each kind its own worker, a
// Vulkan device with a single queue runs every kind on it. `compute` is the
// main queue (graphics where the device draws: raster nodes and `present` run
// only there); `async_compute` is a second compute queue beside it (a family
// other than the main one where the device has one, else the main queue);
// `transfer` copies. Shared by binding/ (the plan) and gpu/
// (the device), which do not know each other.
//
//   ferrum::queue_kind kind = ferrum::queue_kind::transfer;
//   std::string_view name = ferrum::to_string(kind);  // "transfer"
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ferrum {

// New kinds go at the end: a plan's hash writes the kind as its number.
enum class queue_kind : std::uint8_t { compute, transfer, async_compute };

// Every kind, in enum order.
inline constexpr std::array<queue_kind, 3> queue_kinds{queue_kind::compute, queue_kind::transfer,
                                                       queue_kind::async_compute};

// The number of kinds: arrays indexed by kind have this many entries.
inline constexpr std::size_t queue_kind_count = queue_kinds.size();

// "compute", "transfer" or "async-compute".
[[nodiscard]] constexpr std::string_view to_string(queue_kind kind) noexcept {
  switch (kind) {
    case queue_kind::compute:
      return "compute";
    case queue_kind::transfer:
      return "transfer";
    case queue_kind::async_compute:
      return "async-compute";
  }
  return "unknown";
}

// The kind a name of to_string names; nullopt for any other string.
[[nodiscard]] constexpr std::optional<queue_kind> queue_kind_from_string(std::string_view name) noexcept {
  for (queue_kind kind : queue_kinds)
    if (to_string(kind) == name) return kind;
  return std::nullopt;
}

// Whether the kind runs compute work (dispatches, compute-shader stages):
// compute and async_compute; transfer records copies and fills only.
[[nodiscard]] constexpr bool computes(queue_kind kind) noexcept { return kind != queue_kind::transfer; }

// The kind's position in queue_kinds (an index for per-kind arrays).
[[nodiscard]] constexpr std::size_t index_of(queue_kind kind) noexcept { return static_cast<std::size_t>(kind); }

// A set of kinds, a bit each (1 << index_of(kind)): the queues a buffer or
// image may be used on (gpu::arena::queues, gpu::image::queues).
[[nodiscard]] constexpr std::uint32_t queue_bit(queue_kind kind) noexcept { return 1u << index_of(kind); }
inline constexpr std::uint32_t every_queue_kind = (1u << queue_kind_count) - 1;

// "compute, async-compute": the kinds of a set, in enum order.
[[nodiscard]] inline std::string queue_kind_names(std::uint32_t kinds) {
  std::string out;
  for (queue_kind kind : queue_kinds)
    if ((kinds & queue_bit(kind)) != 0) out += (out.empty() ? "" : ", ") + std::string(to_string(kind));
  return out;
}

}  // namespace ferrum
