// ferrum/memory_class.hpp — how the host touches a pool's memory, and so
// which memory the GPU keeps it in (docs/design.md, "Memory classes").
//
// `device`: the GPU only (invocation workspace, persistent history), kept in
// device-local memory the host never maps. `upload`: the host writes, the GPU
// reads (binding slots, parameters). `readback`: the GPU writes, the host
// reads (outputs). `imported`: the engine's own buffers (a mesh, a staging
// buffer, a readback target), which ferrum never allocates: each wave names
// them (wave_request::imports), and ferrum orders their uses like lane
// memory. Shared by binding/ (a plan's pools) and gpu/ (arenas), which do
// not know each other.
//
//   ferrum::memory_class c = ferrum::memory_class::readback;
//   std::string_view name = ferrum::to_string(c);  // "readback"
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ferrum {

enum class memory_class : std::uint8_t { device, upload, readback, imported };

// Every class, in enum order.
inline constexpr std::array<memory_class, 4> memory_classes{memory_class::device, memory_class::upload,
                                                            memory_class::readback, memory_class::imported};

// The number of classes: arrays indexed by class have this many entries.
inline constexpr std::size_t memory_class_count = memory_classes.size();

// "device", "upload", "readback" or "imported".
[[nodiscard]] constexpr std::string_view to_string(memory_class c) noexcept {
  switch (c) {
    case memory_class::device:
      return "device";
    case memory_class::upload:
      return "upload";
    case memory_class::readback:
      return "readback";
    case memory_class::imported:
      return "imported";
  }
  return "unknown";
}

// The class a name of to_string names; nullopt for any other string.
[[nodiscard]] constexpr std::optional<memory_class> memory_class_from_string(std::string_view name) noexcept {
  for (memory_class c : memory_classes)
    if (to_string(c) == name) return c;
  return std::nullopt;
}

// The class's position in memory_classes (an index for per-class arrays).
[[nodiscard]] constexpr std::size_t index_of(memory_class c) noexcept { return static_cast<std::size_t>(c); }

// Whether the host reads or writes memory of the class through ferrum
// (upload, readback); imported memory is the engine's to map.
[[nodiscard]] constexpr bool host_touches(memory_class c) noexcept {
  return c == memory_class::upload || c == memory_class::readback;
}

// Whether ferrum allocates memory of the class (all but imported).
[[nodiscard]] constexpr bool allocated(memory_class c) noexcept { return c != memory_class::imported; }

}  // namespace ferrum
